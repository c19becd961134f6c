"""Vector math in CPU user kernels (cpu/vmath.h): an element's bits never depend on where it
sits (pack lanes, heads, tails, layouts, modes), results stay within TOLERANCE_ULP of NumPy,
and without libmvec the operation calls libm as written."""
import ctypes
import functools
import subprocess
import sys

import mpmath
import numpy as np
import pytest

import stridewise as sw
from stridewise.ops.builtins import TOLERANCE_ULP
from stridewise.backends import cpu

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from test_builtin_ops import ulp_diff  # noqa: E402

# the functions vmath.h vectorizes, per dtype, and the NumPy ufunc each is compared with
VECTOR = [("exp", "float32"), ("sin", "float32"), ("cos", "float32"), ("tanh", "float32"),
          ("log", "float32"), ("pow", "float32"), ("exp", "float64"), ("sin", "float64"),
          ("cos", "float64"), ("tanh", "float64"), ("log", "float64"), ("pow", "float64")]
NUMPY = {"exp": np.exp, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "log": np.log,
         "pow": np.power}
pytestmark = pytest.mark.skipif(not cpu.vector_math()[0], reason="no libmvec on this host")


@functools.cache
def builds_own_routines() -> bool:
    """Whether kernels carry vmath.h's routines: libmvec found, and kernels built for x86-64
    with AVX2 and FMA (-march=native and STRIDEWISE_CXXFLAGS, as the kernels are)."""
    if not cpu.vector_math()[0]:
        return False
    cxx = cpu.compiler()[0]
    flags = [f for f in cpu.build_flags()[0] if f.startswith(("-m", "-D"))]
    macros = subprocess.run([cxx, *flags, "-dM", "-E", "-x", "c++", "/dev/null"],
                            capture_output=True, text=True).stdout
    return all(f"#define {m} " in macros for m in ("__AVX2__", "__FMA__", "__x86_64__"))


# vmath.h's own routines (float64 exp, sin and cos, float32 log), not libm's
own_routines = pytest.mark.skipif(not builds_own_routines(), reason="kernels without AVX2 and FMA call libm")


def kernel(op):
    if op == "pow":
        return sw.ElementwiseKernel("T x, T y", "T out", "out = pow(x, y)", name="vm_pow")
    return sw.ElementwiseKernel("T x", "T out", f"out = {op}(x)", name=f"vm_{op}")


def specials(dtype):
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, info.tiny / 8, -info.tiny / 8,
                     info.max, -info.max, 1.0, -1.0, 0.5, 88.72, 89.0, -103.9, 709.8, -745.1,
                     1e10, -1e10, 3.14159265, 1e-7], dtype)


def values(dtype, rng, n):
    """Every exponent (random bit patterns), normal-sized values and the special ones."""
    bits = {"float32": np.uint32, "float64": np.uint64}[dtype]
    raw = rng.integers(0, np.iinfo(bits).max, n, dtype=bits, endpoint=True).view(dtype)
    return np.concatenate([specials(dtype), raw, (rng.standard_normal(n) * 20).astype(dtype)])


def bits(x):
    x = np.asarray(x)
    return x.view(f"u{x.itemsize}")


def run(k, op, x, y):
    return k(x, y) if op == "pow" else k(x)


def exponents(dtype, rng, n):
    """pow's exponents: every other one integral, so that negative bases take both signs."""
    y = rng.uniform(-4, 4, n).astype(dtype)
    y[::2] = np.round(y[::2])
    return y


@pytest.mark.parametrize("op,dtype", VECTOR)
def test_an_elements_bits_do_not_depend_on_its_position(op, dtype):
    """The same value in a vector lane, a head, a tail, a strided or transposed layout and a
    one-element call: the same bits."""
    rng = np.random.default_rng(0)
    x = np.tile(specials(dtype), 9)[:199]
    y = exponents(dtype, rng, x.size)
    k = kernel(op)
    whole = bits(run(k, op, x, y))
    for s in range(1, 18):                       # every alignment against the packs
        np.testing.assert_array_equal(bits(run(k, op, x[s:], y[s:])), whole[s:])
    np.testing.assert_array_equal(bits(run(k, op, x[::3], y[::3])), whole[::3])
    grid, ygrid = x[:198].reshape(18, 11), y[:198].reshape(18, 11)
    np.testing.assert_array_equal(bits(run(k, op, grid.T, ygrid.T)), whole[:198].reshape(18, 11).T)
    for j in (0, 4, 5, 7, 150):                  # alone: the scalar path
        np.testing.assert_array_equal(bits(run(k, op, x[j:j + 1], y[j:j + 1])), whole[j:j + 1])


@pytest.mark.parametrize("op,dtype", VECTOR)
def test_vector_math_is_within_the_tolerance_of_numpy(op, dtype):
    rng = np.random.default_rng(1)
    x = values(dtype, rng, 1 << 16)
    y = exponents(dtype, rng, x.size)
    got = run(kernel(op), op, x, y)
    with np.errstate(all="ignore"):
        want = NUMPY[op](x, y) if op == "pow" else NUMPY[op](x)
    if op == "pow":   # a signaling NaN to the power 0: NaN in glibc (IEEE 754-2008), 1 in NumPy
        quiet = np.asarray(1, bits(x).dtype) << (np.finfo(dtype).nmant - 1)
        signaling = np.isnan(x) & ((bits(x) & quiet) == 0)
        want[signaling & (y == 0)] = np.nan
    assert ulp_diff(got, want) <= TOLERANCE_ULP[op][dtype]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_of_a_negative_base_is_the_c_librarys(dtype):
    """glibc's pow and powf (what NumPy calls): (-x)^y = -(x^y) for odd integral y, x^y for even
    or infinite y, the invalid operation's NaN (x86's, sign set) for finite x < 0 with finite
    non-integral y, and pow(-1, NaN) NaN. Non-finite results bit for bit against libm through
    ctypes; every finite one the exact negation or copy of the same kernel's x^y."""
    info = np.finfo(dtype)
    base = np.array([0.0, 1.0, 0.5, 2.0, 3.0, 7.0, 1e-30, 1e30, info.tiny / 8, info.max, 127.0,
                     np.inf, np.nan], dtype)
    ys = np.array([0.0, 1.0, 2.0, 3.0, -1.0, -2.0, -3.0, 0.5, -0.5, 2.5, 127.0, -127.0, 128.0,
                   2.0 ** 24 + 2, 2.0 ** 24 - 1, 2.0 ** 53, np.inf, -np.inf, np.nan, info.max,
                   info.tiny], dtype)
    x, y = (np.ascontiguousarray(v.ravel()) for v in np.meshgrid(base, ys))
    k = kernel("pow")
    pos, neg = k(x, y), k(-x, y)
    libm = ctypes.CDLL("libm.so.6")
    f = libm.powf if dtype == "float32" else libm.pow
    c = ctypes.c_float if dtype == "float32" else ctypes.c_double
    f.argtypes, f.restype = [c, c], c
    want = np.array([f(float(a), float(b)) for a, b in zip(-x, y)], dtype)
    special = ~np.isfinite(want)
    np.testing.assert_array_equal(bits(neg[special]), bits(want[special]))
    whole = y == np.trunc(y)
    odd = whole & (np.trunc(y / 2) != y / 2)
    finite = np.isfinite(want) & ~np.isnan(x)
    flipped = np.where(odd, -pos, pos)
    np.testing.assert_array_equal(bits(neg[finite]), bits(flipped[finite]))
    invalid = np.isfinite(x) & (x > 0) & np.isfinite(y) & ~whole   # among the special ones
    assert np.isnan(want[invalid]).all() and np.signbit(want[invalid]).all()
    assert invalid.sum() > 20 and odd.sum() > 20 and special.sum() > 40


def _own_float64_inputs(op, rng):
    """Where each own routine computes, and its edges: exp's reduction edges (odd multiples of
    ln 2 / 2) and |x| up to 708; sin's and cos's multiples of pi/2 (where r cancels) up to
    2^28, their neighbours, and |x| near 2^-26 (sin x = x below)."""
    if op == "exp":
        edges = np.log(2) / 2 * (rng.integers(-1021, 1021, 3000) * 2 + 1)
        return np.concatenate([rng.uniform(-708, 708, 4000), rng.uniform(-1, 1, 2000), edges,
                               np.nextafter(edges, 0), rng.standard_normal(2000) * 1e-9,
                               [0.0, -0.0, 707.99, -707.99, 708.0, -708.0]])
    quarters = np.round(rng.uniform(-2.0 ** 27, 2.0 ** 27, 2000)) * (np.pi / 2)
    small = np.arange(1, 400) * (np.pi / 2)
    return np.concatenate([rng.uniform(-4, 4, 3000), rng.uniform(-1e4, 1e4, 2000),
                           rng.uniform(-2.0 ** 28, 2.0 ** 28, 1000), quarters,
                           np.nextafter(quarters, np.inf), small, -small, np.nextafter(small, 0),
                           rng.standard_normal(500) * 1e-8,
                           [0.0, -0.0, 2.0 ** -26, -(2.0 ** -26), np.nextafter(2.0 ** -26, 0),
                            1e-300, 5e-324, 2.0 ** 28 - 1, np.pi / 4, -np.pi / 4]])


@own_routines
@pytest.mark.parametrize("op", ["exp", "sin", "cos"])
def test_float64_own_routines_are_within_an_ulp_of_the_correctly_rounded_result(op):
    """vmath.h's own exp, sin and cos of doubles against mpmath at 200 bits; past their ranges
    (|x| > 708, |x| >= 2^28) and at infinities and NaN, glibc's own, bit for bit."""
    mpmath.mp.prec = 200
    x = _own_float64_inputs(op, np.random.default_rng(4))
    got = kernel(op)(x)
    exact = getattr(mpmath, op)
    want = np.array([float(exact(mpmath.mpf(float(v)))) for v in x])
    assert ulp_diff(got, want) <= 1
    zeros = x[x == 0]                                 # mpmath has no -0.0: NumPy's signs
    np.testing.assert_array_equal(bits(got[x == 0]), bits(NUMPY[op](zeros)))
    edge = np.array([708.0001, 709.78, 709.79, -708.0001, -745.13, -745.14, 2.0 ** 28,
                     -(2.0 ** 28), 1e22, -1e300, 1e300, np.inf, -np.inf, np.nan, -np.nan])
    libm = ctypes.CDLL("libm.so.6")
    f = getattr(libm, op)
    f.argtypes, f.restype = [ctypes.c_double], ctypes.c_double
    np.testing.assert_array_equal(bits(kernel(op)(edge)),
                                  bits(np.array([f(float(v)) for v in edge])))


@own_routines
def test_float32_log_rounds_once_from_double_precision():
    """vmath.h's own logf: every 61st positive float (35 million, all exponents, subnormals and
    the rest to libm's logf) against log in doubles rounded to float32: within an ulp, and
    equal but for 1 in 10^6 (where the double itself sits within 2^-29 ulp of a midpoint)."""
    x = np.arange(1, 0x7F800001, 61, dtype=np.uint32).view(np.float32)
    got = kernel("log")(x)
    want = np.log(x.astype(np.float64)).astype(np.float32)
    assert ulp_diff(got, want) <= 1
    assert np.count_nonzero(got != want) <= x.size // 10**6


def test_hoisted_and_unhoisted_forms_agree_with_vector_math():
    """cos(a) computed once in the pre-pass and sin(a*b) in the main kernel, float32: the
    pre-pass's elements sit at other positions than the unhoisted kernel's."""
    rng = np.random.default_rng(2)
    a = (rng.random((5, 1, 67)) * 50).astype("float32")
    b = (rng.random((1, 131, 1)) * 3).astype("float32")
    k = sw.ElementwiseKernel("T a, T b", "T out", "out = sin(a*b) + cos(a) * exp(b)", name="vm_h")
    on, off = k(a, b, algorithm=sw.Auto(hoist=True)), k(a, b, algorithm=sw.Auto(hoist=False))
    assert [h.text for h in sw.explain(k, a, b, algorithm=sw.Auto(hoist=True)).hoisted] == \
        ["cos(a)", "exp(b)"]
    np.testing.assert_array_equal(bits(on), bits(off))


def test_without_libmvec_the_operation_calls_libm(monkeypatch):
    """STRIDEWISE_VMATH=0 (or a host without libmvec): the kernel is built without it, and
    its results are libm's scalar ones, bit for bit."""
    monkeypatch.setenv("STRIDEWISE_VMATH", "0")
    cpu.vector_math.cache_clear()
    try:
        assert cpu.vector_math() == ((), ())
        libm = ctypes.CDLL("libm.so.6")
        libm.tanhf.argtypes, libm.tanhf.restype = [ctypes.c_float], ctypes.c_float
        x = np.random.default_rng(3).standard_normal(301).astype("float32") * 4
        k = sw.ElementwiseKernel("T x", "T out", "out = tanh(x)", name="vm_off")
        want = np.array([libm.tanhf(float(v)) for v in x], "float32")
        np.testing.assert_array_equal(bits(k(x)), bits(want))
    finally:
        monkeypatch.undo()
        cpu.vector_math.cache_clear()
    assert cpu.vector_math()[0] == ("-DSW_VMATH=1",)
