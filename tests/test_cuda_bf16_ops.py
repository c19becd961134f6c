"""bfloat16 fmod and floor_divide on the CUDA backend (bf16_ops.h: remainder's table for the
lanes past the fast path), every pair of torch tensors against a reference kernel written from
the definitions: C's fmodf, and torch's floor_divide (c10::div_floor_floating on BFloat16 as
CUDA runs it: NumPy's npy_divmod steps in float32, the floor stored in bfloat16 before its +1
fix; equal to torch's own over 2^20 random pairs on an H200).

Marked `gpu`: skipped without a CUDA device; tools/gpu_check.sh runs it on the device.
"""
import numpy as np
import pytest

import stridewise as sw
from oracle import cuda_reference

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

CUDA = "cuda"

REFERENCE = r"""
// Independent of stridewise: the definitions, in IEEE float (NVRTC's defaults: no ftz, IEEE
// division), rounded to bfloat16 where torch's BFloat16 variables round.
__device__ float to_bf16(float x) {
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return __uint_as_float((unsigned)r << 16);
}
__device__ float floor_divide(float a, float b) {   // torch's, as above
  const float mod = fmodf(a, b);
  if (!b) return a / b;
  float div = (a - mod) / b;
  if (mod) { if ((b < 0) != (mod < 0)) div -= 1.0f; }
  if (div) {
    float fl = to_bf16(floorf(div));
    if (div - fl > 0.5f) fl = to_bf16(fl + 1.0f);
    return fl;
  }
  return copysignf(0.0f, a / b);
}
// Output i is row i / na, column i % na; a and b are read at (row, col) through their
// strides (0 along a broadcast axis).
extern "C" __global__ void reference(const unsigned short* a, const unsigned short* b, unsigned short* o,
                                     long long na, long long n, long long sar, long long sac,
                                     long long sbr, long long sbc, int op) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long row = i / na, col = i % na;
  const float x = __uint_as_float((unsigned)a[row * sar + col * sac] << 16);
  const float y = __uint_as_float((unsigned)b[row * sbr + col * sbc] << 16);
  const float m = op ? floor_divide(x, y) : fmodf(x, y);
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(m));
  o[i] = r;
}
"""


@pytest.fixture(scope="module")
def reference_kernel():
    return cuda_reference(REFERENCE)


@pytest.mark.parametrize("op", ["fmod", "floor_divide"])
@pytest.mark.parametrize("layout", ["dense", "row_divisors", "column_divisors"])
def test_every_bfloat16_pair(op, layout, reference_kernel):
    """Every (dividend, divisor) pair of bfloat16 bit patterns: divisors dense (contiguous,
    the range check two lanes at a time), along the row as share_rows' repeated operand
    (prepared once per batch), or one per row (prepared once per row)."""
    from cuda.core import LaunchConfig, launch

    dev, kernel = reference_kernel
    stream = dev.create_stream(torch.cuda.current_stream())
    bits = torch.arange(-32768, 32768, dtype=torch.int32, device=CUDA).to(torch.int16)
    every = bits.view(torch.bfloat16)[None, :]
    chunk = 4096
    out = torch.empty((chunk, 65536), dtype=torch.bfloat16, device=CUDA)
    ref = torch.empty((chunk, 65536), dtype=torch.int16, device=CUDA)
    n = chunk * 65536
    cfg = LaunchConfig(grid=n // 256, block=256)
    bad = torch.zeros((), dtype=torch.int64, device=CUDA)
    alg = sw.Rows(share_rows=True) if layout == "row_divisors" else None
    for start in range(0, 65536, chunk):
        block = bits[start:start + chunk].view(torch.bfloat16)[:, None]
        if layout == "dense":      # dividends and divisors both full arrays
            a = every.expand(chunk, -1).contiguous()
            b = block.expand(-1, 65536).contiguous()
        elif layout == "row_divisors":
            a, b = block, every
        else:
            a, b = every, block
        getattr(sw, op)(a, b, out=out, algorithm=alg)
        sa = [s if d > 1 else 0 for s, d in zip(a.stride(), a.shape)]
        sb = [s if d > 1 else 0 for s, d in zip(b.stride(), b.shape)]
        launch(stream, cfg, kernel, a.data_ptr(), b.data_ptr(), ref.data_ptr(), np.int64(65536), np.int64(n),
               *(np.int64(s) for s in sa + sb), np.int32(op == "floor_divide"))
        nan = torch.isnan(out) & torch.isnan(ref.view(torch.bfloat16))
        bad += ((out.view(torch.int16) != ref) & ~nan).sum()
    e = sw.explain(getattr(sw, op), a, b, out=out, algorithm=alg)
    assert e.mode == ("contiguous" if layout == "dense" else "rows")
    assert int(bad) == 0
