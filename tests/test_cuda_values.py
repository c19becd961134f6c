"""remainder, fmod and floor_divide on the CUDA backend over the bench's value distributions
(stridewise.bench.values), bit for bit against torch on CUDA (the torch convention, fmod) and
NumPy (the NumPy convention), dense, as an outer product (prepared divisors) and with a
divisor row; and each distribution at the bench's 2^27 size for remainder against torch.

Marked `gpu`: skipped without a CUDA device.
"""
import numpy as np
import pytest

import stridewise as sw
import test_values
from oracle import mismatches, numpy_remainder, same_bits, torch_remainder
from stridewise.bench import matrix as bench
from stridewise.bench import values as bench_values
from test_values import CASES, layouts

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


def operands(values, dtype, shape=(256, 512)):
    return test_values.operands(values, dtype, shape, "torch", "cuda", 4321)


@pytest.mark.parametrize("values, dtype", CASES)
def test_remainder_on_every_value_distribution(values, dtype):
    a, b = operands(values, dtype)
    # and with the dividend a transposed copy: the tiled kernel's exact form (outline_exact)
    for layout, (x, y) in {**layouts(a, b), "permuted": (a.T.contiguous().T, b)}.items():
        got = sw.remainder(x, y)
        if layout == "permuted":
            assert sw.explain(sw.remainder, x, y).mode == "tiled"
        assert bench.same_bits(got, torch.remainder(x, y)), (layout, "torch")
        # torch's fmod: floats' exact path; int64's division without `%` (int64_divmod_fast)
        assert bench.same_bits(sw.fmod(x, y), torch.fmod(x, y)), (layout, "fmod")
        hx, hy = bench._as_numpy(x), bench._as_numpy(y)
        got = bench._as_numpy(sw.remainder(x, y, convention="numpy"))
        want = numpy_remainder(hx, hy)
        assert same_bits(got, want), (layout, "numpy", mismatches(got, want, *np.broadcast_arrays(hx, hy)))
        # torch tensors: torch's floor_divide, whose 16-bit CUDA form rounds between steps
        # (bf16_ops.h TorchFloorDivide16); NumPy's form is held by the host tests
        got, want = bench._as_numpy(sw.floor_divide(x, y)), bench._as_numpy(torch.floor_divide(x, y))
        assert same_bits(got, want), (layout, "floor_divide", mismatches(got, want, *np.broadcast_arrays(hx, hy)))


@pytest.mark.parametrize("values", [v for v in bench_values.VALUES])
@pytest.mark.parametrize("case", ["contiguous", "outer"])
def test_bench_size_cells(values, case):
    """The bench's own 2^27 cells for float16, bfloat16, float32 and int64, checked as it does."""
    for dtype in ("float16", "bfloat16", "float32", "int64"):
        if not bench_values.applies(values, dtype):
            continue
        a, b, out = bench._make_case(case, dtype, 27, "torch", "cuda", values)
        sw.remainder(a, b, out=out)
        assert bench.differing(out, torch.remainder(a, b)) == 0, (case, dtype, values)
        del a, b, out
        torch.cuda.empty_cache()


def _short_rows(a, b):
    """Rows of 64 with a divisor row: short_rows, the divisors resident where the dtype's
    tuning shares them (float32: the kernel whose exact form is a call, tuning.py
    outline_exact), checked to run there."""
    x, y = a.reshape(-1, 64), b.reshape(-1)[:64]
    e = sw.explain(sw.remainder, x, y)
    dtype = str(x.dtype).removeprefix("torch.")
    shares = sw.elementwise_tuning("cuda", None, dtype).for_mode("short_rows").share_rows
    kind = "repeated" if shares else "periodic"
    assert e.mode == "short_rows" and e.kinds[2] == kind, (e.mode, e.kinds)
    return {"short rows": (x, y)}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_every_exponent_gap_mixed_in_packs(dtype):
    """Quotients from below 1 to 2^277, subnormal operands and specials mixed within every pack
    (the host test's pairs, shuffled), so that a flagged warp's lanes take every step count of
    the exact form (functors.h fmod_wide_fast; bfloat16: bf16_fmod) beside fast-path ones;
    remainder in both conventions against NumPy and torch, dense, as an outer product, with a
    divisor row, transposed (the tiled kernel) and in short rows."""
    from test_remainder_cpu import _every_exponent_gap
    rng = np.random.default_rng(29)
    a, b = _every_exponent_gap(dtype, 1 << 14, rng)
    perm = rng.permutation(a.size)
    ha, hb = a[perm].reshape(256, -1), b[perm].reshape(256, -1)
    da, db = (torch.from_numpy(x.view(np.int16 if dtype == "bfloat16" else np.float32)).cuda()
              for x in (ha, hb))
    if dtype == "bfloat16":
        da, db = da.view(torch.bfloat16), db.view(torch.bfloat16)
    cases = {**layouts(da, db), "transposed": (da.T.contiguous().T, db), **_short_rows(da, db)}
    for layout, (x, y) in cases.items():
        hx, hy = bench._as_numpy(x), bench._as_numpy(y)
        for convention in ("torch", "numpy"):
            got = bench._as_numpy(sw.remainder(x, y, convention=convention))
            want = numpy_remainder(hx, hy) if convention == "numpy" else \
                bench._as_numpy(torch.remainder(x, y))
            assert same_bits(got, want), (layout, convention, mismatches(got, want, *np.broadcast_arrays(hx, hy)))


def test_float64_exact_lanes_mixed_in_packs():
    """float64 pairs past the fast path (the host test's: quotients to 2^2097, subnormal
    divisors, exact multiples of the divisor by up to 2^2097, specials) shuffled among each
    other, so that the device's exact lanes (functors.h fmod_wide_lane) take every step count
    beside fast ones; remainder in both conventions (torch's as its formula on NumPy's fmod)
    and fmod against NumPy, dense, as an outer product, with a divisor row, transposed (the
    tiled kernel) and in short rows."""
    from test_remainder_cpu import _float64_wide_operands
    rng = np.random.default_rng(31)
    a, b = _float64_wide_operands(rng, 1 << 12)
    perm = rng.permutation(a.size)
    ha, hb = a[perm].reshape(240, -1), b[perm].reshape(240, -1)
    da, db = torch.from_numpy(ha).cuda(), torch.from_numpy(hb).cuda()
    cases = {**layouts(da, db), "transposed": (da.T.contiguous().T, db), **_short_rows(da, db)}
    for layout, (x, y) in cases.items():
        hx, hy = bench._as_numpy(x), bench._as_numpy(y)
        with np.errstate(all="ignore"):
            wants = {"numpy": numpy_remainder(hx, hy), "torch": torch_remainder(hx, hy),
                     "fmod": np.fmod(hx, hy)}
        for name, want in wants.items():
            got = bench._as_numpy(sw.fmod(x, y) if name == "fmod" else sw.remainder(x, y, convention=name))
            assert same_bits(got, want), (layout, name, mismatches(got, want, *np.broadcast_arrays(hx, hy)))
