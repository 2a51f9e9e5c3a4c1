# Completion in the shells people use and the man page: the zsh and fish scripts the build writes
# match `abharness completion zsh|fish`, load in the real shells, and complete commands, options,
# fixed values and --target from the kernel repository's abharness.json (bash too); the man page
# help2man made at build time documents every command's options.
source "$ABH_TESTLIB"
share=$(dirname "$ABH_BIN")/share
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
# The scripts call `abharness` by name, as an installed one would be found.
export PATH="$ABH_BIN:$PATH"

# The targets of a repository, as the scripts ask for them; nothing (and no error) without one.
[ "$(abharness complete-targets repo)" = cpu ] || fail "complete-targets repo: $(abharness complete-targets repo 2>&1)"
mkdir empty
[ -z "$(cd empty && abharness complete-targets 2>&1)" ] || fail "complete-targets prints something without a manifest"
pass "complete-targets lists the manifest's targets, and nothing where there is none"

# bash: --target completes from --repo's manifest, or the current directory's.
comp=$share/bash-completion/completions/abharness
complete_line() {  # WORDS...: the completions bash offers for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _abharness; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$comp" "$@"
}
[ "$(complete_line abharness run --repo repo --target "")" = cpu ] \
  || fail "bash: 'run --repo repo --target <TAB>' offers: $(complete_line abharness run --repo repo --target "")"
[ "$(cd repo && complete_line abharness run --target c)" = cpu ] || fail "bash: --target in the repository"
complete_line abharness compare --color "" | grep -qx never || fail "bash: 'compare --color <TAB>' lacks never"
pass "bash completes --target from the repository's abharness.json"

# zsh: the script is current, parses, and registers _abharness for abharness under compinit.
command -v zsh >/dev/null || fail "no zsh: install it (scripts/install-deps.sh does)"
z=$share/zsh/site-functions/_abharness
[ -f "$z" ] || fail "the build wrote no zsh completion at $z"
abharness completion zsh | cmp -s - "$z" || fail "the built zsh completion is stale"
zsh -n "$z" || fail "zsh cannot parse the completion script"
got=$(zsh -fc "autoload -Uz compinit && compinit -u -d $T/zcompdump && source $z && print -r -- \$_comps[abharness]")
[ "$got" = _abharness ] || fail "zsh: sourcing the script does not register _abharness (got '$got')"
for spec in "'--target[" "_abharness_targets" "(terminal markdown json csv tidy-csv svg pr)" "_files -/"; do
  grep -qF -- "$spec" "$z" || fail "zsh script lacks $spec"
done
# _abharness_targets, run in zsh with a command line's words, offers the repository's targets.
got=$(zsh -fc "source $z 2>/dev/null; _describe() { print -l -- \${(P)\${@[-1]}}; }; words=(run --repo $T/repo --target ''); CURRENT=5; _abharness_targets")
[ "$got" = cpu ] || fail "zsh: _abharness_targets offers '$got'"
pass "zsh completion loads under compinit and completes --target from the manifest"

# fish: the script is current, parses, and `complete -C` (fish's own completion engine) offers
# commands, options, values and targets.
command -v fish >/dev/null || fail "no fish: install it (scripts/install-deps.sh does)"
f=$share/fish/vendor_completions.d/abharness.fish
[ -f "$f" ] || fail "the build wrote no fish completion at $f"
abharness completion fish | cmp -s - "$f" || fail "the built fish completion is stale"
fish -n "$f" || fail "fish cannot parse the completion script"
fc() { fish -c "source $f; complete -C'$1'" | cut -f1; }
[ "$(fc 'abharness comp')" = "$(printf 'compare\ncompletion')" ] || fail "fish: 'abharness comp' offers: $(fc 'abharness comp' | tr '\n' ' ')"
[ "$(fc 'abharness hist')" = history ] || fail "fish: 'abharness hist' offers: $(fc 'abharness hist' | tr '\n' ' ')"
fc 'abharness run --fail-on' | grep -qx -- --fail-on-regression || fail "fish: run --fail-on"
fc 'abharness report --print ' | grep -qx tidy-csv || fail "fish: report --print values"
[ "$(fc "abharness run --repo $T/repo --target ")" = cpu ] || fail "fish: --target offers $(fc "abharness run --repo $T/repo --target ")"
pass "fish completion completes commands, options, values and --target"

# The man page: made by help2man from --help-all, it has every command and their options.
man=$share/man/man1/abharness.1
[ -f "$man" ] || fail "the build wrote no man page at $man (is help2man installed?)"
page=$(MANWIDTH=120 man -l "$man" 2>/dev/null | col -b)
for word in compare completion history "--chart-js" "--fail-on-regression" "--target" "--color" "--out"; do
  [[ $page == *"$word"* ]] || fail "the man page lacks '$word'"
done
pass "man page documents every command's options"
