# How abharness fits a shell: `--version` says the version, abharness's own git revision, the
# compiler and the CUDA libraries (or that it was built without CUDA); NO_COLOR (no-color.org)
# turns the coloured table off on a real terminal unless --color always asks for it; the bash
# completion script the build writes loads in bash and completes subcommands, flags and values.
source "$ABH_TESTLIB"
expect_rc 0 "$ABH" --version
for key in "abharness 0." "revision: " "compiler: " "CUDA: " "plugin ABI: "; do
  grep -q "^$key" "$T/last.out" || fail "--version lacks '$key': $(cat "$T/last.out")"
done
rev=$(sed -n 's/^revision: //p' "$T/last.out")
[ -n "$rev" ] || fail "--version prints an empty revision"
if git -C "$ABH_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
  [ "$rev" != unknown ] || fail "--version says revision unknown inside a git checkout"
  git -C "$ABH_SOURCE_DIR" rev-parse --verify -q "${rev%-dirty}^{commit}" >/dev/null \
    || fail "--version's revision $rev is not a commit of $ABH_SOURCE_DIR"
fi
grep -Eq "^CUDA: (built without CUDA|CUDA runtime [0-9]+\.[0-9]+.*cuBLASLt)" "$T/last.out" \
  || fail "--version's CUDA line names neither the libraries nor their absence"
pass "--version: $(tr '\n' ' ' <"$T/last.out")"

# NO_COLOR on a real terminal (script(1) gives the command a pty).
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id c "${FAST[@]}" --quiet
# The build phase says what it builds and how long it took (a first CUDA build takes minutes).
for arm in baseline candidate; do
  grep -q "^$arm: building (log variants/$arm/build.log)" "$T/last.err" || fail "no build start line for $arm"
  grep -Eq "^$arm: (built in [0-9]+ s|cached build reused)" "$T/last.err" || fail "no build end line for $arm"
done
on_tty() { script -qec "$*" /dev/null | tr -d '\r'; }
esc=$'\x1b['
out=$(on_tty "env -u NO_COLOR '$ABH' report runs/c")
[[ $out == *"$esc"* ]] || fail "no colour on a terminal without NO_COLOR (the test proves nothing)"
out=$(on_tty "NO_COLOR=1 '$ABH' report runs/c")
[[ $out != *"$esc"* ]] || fail "NO_COLOR=1 still colours the table"
[[ $out == *m32_n32_k32* ]] || fail "NO_COLOR=1 printed no table"
out=$(on_tty "NO_COLOR= '$ABH' report runs/c")
[[ $out == *"$esc"* ]] || fail "an empty NO_COLOR turned colour off (no-color.org: only non-empty)"
out=$(on_tty "NO_COLOR=1 '$ABH' report runs/c --color always")
[[ $out == *"$esc"* ]] || fail "--color always does not override NO_COLOR"
pass "NO_COLOR honoured on a terminal; --color always overrides it"

# The completion script the build generated (and `cmake --install` installs).
comp=$(dirname "$ABH_BIN")/share/bash-completion/completions/abharness
[ -f "$comp" ] || fail "the build wrote no completion script at $comp"
"$ABH" completion bash | cmp -s - "$comp" || fail "the built completion script is stale"
complete_line() {  # WORDS...: the completions bash offers for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _abharness; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$comp" "$@"
}
[ "$(complete_line abharness comp)" = "$(printf 'compare\ncompletion')" ] \
  || fail "'abharness comp<TAB>' offers: $(complete_line abharness comp | tr '\n' ' ')"
complete_line abharness ver | grep -qx verify || fail "'abharness ver<TAB>' does not offer verify"
complete_line abharness run --fail-on | grep -qx -- --fail-on-regression \
  || fail "'abharness run --fail-on<TAB>' does not offer --fail-on-regression"
complete_line abharness report --print "" | grep -qx pr || fail "'report --print <TAB>' does not offer pr"
complete_line abharness --ver | grep -qx -- --version || fail "'abharness --ver<TAB>' does not offer --version"
pass "bash completion loads and completes subcommands, flags and values"
