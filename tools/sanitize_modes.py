"""Every mode x every dtype on small, odd, misaligned shapes; run under compute-sanitizer.

Each case is also checked against torch.remainder on CUDA, so the run doubles as a smoke test.
Exit status 1 on a mismatch. Run with PYTORCH_NO_CUDA_MEMORY_CACHING=1 so that every tensor
is its own allocation and an out-of-bounds access cannot land inside a cached block.
"""
import sys

import torch

import stridewise as sw

DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def rnd(shape, dtype):
    t = torch.randn(shape, device="cuda") * 50
    return t.round().to(getattr(torch, dtype)) if dtype.startswith("int") else t.to(getattr(torch, dtype))


def cases(dt):
    flat = rnd((1031,), dt)
    return {
        "contiguous": (rnd((33, 67), dt), rnd((33, 67), dt), None),
        "contiguous/misaligned": (flat[1:1000], flat[2:1001], None),
        "scalar": (rnd((33, 67), dt), rnd((), dt), None),
        "scalar/host": (rnd((1001,), dt)[1:], 7, None),
        "rows": (rnd((33, 67), dt), rnd((67,), dt), None),
        "rows/column": (rnd((33, 515), dt), rnd((33, 1), dt), None),
        "rows/outer": (rnd((33, 1), dt), rnd((1, 515), dt), None),
        "rows/crossed-odd": (rnd((3, 7, 67), dt), rnd((3, 1, 67), dt), None),
        "rows/strided": (rnd((9, 2 * 300), dt)[:, ::2], rnd((9, 1), dt), None),
        "short_rows": (rnd((301, 6), dt), rnd((1, 6), dt), None),
        "short_rows/misaligned": (rnd((302, 6), dt)[1:].reshape(-1)[3:-3].reshape(-1, 6), rnd((1, 6), dt), None),
        "short_rows/long-period": (rnd((33, 1030), dt), rnd((1030,), dt), None),   # gathers, no table
        "tiled": (rnd((45, 77), dt).T, rnd((77, 45), dt), None),
        "tiled/batched": (rnd((3, 33, 70), dt).transpose(1, 2), rnd((3, 70, 33), dt), None),
        "tiled/staged": (rnd((3, 33, 70), dt).transpose(1, 2), rnd((3, 70, 33), dt), None),
        "general": (rnd((45, 77), dt), rnd((45, 1), dt),
                    torch.empty((77, 45, 2), dtype=getattr(torch, dt), device="cuda")[:, :, 1].T),
    }


def main() -> int:
    failed = 0
    modes = set()
    for dt in DTYPES:
        for name, (a, b, out) in cases(dt).items():
            alg = sw.Tiled(stage=True) if name.endswith("/staged") else sw.Auto()   # shared memory
            mode = sw.explain(sw.remainder, a, b, out=out, algorithm=alg).mode
            modes.add(mode)
            got = sw.remainder(a, b, out=out, algorithm=alg)
            want = torch.remainder(a, b)
            if not want.dtype.is_floating_point:     # torch CUDA gives garbage for x % 0
                bb = b if isinstance(b, torch.Tensor) else torch.tensor(b, device="cuda")
                want = torch.where(bb.expand_as(want) == 0, torch.zeros_like(want), want)
            ok = torch.equal(got.isnan(), want.isnan()) if got.dtype.is_floating_point else True
            ok = ok and bool(((got == want) | (got.isnan() & want.isnan()) if got.dtype.is_floating_point
                              else (got == want)).all())
            print(f"{dt:9} {name:24} {mode:11} {'ok' if ok else 'MISMATCH'}")
            failed += not ok
    torch.cuda.synchronize()
    print(f"modes hit: {sorted(modes)}; {failed} mismatches")
    return 1 if failed or len(modes) < 6 else 0


if __name__ == "__main__":
    sys.exit(main())
