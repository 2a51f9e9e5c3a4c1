# abharness doctor checks the worker, the ABI header, libgit2 and toolchains, then each GPU through
# a worker; without a GPU it says CUDA plugins cannot run (a warning, not a failure; "no NVIDIA
# driver" when there is none) and exits 0.
source "$ABH_TESTLIB"
expect_rc 0 "$ABH" doctor
out=$(cat "$T/last.out")
echo "$out"
grep -q "ok    worker $WORKER" <<<"$out" || fail "worker not checked"
grep -q "ok    plugin ABI header" <<<"$out" || fail "ABI header not checked"
grep -q "ok    libgit2 1\." <<<"$out" || fail "libgit2 not reported"
grep -q "ok    host " <<<"$out" || fail "host probe missing"
if nvidia-smi -L >/dev/null 2>&1; then
  grep -q "ok    GPU 0: NVIDIA" <<<"$out" || fail "GPU present but not reported"
else
  grep -q "warn  GPU 0: .*CUDA plugins cannot run here" <<<"$out" || fail "missing GPU not explained"
  # Without a driver at all, it says so (not the CUDA runtime's "driver version is insufficient").
  if [ ! -e /proc/driver/nvidia ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    grep -q "warn  GPU 0: no NVIDIA driver (libcuda.so.1 cannot be loaded" <<<"$out" ||
      fail "no driver not named"
  fi
fi
grep -q "^ready$" <<<"$out" || fail "no verdict line"
# A missing worker is a failure that names the fix.
mkdir bin && cp "$ABH" bin/
expect_rc 1 bin/abharness doctor
grep -q "worker binary is missing" "$T/last.out" || fail "missing worker not named"
pass "doctor"
