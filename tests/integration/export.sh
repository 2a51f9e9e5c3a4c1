# `abharness export` (docs/export.md), end to end on a real CPU run of two blocks per shape:
#   - bmf validates against schemas/bmf.schema.json (Bencher's documented shape), has one
#     benchmark per shape, and its numbers are report.json's: speedup and interval, both variants'
#     times, and bounds that are the lowest and highest arm median;
#   - pytest-benchmark has a baseline and a candidate benchmark per shape, grouped by shape, whose
#     statistics are pytest-benchmark's own over the pooled raw samples of the result files
#     (recomputed here with its quartile method), in seconds;
#   - --out writes the same bytes as stdout; a run that fails validation is refused (exit 3) with
#     nothing written; an unknown format is a usage error.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id r --quiet --rounds 2 "${FAST[@]}"
R=runs/r
expect_rc 0 "$ABH" export "$R" --format bmf
cp "$T/last.out" bmf.json
expect_rc 0 "$ABH" export "$R" --format pytest-benchmark -o pb.json
grep -q "export: pb.json (pytest-benchmark)" "$T/last.err" || fail "export -o said: $(cat "$T/last.err")"
expect_rc 0 "$ABH" export "$R" --format pytest-benchmark
cmp -s "$T/last.out" pb.json || fail "--out and stdout differ"

python3 - bmf.json pb.json "$R" "$ABH_SOURCE_DIR/schemas/bmf.schema.json" <<'PY' || fail "the exports (above)"
import glob, json, statistics, sys
import jsonschema

bmf, pb, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
jsonschema.Draft202012Validator(json.load(open(sys.argv[4]))).validate(bmf)
report = json.load(open(run + "/report.json"))
rows = {s["shape"]: s for s in report["shapes"]}
assert sorted(bmf) == sorted(rows), (sorted(bmf), sorted(rows))
for shape, row in rows.items():
    m = bmf[shape]
    assert m["speedup"] == {"value": row["speedup"], "lower_value": row["ci"]["lo"],
                            "upper_value": row["ci"]["hi"]}, (shape, m["speedup"], row)
    for measure, variant, key in (("latency", "candidate", "candidate_ns"),
                                  ("baseline-latency", "baseline", "baseline_ns")):
        # Over the arms that count: one left out as disturbed is in neither the value nor its bounds.
        medians = [a["median_ns"] for a in row["arms"]
                   if a["variant"] == variant and a.get("outlier_ratio") is None]
        assert len(medians) >= 2, (shape, variant, medians)  # aba x 2: A1 B1 A2 A3 B2 A4
        assert m[measure] == {"value": row[key], "lower_value": min(medians),
                              "upper_value": max(medians)}, (shape, measure, m[measure])
# A broken document fails the schema: the check above can fail.
try:
    jsonschema.Draft202012Validator(json.load(open(sys.argv[4]))).validate(
        {"s": {"latency": {"value": "fast"}}})
    sys.exit("the BMF schema accepted a string value")
except jsonschema.ValidationError:
    pass

def quartiles(d):  # pytest-benchmark's stats.py
    n = len(d)
    if n == 1:
        return d[0], d[0]
    if n % 2 == 0:
        return statistics.median(d[:n // 2]), statistics.median(d[n // 2:])
    k, q = n // 4, n % 4
    if q == 1:
        return 0.25 * d[k - 1] + 0.75 * d[k], 0.75 * d[3 * k] + 0.25 * d[3 * k + 1]
    return 0.75 * d[k] + 0.25 * d[k + 1], 0.25 * d[3 * k + 1] + 0.75 * d[3 * k + 2]

names = sorted(b["name"] for b in pb["benchmarks"])
assert names == sorted(f"{v}[{s}]" for s in rows for v in ("baseline", "candidate")), names
plan = json.load(open(run + "/plan.json"))
assert pb["commit_info"]["id"] == plan["variants"][1]["source"]["commit"], pb["commit_info"]
for b in pb["benchmarks"]:
    shape, variant = b["group"], b["extra_info"]["variant"]
    assert b["name"] == f"{variant}[{shape}]" and b["params"] == rows[shape]["params"], b["name"]
    data = []
    for path in sorted(glob.glob(f"{run}/results/{shape}/*.json")):
        r = json.load(open(path))
        if r["invocation"]["variant"] == variant:
            data += [ns * 1e-9 for ns in r["measurement"]["samples_ns"]]
    d, s = sorted(data), b["stats"]
    q1, q3 = quartiles(d)
    want = {"rounds": len(d), "min": d[0], "max": d[-1], "median": statistics.median(d),
            "mean": statistics.mean(d), "stddev": statistics.stdev(d), "q1": q1, "q3": q3,
            "total": sum(d)}
    for k, v in want.items():
        assert abs(s[k] - v) <= 1e-9 * abs(v) + 1e-15, (b["name"], k, s[k], v)
    assert s["iqr_outliers"] == sum(x < q1 - 1.5 * (q3 - q1) or x > q3 + 1.5 * (q3 - q1) for x in d)
    assert b["extra_info"]["abharness_median_ns"] == rows[shape][variant + "_ns"], b["extra_info"]
    assert b["extra_info"]["speedup"] == rows[shape]["speedup"], b["extra_info"]
print(f"bmf: {len(bmf)} shapes; pytest-benchmark: {len(pb['benchmarks'])} benchmarks")
PY
pass "bmf and pytest-benchmark exports hold the report's numbers and the samples' statistics"

# A run that fails validation exports nothing.
S=$(python3 -c 'import json; print(json.load(open("grid.json"))["shapes"][0]["id"])')
edit_json "$R/results/$S/B1.json" 'j["measurement"]["samples_ns"][0] *= 0.5'
expect_rc 3 "$ABH" export "$R" --format bmf -o tampered.json
grep -q "failed provenance validation; nothing is exported" "$T/last.err" || fail "tamper: $(cat "$T/last.err")"
[ ! -e tampered.json ] || fail "a refused run was exported"
expect_rc 2 "$ABH" export "$R" --format csv
pass "a tampered run is refused; an unknown format is a usage error"
