# A plugin never substitutes what a grid asks for: the CPU GEMM runs fp32 with A [M, K] and
# B [K, N] (layout "NN"), so a shape asking for layout "TN", precision "bf16" or carrying a key the
# plugin does not know is refused with the plugin's reason naming the key: all of them at once, by
# the dry run of each shape before the plan is written, with nothing measured and no run directory
# left; the shape it can run is then measured. (The cuBLASLt plugin's layouts are checked on a GPU:
# tests/gpu/cublaslt.sh.)
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat > grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "ok", "params": { "m": 32, "n": 32, "k": 32, "layout": "NN", "precision": "fp32" } },
  { "id": "tn", "params": { "m": 32, "n": 32, "k": 32, "layout": "TN" } },
  { "id": "bf16", "params": { "m": 32, "n": 32, "k": 32, "precision": "bf16" } },
  { "id": "typo", "params": { "m": 32, "n": 32, "k": 32, "seeed": 3 } } ] }
JSON
flags=(--repo repo --baseline HEAD~1 --candidate HEAD --runs-root runs "${FAST[@]}" --color never)
expect_rc 2 "$ABH" run "${flags[@]}" --grid grid.json --run-id p
refused() {  # SHAPE TEXT
  grep -qF "shape $1: " "$T/last.err" && grep -qF "$2" "$T/last.err" ||
    fail "$1: not refused by name (want: $2): $(cat "$T/last.err")"
}
grep -qF "3 of 4 shapes refused" "$T/last.err" || fail "not every refusal named: $(cat "$T/last.err")"
refused tn "param 'layout' is \"TN\""
refused bf16 "param 'precision' is \"bf16\""
refused typo "unknown param 'seeed'"
[ ! -e runs/p ] || fail "a run directory was left for a grid refused before any arm"
pass "layout, precision and unknown keys the CPU plugin does not run are refused by name, at once"

python3 -c "
import json; g = json.load(open('grid.json')); g['shapes'] = g['shapes'][:1]
json.dump(g, open('ok.json', 'w'))"
expect_rc 0 "$ABH" run "${flags[@]}" --grid ok.json --run-id ok
for a in A1 B A2; do
  [ -f runs/ok/results/ok/$a.json ] || fail "the shape the plugin can run was not measured ($a)"
done
pass "the shape the plugin runs, as given, is measured"
