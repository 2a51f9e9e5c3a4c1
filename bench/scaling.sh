#!/usr/bin/env bash
# Scaling over the GPUs of one host: the 16-shape A/A sweep of bench/aa_sweep.sh on one GPU, then
# sharded over every GPU of the machine, in the same call and with the plugin's build cached for
# both (a two-shape run fills the cache first). Prints each sweep's table (drift, verdicts, worker
# ready median and max, where an arm's time goes), then the speed-up of all GPUs over one and the
# scaling efficiency (speed-up / GPUs; target >= 85 %), on the sweeps' wall times and on their
# arms' spans (first worker start to last result). A third sweep over all GPUs lets the lanes open
# their GPUs at will (ABH_DEVICE_OPEN_TURNS=0) instead of taking turns (worker/arm.cpp).
#
# usage: bench/scaling.sh [precision]     (BIN=<dir with abharness>, default build/bin)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prec=${1:-bf16}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "${ngpu:-0}" -ge 2 ] || { echo "scaling: needs two or more GPUs, found ${ngpu:-0}" >&2; exit 77; }
work=${WORK:-$(mktemp -d /tmp/abh-scaling.XXXXXX)}
mkdir -p "$work"
export WORK=$work
all=$(seq -s, 0 $((ngpu - 1)))

SHAPES_M=1 RUN_TAG=cache ABH_FLAGS="--gpus 0 --max-time 0.05" bash "$root/bench/aa_sweep.sh" "$prec" \
  >"$work/cache.txt" 2>&1 || { cat "$work/cache.txt"; exit 1; }
RUN_TAG=gpu1 ABH_FLAGS="--gpus 0" bash "$root/bench/aa_sweep.sh" "$prec" | tee "$work/gpu1.txt"
RUN_TAG=gpus$ngpu ABH_FLAGS="--gpus $all" bash "$root/bench/aa_sweep.sh" "$prec" | tee "$work/all.txt"
ABH_DEVICE_OPEN_TURNS=0 RUN_TAG=gpus${ngpu}_at_will ABH_FLAGS="--gpus $all" \
  bash "$root/bench/aa_sweep.sh" "$prec" | tee "$work/at_will.txt"

python3 - "$ngpu" "$work/gpu1.txt" "$work/all.txt" "$work/at_will.txt" <<'PY'
import re, sys
def read(path):
    text = open(path).read()
    wall = float(re.search(r"sweep wall ([\d.]+) s", text).group(1))
    span = float(re.search(r"arms span ([\d.]+) s", text).group(1))
    ready = re.search(r"worker ready: median ([\d.]+) s, max ([\d.]+) s", text).groups()
    worst = re.search(r"worst \|drift\| ([\d.]+)%", text).group(1)
    verdicts = re.findall(r"^m\S+ .* (\w+)$", text, re.M)
    return wall, span, ready, worst, verdicts
n = int(sys.argv[1])
sweeps = [("1 GPU", read(sys.argv[2])), (f"{n} GPUs", read(sys.argv[3])),
          (f"{n}, at will", read(sys.argv[4]))]
print(f"\n{'sweep':12} {'wall':>8} {'arms span':>10} {'ready median':>13} {'ready max':>10} {'worst drift':>12}  verdicts")
for name, r in sweeps:
    v = {x: r[4].count(x) for x in sorted(set(r[4]))}
    print(f"{name:12} {r[0]:7.1f}s {r[1]:9.1f}s {r[2][0]:>12}s {r[2][1]:>9}s {r[3]:>11}%  {v}")
one = sweeps[0][1]
for name, r in sweeps[1:]:
    for what, i in (("wall", 0), ("arms span", 1)):
        s = one[i] / r[i]
        print(f"{name}, {what}: {s:.2f}x, scaling efficiency {100 * s / n:.0f} % (target >= 85 %)")
PY
echo "work directory: $work"
