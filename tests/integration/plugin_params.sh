# A plugin never substitutes what a grid asks for: the CPU GEMM runs fp32 with A [M, K] and
# B [K, N] (layout "NN"), so a shape asking for layout "TN", precision "bf16" or carrying a key the
# plugin does not know fails with the plugin's reason naming the key, while the shape it can run
# is measured. (The cuBLASLt plugin's layouts are checked on a GPU: tests/gpu/cublaslt.sh.)
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat > grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "ok", "params": { "m": 32, "n": 32, "k": 32, "layout": "NN", "precision": "fp32" } },
  { "id": "tn", "params": { "m": 32, "n": 32, "k": 32, "layout": "TN" } },
  { "id": "bf16", "params": { "m": 32, "n": 32, "k": 32, "precision": "bf16" } },
  { "id": "typo", "params": { "m": 32, "n": 32, "k": 32, "seeed": 3 } } ] }
JSON
expect_rc 4 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id p "${FAST[@]}" --color never
R=runs/p
for a in A1 B A2; do
  [ -f $R/results/ok/$a.json ] || fail "the shape the plugin can run was not measured ($a)"
done
why() { cat $R/logs/$1/A1.err $R/failures/$1/A1.json 2>/dev/null || true; }
refused() {  # SHAPE TEXT
  local w; w=$(why "$1")
  grep -qF "$2" <<<"$w" || fail "$1: not refused by name (want: $2): $w"
}
refused tn "param 'layout' is \"TN\""
refused bf16 "param 'precision' is \"bf16\""
refused typo "unknown param 'seeed'"
pass "layout, precision and unknown keys the CPU plugin does not run are refused by name"
