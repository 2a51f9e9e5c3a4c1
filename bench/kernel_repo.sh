# Sourced by the GPU benches that measure the built-in kernels: kernel_repo DIR makes DIR a
# throw-away git repository holding them and the manifest, as a kernel library would, committed
# once ("kernels"); a DIR that already is one is kept, so runs of one WORK share its build cache.
# Needs $root (the abharness checkout).
kernel_repo() {
  local repo=$1
  [ -d "$repo/.git" ] && return 0
  mkdir -p "$repo"
  cp -r "$root/include" "$root/kernels" "$root/abharness.json" "$repo/"
  git -C "$repo" init -q -b main
  git -C "$repo" -c user.name=bench -c user.email=bench@abharness.invalid add -A
  git -C "$repo" -c user.name=bench -c user.email=bench@abharness.invalid commit -q -m "kernels"
}
