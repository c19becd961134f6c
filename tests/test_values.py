"""remainder, fmod and floor_divide on the CPU backend over the bench's value distributions
(stridewise.bench.values): wide and huge quotients, tiny and subnormal divisors, dividends near
the dtype's maximum, specials, small, large and negative integer divisors; bit for bit against
NumPy and the torch convention's formula, dense, as an outer product and with a divisor row."""
import numpy as np
import pytest

import stridewise as sw
from conftest import DTYPES
from oracle import mismatches, numpy_remainder, same_bits, torch_remainder
from stridewise.bench import values as bench_values

ORACLES = {"torch": torch_remainder, "numpy": numpy_remainder}
CASES = [(values, dtype) for values in bench_values.VALUES for dtype in DTYPES
         if bench_values.applies(values, dtype)]


def operands(values, dtype, shape=(64, 96), lib="numpy", device="cpu", seed=1234):
    d = bench_values.drawer(lib, seed, device)
    return (bench_values.draw(values, "a", dtype, d, shape),
            bench_values.draw(values, "b", dtype, d, shape))


def layouts(a, b):
    """(a, b) dense, as an outer product (the divisor row shared) and with one divisor row."""
    return {"dense": (a, b), "outer": (a[:, :1], b[:1, :]), "row": (a, b[0])}


@pytest.mark.parametrize("values, dtype", CASES)
def test_remainder_on_every_value_distribution(values, dtype):
    a, b = operands(values, dtype)
    for layout, (x, y) in layouts(a, b).items():
        for convention, oracle in ORACLES.items():
            got = sw.remainder(x, y, convention=convention)
            want = oracle(x, y)
            assert same_bits(got, want), (layout, convention, mismatches(
                got, want, *np.broadcast_arrays(x, y)))


@pytest.mark.parametrize("values, dtype", CASES)
def test_fmod_and_floor_divide_on_every_value_distribution(values, dtype):
    a, b = operands(values, dtype)
    for layout, (x, y) in layouts(a, b).items():
        for name in ("fmod", "floor_divide"):
            got = getattr(sw, name)(x, y)
            with np.errstate(all="ignore"):
                want = getattr(np, name)(x, y)
            assert same_bits(got, want), (layout, name, mismatches(got, want, *np.broadcast_arrays(x, y)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_distributions_reach_what_they_name(dtype):
    """The distributions are what the bench says they are (else a cell measures nothing new)."""
    fi = bench_values._float_info(dtype)
    a, b = (x.astype(np.float64) for x in operands("huge_quotients", dtype))
    assert np.median(np.abs(a / b)) > 2**20
    _, b = operands("subnormal_divisors", dtype)
    assert np.all((np.abs(b.astype(np.float64)) < float(fi.tiny)) & (b != 0))
    a, _ = operands("near_max", dtype)
    assert np.all(np.abs(a.astype(np.float64)) >= float(fi.max) / 2)
    a, b = operands("specials", dtype)
    for x in (a.astype(np.float64), b.astype(np.float64)):
        assert np.isnan(x).any() and np.isinf(x).any() and (x == 0).any()
    a, b = operands("wide", dtype)
    assert np.percentile(np.abs(a.astype(np.float64) / b), 90) > 2**20


def test_integer_distributions_reach_what_they_name():
    _, b = operands("large_divisors", "int64")
    assert np.all(np.abs(b) >= 2**61)
    _, b = operands("negative_divisors", "int64")
    assert np.all(b < 0) and b.min() < -2**40 and b.max() > -100
    _, b = operands("small_divisors", "int32")
    assert b.min() >= 1 and b.max() <= 7
