"""Candidate: RMSNorm as one Triton kernel, one program per row, the row held in registers."""
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(out_ptr + row * stride + cols, (x * rstd * w).to(tl.bfloat16), mask=mask)


def rmsnorm(x, w, out, eps):
    """Enqueues out = x / sqrt(mean(x^2) + eps) * w on the current stream."""
    rows, n = x.shape
    block = triton.next_power_of_2(n)
    rmsnorm_kernel[(rows,)](x, w, out, x.stride(0), n, eps, BLOCK=block,
                            num_warps=min(max(block // 256, 1), 16))
