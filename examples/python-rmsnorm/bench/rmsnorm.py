"""RMSNorm of a bf16 activation, y = x / sqrt(mean(x^2) + eps) * w, as an abharness Python problem
on the GPU: a microsecond kernel of the kind a serving engine runs per layer.

The kernel under test is bench/kernel.py; this file makes the inputs, offers buffer sets (so the
graph timing can replay a cold L2 without timing a flush) and declares that run() can be captured
into a CUDA graph. It checks the output against an fp64 reference; it is the same in both revisions.
"""
import torch

import abharness
from bench import kernel


class RMSNorm:
    # Both kernels compute in fp32 and round once to bf16: the output is within 2^-8 of |ref| but
    # for the fp32 sum of squares; doubled, as for the GEMM examples.
    tolerance = 2.0 ** -7
    # run() enqueues kernels on the current stream only, allocates only through PyTorch (whose
    # allocator the capture is made through) and never reads device data on the host.
    capturable = True

    def __init__(self, params):
        if params.get("precision", "bf16") != "bf16":
            raise abharness.Unsupported("this example computes bf16 only, not %s"
                                        % params["precision"])
        self.rows, self.hidden = int(params["rows"]), int(params["hidden"])
        self.eps = float(params.get("eps", 1e-6))
        self.gen = torch.Generator(device="cuda").manual_seed(int(params.get("seed", 1)))
        self.sets = [self._make_set()]
        self.x, self.w, self.out = self.sets[0]
        # Read x and w once, write y once: the least a kernel can move.
        self.bytes = 2.0 * (2 * self.rows * self.hidden + self.hidden)
        self.flops = 4.0 * self.rows * self.hidden

    def _make_set(self):
        x = torch.randn((self.rows, self.hidden), device="cuda", dtype=torch.bfloat16,
                        generator=self.gen)
        w = 1 + 0.1 * torch.randn((self.hidden,), device="cuda", dtype=torch.bfloat16,
                                  generator=self.gen)
        out = torch.full_like(x, float("nan"))
        return x, w, out

    # Buffer sets: independent inputs and outputs of the same shape, one per set.
    @property
    def buffer_set_bytes(self):
        return 2.0 * (2 * self.rows * self.hidden + self.hidden)

    def make_buffer_sets(self, count):
        # One allocation per tensor for all the new sets, each set a view of its slice: thousands
        # of sets of a one-row problem (enough to cover twice the L2) then cost three kernels,
        # not three per set.
        extra = count - len(self.sets)
        if extra <= 0:
            return
        xs = torch.randn((extra, self.rows, self.hidden), device="cuda", dtype=torch.bfloat16,
                         generator=self.gen)
        ws = 1 + 0.1 * torch.randn((extra, self.hidden), device="cuda", dtype=torch.bfloat16,
                                   generator=self.gen)
        outs = torch.full_like(xs, float("nan"))
        self.sets.extend(zip(xs.unbind(0), ws.unbind(0), outs.unbind(0)))

    def use_buffer_set(self, index):
        self.x, self.w, self.out = self.sets[index]

    def run(self):
        kernel.rmsnorm(self.x, self.w, self.out, self.eps)

    def verify(self):
        x, w = self.x.double(), self.w.double()
        ref = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * w
        scale = ref.abs().clamp_min(1e-3)
        err = ((self.out.double() - ref).abs() / scale).max().item()
        return abharness.Verification(err, self.tolerance, self.out.numel(),
                                      "fp64 reference, full output of the current buffer set")


def make_problem(params):
    return RMSNorm(params)
