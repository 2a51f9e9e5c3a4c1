# Arms stop on the precision of their median (docs/method.md#stopping-on-the-precision-of-the-median),
# end to end on the CPU example: an A/A of two sub-microsecond shapes with the default rule
# (0.29 and 0.75 us, read through the host clock's 10 ns tick on the 2-core machine; the 50-80 ns
# shapes this test once used cannot reach a 0.1 % median through that tick within the cap once
# their ties are spread, where their plain medians claimed +-0 %), which the former rule ran to
# the 100 000-sample cap on every arm, stops arms on precision
# below the cap once the 0.1 s floor is met; each result carries the rule's evidence (the median's interval, the
# target a tenth of the noise band, the count), consistent with its own samples, and report.md
# shows it. --median-precision overrides the target, and the worker takes the band from the plan.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat > grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m8_n8_k8", "params": { "m": 8, "n": 8, "k": 8 } },
  { "id": "m12_n12_k12", "params": { "m": 12, "n": 12, "k": 12 } } ] }
JSON
# --until-decided 0: the arms' stopping rule is under test, not the blocks the extension adds (an
# A/A of sub-microsecond shapes on a 2-core machine is often undecided after its first block).
args=(--repo repo --baseline HEAD --candidate HEAD --grid grid.json --runs-root runs --quiet
  --color never --warmup 1 --until-decided 0)

# check RUN TARGET: the arms stopped on precision, far below the cap, with consistent evidence.
# A median that sits where two timer readings meet can need more samples than any other (the
# interval spans both readings until one side wins): such an arm may reach the cap, and must say
# so; one whose interval narrows far more slowly than 1/sqrt(n) may stop short of it, saying why.
check() {
  python3 - "$1" "$2" <<'PY' || fail "$1: the arms did not stop on precision as expected (above)"
import glob, json, re, statistics, sys
run, target = sys.argv[1], float(sys.argv[2])

plan = json.load(open(run + "/plan.json"))
assert plan["settings"]["stopping"] == "precision", plan["settings"]
paths = sorted(glob.glob(run + "/results/*/*.json"))
assert len(paths) == 6, paths
counts, on_precision = [], 0
for path in paths:
    m = json.load(open(path))["measurement"]
    n, stop, ci = len(m["samples_ns"]), m["stop"], m["stop"]["interval"]
    where = f"{path}: {n} samples, {m['stop_reason']}"
    print(where)
    counts.append(n)
    assert stop["rule"] == "precision" and stop["samples"] == n, where
    assert stop["confidence"] == 0.95, (where, stop)
    # A candidate arm whose baseline arm read far off stops at a wider target, as the rule says
    # (worker/stopping.hpp, far_precision_target): under CI's load an A1 once read 1051 ns where
    # its A2 read 1232 and the B arm 1142. Only the run's own target is ever relaxed.
    if "relaxed: the median lies far beyond the band" in m["stop_reason"]:
        band = plan["schedule"]["decision"]["noise_band"]
        assert path.endswith("/B.json") and plan["settings"]["median_precision"] == 0, where
        assert target < stop["target"] <= band / 2, (where, stop)
    else:
        # A tenth of the band, in floating point (a tenth of 0.2 is 0.020000000000000004).
        assert abs(stop["target"] - target) < 1e-12, (where, stop)
    # The steady timer measures its clock's tick (core/stats/tick_ties.hpp: clock_tick_ns): where
    # it found one, the readings' median reads between the ticks, within a tick of the plain
    # median; where it found none, the median is the plain one.
    tick = m["clock"]["timer_resolution_ns"]
    plain = statistics.median(m["samples_ns"])
    if tick > 0:
        assert abs(stop["median_ns"] - plain) <= tick, (where, stop["median_ns"], plain, tick)
    else:
        assert stop["median_ns"] == plain, (where, stop["median_ns"], plain)
    med = stop["median_ns"]
    assert ci["lo_ns"] <= med <= ci["hi_ns"] and ci["inflation"] >= 1, (where, ci)
    if stop["cause"] == "precision":
        on_precision += 1
        assert n >= 10 and ci["half_width"] <= stop["target"], (where, ci)
        assert re.search(rf"target( \(.*\))? after {n} samples", m["stop_reason"]), where
    elif stop["cause"] == "converged":
        # Its interval narrowed too slowly to reach the target within the limits (loaded, a
        # 51 ns arm's went from +-8.8 % to +-7.5 % over 19,601 to 78,993 samples).
        assert ci["half_width"] > stop["target"] and "per doubling of the samples" in m["stop_reason"], where
    else:
        assert stop["cause"] == "sample_limit" and n == 100000, where
        assert ci["half_width"] > stop["target"] and "not met" in m["stop_reason"], (where, ci)
# The former rule ran every one of these arms to the 100 000-sample cap. Half of them is the most
# that is certain under load: a median between two timer readings (above) can hold any arm at the
# cap, and CI's loaded 2-core machine once held three of six there at a 0.02% target.
assert on_precision >= 3, f"{on_precision} of 6 arms stopped on precision"
# Below the cap: what they took is what fits in the 0.1 s wall-clock floor (61,697-77,121 samples
# of these 0.75 and 0.29 us shapes on this 2-core machine), then the rule stopped them.
assert statistics.median(counts) < 100000, counts
PY
}

# The default rule (a tenth of the band) at a 20 % band, whose tenth (2 %) these arms reach within
# the cap whatever state the 2-core machine is in. What the rule reaches depends on that state, not
# on the rule: right after the unit tests their samples came so dependent that arms ended at the cap
# with medians at +-0.13-0.33 %; run by CI beside another test, all six ended there at +-0.31-0.58 %.
expect_rc 0 "$ABH" run "${args[@]}" --run-id default --noise-band 0.2
check runs/default 0.02
# The reason, interval and all, is what report.md's per-arm table shows.
grep -qE "<= 2% target( \(.*\))? after" runs/default/report.md || fail "report.md lacks the stop reasons"
pass "A/A arms stop on precision far below the cap, with their evidence"

# The offline replay of the rule (bench/replay_stopping.cpp) reads these arms as the worker wrote
# them and replays the same rule on their samples: every arm, never longer than recorded, and both
# readings' verdicts for each shape.
replay="$ABH_BIN/../bench/abh_replay_stopping"
[ -x "$replay" ] || fail "bench/abh_replay_stopping was not built beside the binaries"
expect_rc 0 "$replay" --arms runs/default
python3 - "$T/last.out" <<'PY' || fail "the replay's output is not what it should be (above)"
import re, sys
out = open(sys.argv[1]).read()
print(out)
arms = re.findall(r"^  (m\d+_n\d+_k\d+) +(A1|A2|B) +(\d+) -> +(\d+) samples", out, re.M)
assert len(arms) == 6, arms
assert all(int(k) <= int(n) for _, _, n, k in arms), arms
for shape in ("m8_n8_k8", "m12_n12_k12"):
    assert len(re.findall(rf"^    {shape} +recorded \w+", out, re.M)) == 2, shape
assert re.search(r"verdicts that differ: \d+ \(first blocks\), \d+ \(every block\)", out)
PY
expect_rc 2 "$replay" --narrowing-from
pass "the rule replays offline on the recorded arms"

# The target follows --median-precision over the band; the band reaches the worker from the plan.
# 1.5% is neither the default target (0.1%) nor a tenth of the band given (0.5%), and loose enough
# that a loaded machine meets it (above: +-0.58 % at the cap).
expect_rc 0 "$ABH" run "${args[@]}" --run-id override --median-precision 0.015 --noise-band 0.05
[ "$(jget runs/override/plan.json 'j["settings"]["median_precision"]')" = 0.015 ] ||
  fail "the plan lacks --median-precision"
check runs/override 0.015
expect_rc 2 "$ABH" run "${args[@]}" --run-id bad --median-precision 1.5
grep -q -- "--median-precision: .1.5. is a fraction above 1" "$T/last.err" || fail "bad target: $(cat "$T/last.err")"
pass "--median-precision sets the target; out of range it is refused"

# A candidate far from its baseline (the example's faster kernel, about 1.13x on this shape) needs
# a less precise median: its target is a quarter of its distance beyond the band's edge, at most
# half the band, judged against the baseline arm written before it (A1); the baseline's arms keep
# the run's tenth of the band.
cat > far.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "m32_n32_k32", "params": { "m": 32, "n": 32, "k": 32 } } ] }
JSON
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid far.json \
  --runs-root runs --run-id far --quiet --color never --warmup 1 --until-decided 0
python3 - runs/far/results/m32_n32_k32 <<'PY' || fail "the far candidate's target is wrong (above)"
import json, math, statistics, sys
m = {a: json.load(open(f"{sys.argv[1]}/{a}.json"))["measurement"] for a in ("A1", "B", "A2")}
for a in ("A1", "A2"):
    assert m[a]["stop"]["target"] == 0.001 and "relaxed" not in m[a]["stop_reason"], m[a]["stop"]
# The reference is the baseline arm's judged median (ties spread), as the worker reads it.
ref = m["A1"]["stop"]["median_ns"]
b = m["B"]["stop"]
beyond = abs(math.log(b["median_ns"] / ref)) - math.log1p(0.01)
want = max(0.001, min(0.005, beyond / 4))
print("B:", m["B"]["stop_reason"], "want", want)
assert abs(b["target"] - want) < 0.1 * want, (b["target"], want)
# Whatever ended the arm (its target, a slow-narrowing interval, a limit), its reason says why the
# target it names is wider than the run's.
assert want == 0.001 or "relaxed: the median lies far beyond the band from its baseline's" in m["B"]["stop_reason"], b
if b["cause"] == "precision":
    assert b["interval"]["half_width"] <= b["target"], b
PY
pass "a candidate far beyond the band stops at a wider target; its baseline keeps the run's"
