#!/usr/bin/env bash
# Issue 21 experiment (removed with its switch once the winner is the default): bf16 reference-grid
# A/A sweeps under each cache preparation named in VARIANTS (ABH_CACHE_EXPERIMENT values; "base" is
# today's), interleaved round by round so that the machine's drift over the hour falls on every
# variant alike. Stops starting sweeps once BUDGET_S seconds have passed. Then prints per variant:
# worst |drift| per sweep, `same`, intervals holding 1, sweep wall, and how far apart the medians
# of one arm's buffer sets are (samples split by index mod sets).
#
# usage: VARIANTS="base sets8 flush" ROUNDS=3 BUDGET_S=500 bench/cache_experiment.sh   (BIN as aa_sweep.sh)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export WORK=${WORK:-$(mktemp -d /tmp/abh-cache.XXXXXX)}
mkdir -p "$WORK"
start=$(date +%s)
for r in $(seq 1 "${ROUNDS:-3}"); do
  for v in ${VARIANTS:-base sets8 flush}; do
    if (($(date +%s) - start > ${BUDGET_S:-500})); then
      echo "budget spent: no more sweeps"
      break 2
    fi
    x=$v
    [[ $v == base ]] && x=
    ABH_CACHE_EXPERIMENT=$x RUN_TAG=${v}_r$r bash "$root/bench/aa_sweep.sh" bf16 >"$WORK/sweep_${v}_r$r.txt" 2>&1
    grep -E "^== |worst" "$WORK/sweep_${v}_r$r.txt" | sed "s/^/[$v r$r] /"
  done
done
python3 - "$WORK" <<'PY'
import collections, glob, json, os, re, statistics, sys
work = sys.argv[1]
rows = collections.OrderedDict()
for f in sorted(glob.glob(work + "/sweep_*_r*.txt"), key=os.path.getmtime):
    v, r = re.match(r".*/sweep_(.+)_r(\d+)\.txt", f).groups()
    run = f"{work}/runs/aa_bf16_{v}_r{r}"
    if not os.path.exists(run + "/report.json"):
        print(f"{v} r{r}: no report"); continue
    wall = float(re.search(r"sweep wall ([\d.]+) s", open(f).read()).group(1))
    rep = json.load(open(run + "/report.json"))
    worst, held, same, n, worst_shape, drifts = 0, 0, 0, 0, "", []
    for s in rep["shapes"]:
        if s.get("ci") is None: continue
        n += 1
        held += s["ci"]["lo"] <= 1 <= s["ci"]["hi"]
        same += s["verdict"] == "same"
        if s.get("drift"): drifts.append(abs(s["drift"] - 1))
        if s.get("drift") and abs(s["drift"] - 1) > worst:
            worst, worst_shape = abs(s["drift"] - 1), s["shape"]
    spreads, preps, samples = [], set(), []
    for g in glob.glob(run + "/results/*/*.json"):
        m = json.load(open(g))["measurement"]
        preps.add(re.sub(r" x \d+ bytes| \d+ bytes", "", m.get("cache_preparation", "?")))
        x = m["samples_ns"]; samples.append(len(x))
        k = re.match(r"rotation (\d+) sets", m.get("cache_preparation", ""))
        if k and m.get("clock", {}).get("rejected", 0) == 0:
            S = int(k.group(1))
            meds = [statistics.median(x[i::S]) for i in range(S) if len(x[i::S]) >= 5]
            if len(meds) >= 2: spreads.append(max(meds) / min(meds) - 1)
    rows.setdefault(v, []).append(dict(r=r, worst=worst, shape=worst_shape, held=held, same=same, n=n,
        wall=wall, mdrift=statistics.median(drifts), spread=statistics.median(spreads) if spreads else None,
        spread_max=max(spreads) if spreads else None, preps=sorted(preps),
        samples=statistics.median(samples)))
    print(f"{v} r{r}: worst {worst*100:.3f} % ({worst_shape}), median |drift| {statistics.median(drifts)*100:.3f} %, same {same}/{n}, held {held}/{n}, "
          f"wall {wall:.1f} s, samples/arm {statistics.median(samples):.0f}, prep {sorted(preps)}"
          + (f", set medians apart: median {statistics.median(spreads)*100:.3f} %, max {max(spreads)*100:.3f} %" if spreads else ""))
# Levels: each shape's median time per variant (median over that variant's A1 and A2 arms), in us.
levels = collections.defaultdict(dict)
for v in rows:
    per = collections.defaultdict(list)
    for g in glob.glob(f"{work}/runs/aa_bf16_{v}_r*/results/*/*.json"):
        if os.path.basename(g) in ("A1.json", "A2.json"):
            x = json.load(open(g))["measurement"]["samples_ns"]
            per[os.path.basename(os.path.dirname(g))].append(statistics.median(x) / 1e3)
    for shape, xs in per.items():
        levels[shape][v] = statistics.median(xs)
print()
print(f"{'shape (median us over A1/A2 arms)':36}" + "".join(f"{v:>10}" for v in rows))
for shape in sorted(levels, key=lambda s: (s.split("_")[1], int(s.split("_")[0][1:]))):
    print(f"{shape:36}" + "".join(f"{levels[shape].get(v, float('nan')):10.2f}" for v in rows))
print()
print(f"{'variant':8} {'sweeps':>6} {'median |drift| %':>16} {'worst |drift| per sweep (%)':34} {'same':>7} {'held 1':>13} {'wall s (each)':28}")
for v, rs in rows.items():
    n = sum(x["n"] for x in rs)
    print(f"{v:8} {len(rs):6} {statistics.median(x['mdrift'] for x in rs)*100:16.3f} {', '.join('%.2f' % (x['worst']*100) for x in rs):34} "
          f"{sum(x['same'] for x in rs):3}/{n:<3} {sum(x['held'] for x in rs):3}/{n:<3} ({100*sum(x['held'] for x in rs)/max(n,1):5.1f} %) "
          f"{', '.join('%.1f' % x['wall'] for x in rs)}")
PY
