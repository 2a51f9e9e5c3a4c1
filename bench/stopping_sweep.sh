#!/usr/bin/env bash
# The stopping rule on one GPU: the 16-shape reference A/A sweep of bench/aa_sweep.sh (cuBLASLt,
# builds cached) with the former rule and with stopping on the precision of the median, each
# ROUNDS times, alternating (reversed in even rounds) so a GPU that warms up over the call weighs
# on both alike. Prints each sweep's table (aa_sweep.sh), then one line per sweep in WORK — this
# call's and earlier calls' with the same WORK — and per variant the medians over its sweeps and
# how many A/A intervals held 1 (target about 95 %, counted over at least 5 sweeps).
#
# Variants:  before  $BEFORE/abharness with its defaults (a build of the former default rule:
#                    stdrel, 0.5 % noise or converged, after 0.2 s of summed kernel time)
#            after   $AFTER/abharness with its defaults (precision: a tenth of the 1 % band)
#            tight   $AFTER/abharness --median-precision 0.0005 (only with TIGHT=1)
# usage: BEFORE=<bin dir> AFTER=<bin dir> [ROUNDS=3] [TIGHT=1] [WORK=<dir>] bench/stopping_sweep.sh [precision]
#        SUMMARY_ONLY=1 prints the summary of the sweeps already in WORK and runs nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prec=${1:-bf16}
rounds=${ROUNDS:-3}
work=${WORK:-$(mktemp -d /tmp/abh-stopping.XXXXXX)}
mkdir -p "$work"
export WORK=$work

variants=(before after)
[ "${TIGHT:-0}" = 1 ] && variants+=(tight)
bin_of() { case $1 in before) echo "${BEFORE:?BEFORE=<bin dir of the former build>}" ;; *) echo "${AFTER:?AFTER=<bin dir>}" ;; esac; }
flags_of() { case $1 in tight) echo "--gpus 0 --median-precision 0.0005" ;; *) echo "--gpus 0" ;; esac; }

if [ "${SUMMARY_ONLY:-0}" != 1 ]; then
  nvidia-smi -L >/dev/null 2>&1 || { echo "stopping_sweep: no GPU here (nvidia-smi -L failed)" >&2; exit 77; }
  # Fill the build cache once per binary (a two-shape run), as bench/throughput.sh does.
  for v in "${variants[@]}"; do
    [ -f "$work/cache_$v.done" ] && continue
    BIN=$(bin_of "$v") SHAPES_M=1 RUN_TAG=cache_$v ABH_FLAGS="--gpus 0 --max-time 0.05" \
      bash "$root/bench/aa_sweep.sh" "$prec" >"$work/cache_$v.txt" 2>&1 || { cat "$work/cache_$v.txt"; exit 1; }
    touch "$work/cache_$v.done"
  done
  call=$(date +%H%M%S)
  for r in $(seq 1 "$rounds"); do
    order=("${variants[@]}")
    if [ $((r % 2)) -eq 0 ]; then
      order=()
      for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[i]}"); done
    fi
    for v in "${order[@]}"; do
      tag=${v}_${call}_$r
      BIN=$(bin_of "$v") RUN_TAG=$tag ABH_FLAGS="$(flags_of "$v")" bash "$root/bench/aa_sweep.sh" "$prec" \
        | tee "$work/sweep_$tag.txt"
    done
  done
fi

python3 - "$work" "$prec" <<'PY'
import glob, json, os, re, statistics, sys
work, prec = sys.argv[1], sys.argv[2]
med = statistics.median
rows = {}
print(f"\n{'sweep':22} {'wall':>6} {'span':>6} {'measure/arm':>11} {'samples/arm':>11} {'max':>6} "
      f"{'worst drift':>11} {'CI holds 1':>10}  stop causes; verdicts")
for txt in sorted(glob.glob(f"{work}/sweep_*.txt"), key=os.path.getmtime):
    tag = os.path.basename(txt)[len("sweep_"):-len(".txt")]
    variant = tag.split("_")[0]
    text = open(txt).read()
    run = f"{work}/runs/aa_{prec}_{tag}"
    try:
        wall = float(re.search(r"sweep wall ([\d.]+) s", text).group(1))
        span = float(re.search(r"arms span ([\d.]+) s", text).group(1))
        rep = json.load(open(run + "/report.json"))
    except (AttributeError, OSError) as e:
        print(f"{tag:22} incomplete: {e}")
        continue
    results = [json.load(open(f)) for f in glob.glob(run + "/results/*/*.json")]
    counts = [len(r["measurement"]["samples_ns"]) for r in results]
    causes = {}
    for r in results:
        stop = r["measurement"].get("stop")
        c = stop["cause"] if stop else re.sub(r"^clock-adjusted ", "", r["measurement"]["stop_reason"]).split(" ")[0]
        causes[c] = causes.get(c, 0) + 1
    # Warm-up and sampling per arm, from the arms' logs: the tactic line to the samples line.
    measure = []
    for log in glob.glob(run + "/logs/*/*.out"):
        if ".warmup." in log:
            continue
        t = {}
        for line in open(log, errors="replace"):
            m = re.match(r"\[(\d+\.\d+) s\] (tactic|\d+ samples)", line)
            if m:
                t["tactic" if m.group(2) == "tactic" else "samples"] = float(m.group(1))
        if len(t) == 2:
            measure.append(t["samples"] - t["tactic"])
    worst, held, total, verdicts = 0.0, 0, 0, {}
    for s in rep["shapes"]:
        verdicts[s["verdict"]] = verdicts.get(s["verdict"], 0) + 1
        if s.get("drift"):
            worst = max(worst, abs(s["drift"] - 1))
        if s.get("ci"):
            total += 1
            held += s["ci"]["lo"] <= 1 <= s["ci"]["hi"]
    rows.setdefault(variant, []).append((wall, span, med(measure) if measure else float("nan"),
                                         med(counts), worst, held, total))
    print(f"{tag:22} {wall:5.1f}s {span:5.1f}s {med(measure) if measure else float('nan'):10.3f}s "
          f"{med(counts):11.0f} {max(counts):6d} {worst * 100:10.2f}% {held:4d}/{total:<5d}  {causes}; {verdicts}")
print("\nper variant (medians over its sweeps; coverage summed):")
for v, rs in rows.items():
    held, total = sum(r[5] for r in rs), sum(r[6] for r in rs)
    print(f"  {v:7} {len(rs)} sweeps: wall {med(r[0] for r in rs):5.1f} s, arms span {med(r[1] for r in rs):5.1f} s, "
          f"measure/arm {med(r[2] for r in rs):.3f} s, samples/arm {med(r[3] for r in rs):.0f}, "
          f"worst drift {med(r[4] for r in rs) * 100:.2f} % (max {max(r[4] for r in rs) * 100:.2f} %), "
          f"A/A intervals holding 1: {held}/{total} = {100 * held / max(total, 1):.1f} %")
PY
echo "work directory: $work"
