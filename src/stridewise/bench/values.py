"""Value distributions for the bench: what users feed remainder, beyond one narrow range.

A kernel whose speed depends on its operands' values (a fast path that holds for small
quotients only, a slow path for specials) looks fine on narrow data and loses on real data:
angles wrapped after long integrations (wide quotients), coordinates divided by small cell
sizes (tiny divisors), arrays with some NaN or inf. Each distribution here draws dividends
("a") and divisors ("b") for one dtype kind; the bench makes it a dimension of its matrix.
"""
from __future__ import annotations

import math

import numpy as np

# name: (kinds it applies to, what it draws). "f": float dtypes, "i": integer dtypes, "b": bool.
VALUES = {
    "narrow": ("fib", "a in +-100, b in +-[0.5, 10) (floats) or +-[1, 1000) (integers, below "
                      "the largest value of 8-bit ones); bool: either value, evenly"),
    "wide": ("f", "a ~ N(0, 3e4) (clipped to half the dtype's max), b ~ N(0, 0.05)"),
    "huge_quotients": ("f", "|a| = 2^[5, 30], |b| = 2^[-30, -5] within the dtype's range "
                            "(float16: 2^[5, 14] / 2^[-24, -5])"),
    "tiny_divisors": ("f", "a ~ N(0, 100), b ~ N(0, 1e-3)"),
    "subnormal_divisors": ("f", "a ~ N(0, 100), b subnormal, both signs"),
    "near_max": ("f", "|a| in [max/2, max], b in +-[0.5, 10)"),
    "specials": ("fi", "narrow with 5% of each operand inf, -inf, NaN, +0 or -0 (integers: "
                       "the extremes as dividends, 1, -2, min and max as divisors)"),
    "small_divisors": ("i", "b in [1, 8)"),
    "large_divisors": ("i", "|b| in [2^(bits-3), 2^(bits-1)), both signs (int64: 2^61 and up)"),
    "negative_divisors": ("i", "b = -[1, 2^k) with k uniform in [1, bits-1)"),
}
QUICK_VALUES = ("narrow", "wide", "specials")
# The cases the other distributions run on in a default run (narrow runs on every case):
# the dense layout and the outer product, whose shared divisor row takes its own fast paths.
VALUE_CASES = ("contiguous", "outer")


def applies(values: str, dtype: str) -> bool:
    """Whether distribution `values` is defined for `dtype` (floats and integers differ)."""
    kind = "f" if dtype.startswith(("float", "bfloat")) else "b" if dtype == "bool" else "i"
    return kind in VALUES[values][0]


def check(values) -> list[str]:
    """The names, or a ValueError naming the choices."""
    for v in values:
        if v not in VALUES:
            raise ValueError(f"unknown value distribution {v!r}; choose from {', '.join(VALUES)}")
    return list(values)


class _Numpy:
    """The few draws the distributions need, on NumPy (float64 / int64 results)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def uniform(self, lo, hi, shape):
        return self.rng.uniform(lo, hi, shape)

    def normal(self, std, shape):
        return self.rng.standard_normal(shape) * std

    def integers(self, lo, hi, shape):
        return self.rng.integers(lo, hi, shape, dtype=np.int64)

    def choice(self, values, shape):
        return np.asarray(values)[self.rng.integers(0, len(values), shape)]

    def where(self, mask, x, y):
        return np.where(mask, x, y)

    def cast(self, x, dtype: str):
        from stridewise.bench.matrix import _np_dtype
        with np.errstate(over="ignore"):
            return np.asarray(np.asarray(x).astype(_np_dtype(dtype)))


class _Torch:
    """The same draws made by torch on a device (GPU-sized data never passes the host)."""

    def __init__(self, seed: int, device: str):
        import torch
        self.torch, self.device = torch, device
        self.g = torch.Generator(device=device)
        self.g.manual_seed(seed)

    def uniform(self, lo, hi, shape):
        t = self.torch
        return t.rand(shape, generator=self.g, device=self.device, dtype=t.float64) * (hi - lo) + lo

    def normal(self, std, shape):
        t = self.torch
        return t.randn(shape, generator=self.g, device=self.device, dtype=t.float64) * std

    def integers(self, lo, hi, shape):
        t = self.torch
        return t.randint(lo, hi, shape, generator=self.g, device=self.device, dtype=t.int64)

    def choice(self, values, shape):
        t = self.torch
        v = t.tensor(values, device=self.device)
        return v[self.integers(0, len(values), shape)]

    def where(self, mask, x, y):
        t = self.torch
        x = x if t.is_tensor(x) else t.tensor(x, device=self.device)
        y = y if t.is_tensor(y) else t.tensor(y, device=self.device)
        return t.where(mask, x, y)

    def cast(self, x, dtype: str):
        return x.to(getattr(self.torch, dtype))


def drawer(lib: str, seed: int, device: str = "cpu"):
    return _Numpy(seed) if lib == "numpy" else _Torch(seed, device)


def _float_info(dtype: str):
    import ml_dtypes
    from stridewise.bench.matrix import _np_dtype
    return ml_dtypes.finfo(_np_dtype(dtype)) if dtype == "bfloat16" else np.finfo(dtype)


def _sign(d, shape):
    return d.choice([-1.0, 1.0], shape)


def draw(values: str, role: str, dtype: str, d, shape):
    """Operand `role` ("a" or "b") of distribution `values`, as `dtype`, drawn by `d`."""
    if dtype.startswith(("float", "bfloat")):
        return d.cast(_floats(values, role, dtype, d, shape), dtype)
    if dtype == "bool":
        return d.cast(d.integers(0, 2, shape), dtype)
    return d.cast(_integers(values, role, dtype, d, shape), dtype)


def _floats(values, role, dtype, d, shape):
    fi = _float_info(dtype)
    big, tiny, sub = float(fi.max), float(fi.tiny), float(fi.smallest_subnormal)
    narrow_b = lambda: d.uniform(0.5, 10, shape) * _sign(d, shape)     # noqa: E731
    if values in ("narrow", "specials"):
        x = d.uniform(-100, 100, shape) if role == "a" else narrow_b()
        if values == "specials":
            x = d.where(d.uniform(0, 1, shape) < 0.05,
                        d.choice([math.inf, -math.inf, math.nan, 0.0, -0.0], shape), x)
        return x
    if values == "wide":
        if role == "b":
            return d.normal(0.05, shape)
        return d.normal(3e4, shape).clip(-big / 2, big / 2)
    if values == "huge_quotients":
        emax, emin = int(math.log2(big)) - 1, int(math.log2(sub))
        e = d.uniform(5, min(30, emax), shape) if role == "a" else -d.uniform(5, min(30, -emin), shape)
        return 2.0 ** e * _sign(d, shape)
    if values == "tiny_divisors":
        return d.normal(100, shape) if role == "a" else d.normal(1e-3, shape)
    if values == "subnormal_divisors":
        return d.normal(100, shape) if role == "a" else d.uniform(sub, 0.99 * tiny, shape) * _sign(d, shape)
    if values == "near_max":
        return d.uniform(big / 2, big, shape) * _sign(d, shape) if role == "a" else narrow_b()
    raise ValueError(f"{values!r} is not a float distribution")


def _integers(values, role, dtype, d, shape):
    bits = np.iinfo(dtype).bits
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if role == "a":
        x = d.integers(lo // 2, hi // 2, shape)
        if values == "specials":
            x = d.where(d.uniform(0, 1, shape) < 0.05, d.choice([lo, hi, 0, lo + 1], shape), x)
        return x
    if values in ("narrow", "specials"):   # |b| < 128 for 8-bit types: no wrap to 0
        x = d.integers(1, min(1000, hi), shape) * d.choice([-1, 1], shape)
        if values == "specials":       # not -1: torch on CUDA leaves min % -1 to the hardware
            x = d.where(d.uniform(0, 1, shape) < 0.05, d.choice([1, -2, lo, hi], shape), x)
        return x
    if values == "small_divisors":
        return d.integers(1, 8, shape)
    if values == "large_divisors":
        return d.integers(1 << (bits - 3), hi, shape) * d.choice([-1, 1], shape)
    if values == "negative_divisors":
        return -(_below_power(d, d.integers(1, bits - 1, shape), shape) + 1)
    raise ValueError(f"{values!r} is not an integer distribution")


def _below_power(d, k, shape):
    """Integers uniform in [0, 2^k - 1) per element, for per-element k < 63."""
    u = d.uniform(0, 1, shape)
    return (u * (2.0 ** k - 1)).astype(np.int64) if isinstance(u, np.ndarray) else (u * (2.0 ** k - 1)).long()
