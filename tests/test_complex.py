"""complex64 and complex128 through the built-in ops, casts, promotion and user kernels.

On the CPU every op is NumPy's bit for bit (NumPy's arithmetic formulas, and the C
library's cexp, clog, ... which NumPy and torch both call); torch's CPU results agree bit for
bit except where torch's own kernels round differently (its vectorized division and
reciprocal, its scalar tail's fused multiply, abs in complex128): those within
COMPLEX_TOLERANCE_ULP, measured norm-wise (the largest part difference in ulps of the result's
larger part). The GPU's transcendentals are formulas, within COMPLEX_TOLERANCE_ULP of NumPy.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stridewise as sw
from oracle import complex_ulps as ulps, same_values as same
from stridewise.ops.builtins import COMPLEX_TOLERANCE_ULP as TOLERANCE_ULP, OPS
from stridewise.ops.complex import COMPLEX_OPS, NUMPY_ONLY, ORDER

torch = pytest.importorskip("torch")

COMPLEX = ("complex64", "complex128")
REAL = {"complex64": np.float32, "complex128": np.float64}
NUMPY_NAME = {"abs": "absolute", "pow": "power"}
TORCH_NAME = {"negative": "neg", "equal": "eq", "not_equal": "ne"}
UNARY = ("abs", "negative", "exp", "log", "sqrt", "sin", "cos", "tanh", "isnan", "isinf",
         "isfinite", "logical_not", "square", "reciprocal")
NIN = {"sign": 1, "clip": 3}
BINARY = ("add", "subtract", "multiply", "divide", "pow", "equal", "not_equal", "logical_and",
          "logical_or", "logical_xor")


def values(dtype, n=2053, seed=0, specials=True):
    """Random complex values over several magnitudes, with every pair of special parts."""
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.integers(-3, 4, n)
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * scale
    if specials:
        parts = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan]
        sp = [complex(r, i) for r in parts for i in parts]
        x[: len(sp)] = sp
    return x.astype(dtype)


def numpy_op(op, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(np, NUMPY_NAME.get(op, op))(*args)


def test_complex_ops_are_the_table_ops():
    for op in COMPLEX_OPS:
        assert set(COMPLEX) <= set(OPS[op].dtypes), op
    for op in ("remainder", "fmod", "floor_divide", "floor"):
        assert not set(COMPLEX) & set(getattr(OPS.get(op), "dtypes", ())), op


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", UNARY + BINARY + NUMPY_ONLY)
def test_numpy_bit_for_bit(op, dtype):
    """Every complex op on NumPy arrays equals NumPy's, specials included, contiguous and
    strided, with NumPy's result dtype (abs: the real dtype; comparisons and tests: bool).
    (NumPy's complex64 product with a negative-stride operand takes its scalar loop, which
    rounds both products; stridewise keeps the SIMD loop's formula there: docs/semantics.md.)"""
    a, b = values(dtype, seed=1), values(dtype, seed=2)
    if op == "pow":
        b = np.concatenate([b[:1000], np.arange(-5, 5, dtype=dtype), b[1000:] * 0.25]).astype(dtype)
        b = b[: len(a)]
    args = (a, b, values(dtype, seed=3))[: NIN.get(op, 2 if op in BINARY + NUMPY_ONLY else 1)]
    if op == "clip":   # bounds in order too, and ties in the real parts
        args = (a, np.minimum(b, args[2]), np.maximum(b, args[2]).real.astype(dtype))
        args = tuple(x.astype(dtype) for x in args)
    fn = getattr(sw, op)
    for view in (lambda x: x, lambda x: x[::3]):
        xs = [view(x) for x in args]
        got, want = fn(*xs), numpy_op(op, *xs)
        assert got.dtype == want.dtype
        bad = ~same(got, want)
        assert not bad.any(), (op, [x[bad][:4] for x in xs], got[bad][:4], want[bad][:4])


@pytest.mark.parametrize("dtype", COMPLEX)
def test_pow_of_complex_zero(dtype):
    """A complex zero (any signs) to any power, as NumPy 2's npy_cpow: 1 for a zero exponent,
    0 for an exponent of positive real part (imaginary part and NaN there notwithstanding),
    NaN otherwise; integer and real exponents alike."""
    nan, inf = float("nan"), float("inf")
    zeros = np.array([0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0)], dtype)
    exps = np.array([1.5 - 2j, -1.5 + 2j, 2j, 1.5, -2, 0, 3, 2, 1, inf, nan, complex(1.5, nan),
                     complex(-0.0, 0.0), 1e-30 + 5j], dtype)
    a, b = np.repeat(zeros, len(exps)), np.tile(exps, len(zeros))
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    got = sw.pow(a, b)
    assert got.dtype == want.dtype
    bad = ~same(got, want)
    assert not bad.any(), (a[bad], b[bad], got[bad], want[bad])


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", UNARY + BINARY)
def test_torch_cpu(op, dtype):
    """torch tensors: torch's result dtype, its bits where torch rounds as the formula does,
    else within TOLERANCE_ULP[op][dtype] (finite results; specials excluded, as torch's
    vectorized division and its scalar tail treat them differently)."""
    a, b = values(dtype, seed=3, specials=False), values(dtype, seed=4, specials=False)
    args = [torch.from_numpy(x) for x in (a, b)[: 2 if op in BINARY else 1]]
    got = getattr(sw, op)(*args)
    tf = torch.square if op == "square" else getattr(torch, TORCH_NAME.get(op, op))
    want = tf(*args)
    assert got.dtype == want.dtype
    tol = TOLERANCE_ULP.get(op, {}).get(f"torch {dtype}", 0)
    if tol == 0 or want.dtype == torch.bool:
        assert same(got.numpy(), want.numpy()).all(), op
    else:
        assert ulps(got.numpy(), want.numpy()) <= tol


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sigmoid_is_torchs(dtype):
    """torch.sigmoid of complex (NumPy has no sigmoid): 1 / (1 + exp(-z)) as NumPy's complex
    arithmetic rounds it, bit for bit on the CPU, and within TOLERANCE_ULP of torch's CPU
    kernel (its vectorized division)."""
    a = values(dtype, seed=14, specials=False)
    with np.errstate(all="ignore"):
        formula = (1 / (1 + np.exp(-a))).astype(dtype)
    got = sw.sigmoid(torch.from_numpy(a))
    want = torch.sigmoid(torch.from_numpy(a))
    assert got.dtype == want.dtype
    assert same(got.numpy(), formula).all()
    assert ulps(got.numpy(), want.numpy()) <= TOLERANCE_ULP["sigmoid"][f"torch {dtype}"]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_multiply_conventions(dtype):
    """NumPy's product fuses one of each part's two products (its SIMD loop); torch's rounds
    both (its CPU kernel). Each library's own formula, bit for bit, on the other's arrays too
    (convention follows the library)."""
    a, b = values(dtype, seed=5, specials=False), values(dtype, seed=6, specials=False)
    R = REAL[dtype]
    plain = (a.real * b.real - a.imag * b.imag) + 1j * (a.real * b.imag + a.imag * b.real)
    got = sw.multiply(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert same(got.real, (a.real * b.real - a.imag * b.imag).astype(R)).all()
    assert same(got.imag, (a.real * b.imag + a.imag * b.real).astype(R)).all()
    assert same(sw.multiply(a, b), a * b).all()
    assert not same(a * b, plain.astype(dtype)).all()    # the two formulas do differ


def test_python_complex_scalars_promote_as_each_library():
    x32 = np.arange(4, dtype=np.float32)
    for x in (x32, np.arange(4, dtype=np.int16), x32.astype(np.float16)):
        assert sw.add(x, 2j).dtype == np.add(x, 2j).dtype
    for x in (x32, np.arange(4, dtype=np.int16), x32.astype(np.float64)):
        t = torch.from_numpy(x)
        assert sw.add(t, 2j).dtype == torch.add(t, 2j).dtype
    with pytest.raises(TypeError, match="complex32"):     # torch's ComplexHalf: not provided
        sw.add(torch.from_numpy(x32.astype(np.float16)), 2j)
    c = np.array([1 + 2j, -3j], np.complex64)
    np.testing.assert_array_equal(sw.multiply(c, 1 - 1j), c * np.complex64(1 - 1j))
    assert sw.multiply(c, 2.5).dtype == np.complex64
    got = sw.subtract(torch.from_numpy(c), 1.5 + 0.5j)
    assert torch.equal(got, torch.from_numpy(c) - (1.5 + 0.5j))


@pytest.mark.parametrize("src", ["float16", "float32", "float64", "int8", "uint64", "bool",
                                 "complex64", "complex128"])
@pytest.mark.parametrize("dst", ["complex64", "complex128", "float32", "float64", "float16",
                                 "int32", "bool"])
def test_cast(src, dst):
    """To complex: (x, 0). From complex: the real part (NumPy's astype, torch's .to), bool:
    either part nonzero."""
    x = values("complex128", n=257, seed=7, specials=False) * 50
    x[:4] = [0, 1j, -0.0, 3]
    x = x.astype(src) if src.startswith("complex") else x.real.astype(src)
    if not np.dtype(dst).kind in "fc" and np.dtype(src).kind in "fc":
        x = x[np.isfinite(x)]                       # float -> int of specials is undefined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = x.astype(dst)
    assert same(sw.cast(x, dst), want).all()
    t = torch.from_numpy(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tw = t.to(getattr(torch, dst))
    assert torch.equal(sw.cast(t, dst), tw)


def test_where_with_complex_branches():
    a, b = values("complex64", n=100, seed=8), values("complex128", n=100, seed=9)
    c = a.real > 0
    assert same(sw.where(c, a, b), np.where(c, a, b)).all()
    assert same(sw.where(c, a, 1j), np.where(c, a, np.complex64(1j))).all()
    # torch's result dtype; the values against NumPy's (torch 2.13's CPU where of mixed complex
    # dtypes took y at the last element of this case)
    t = sw.where(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b))
    assert t.dtype == torch.result_type(torch.from_numpy(a), torch.from_numpy(b))
    assert same(t.numpy(), np.where(c, a, b)).all()


@pytest.mark.parametrize("op", ORDER)
def test_complex_order_is_numpys_only(op):
    """NumPy orders complex values lexicographically (its CLT, CGE, ... macros; maximum keeps
    x1 on a tie or a NaN part); torch raises RuntimeError, and so does stridewise on tensors.
    Values: every pair of special parts, in test_numpy_bit_for_bit."""
    a = np.array([1 + 2j, 1 + 3j, 2 - 1j, complex(1, math.nan)], np.complex64)
    b = np.array([1 + 3j, 1 + 2j, 1 + 9j, 0j], np.complex64)
    assert same(getattr(sw, op)(a, b), numpy_op(op, a, b)).all()
    with pytest.raises(RuntimeError, match="torch orders no complex"):
        getattr(sw, op)(torch.from_numpy(a), torch.from_numpy(b))
    with pytest.raises(RuntimeError):       # torch's own answer
        getattr(torch, op)(torch.from_numpy(a), torch.from_numpy(b))


def test_sign_and_clip_are_numpys_only():
    """numpy/_core/tests/test_umath.py::TestSign::test_sign_complex: its inputs and targets
    (sign(z) = z / |z|; an infinite part with a finite one gives that part's sign, two
    infinite parts or a NaN give NaN, 0 gives 0), into a new array and into out=; np.clip
    orders complex bounds lexicographically. torch raises on both (torch.sign points to
    torch.sgn; clamp is not defined for complex), and so does stridewise on tensors."""
    inf, nan = math.inf, math.nan
    a = np.array([inf, -inf, complex(0, inf), complex(0, -inf), complex(inf, inf),
                  complex(inf, -inf), nan, complex(0, nan), complex(nan, nan), 0.0, 3.0, -3.0,
                  -2j, 3.0 + 4.0j, -8.0 + 6.0j])
    tgt = np.array([1, -1, 1j, -1j] + [complex(nan, nan)] * 5 + [0, 1, -1, -1j, 0.6 + 0.8j, -0.8 + 0.6j])
    out = np.zeros(a.shape, a.dtype)
    res = sw.sign(a, out=out)
    assert res is out
    for got in (sw.sign(a), out):
        assert got.dtype == np.complex128
        np.testing.assert_equal(got, tgt)
        assert same(got, np.sign(a)).all()
    z = np.array([3 + 4j, -3 - 4j, 0j, complex(-0.0, -0.0), complex(inf, 1), complex(1, -inf),
                  1e-300 + 1e-300j, 1e300 - 1e300j], np.complex128)
    for dtype in COMPLEX:
        assert same(sw.sign(z.astype(dtype)), np.sign(z.astype(dtype))).all()
    lo, hi = np.complex128(1 + 1j), np.complex128(2 + 2j)
    x = np.array([0j, 1 + 0.5j, 1 + 3j, 1.5 - 9j, 2 + 1j, 2 + 3j, 5j - 4, complex(nan, 0)])
    assert same(sw.clip(x, lo, hi), np.clip(x, lo, hi)).all()
    assert same(sw.clip(x, lo, hi), np.array([lo, lo, 1 + 3j, 1.5 - 9j, 2 + 1j, hi, lo,
                                              complex(nan, 0)])).all()
    t = torch.from_numpy(z)
    with pytest.raises(RuntimeError, match="torch.sgn"):
        sw.sign(t)
    with pytest.raises(RuntimeError):       # torch's own answer
        torch.sign(t)
    with pytest.raises(RuntimeError, match="complex128 torch tensors"):
        sw.clip(t, t, t)
    with pytest.raises(RuntimeError):
        torch.clamp(t, t, t)


@pytest.mark.parametrize("op", ["remainder", "fmod", "floor_divide", "floor", "ceil", "trunc",
                                "copysign", "bitwise_and", "left_shift", "relu", "fma"])
def test_ops_undefined_for_complex_raise_the_librarys_error(op):
    """NumPy raises TypeError, torch RuntimeError: the error is both kinds, it names the
    dtype, and out stays untouched."""
    fn = getattr(sw, op)
    nin = {"floor": 1, "ceil": 1, "trunc": 1, "relu": 1, "fma": 3}.get(op, 2)
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    for x, err in ((a, TypeError), (torch.from_numpy(a), RuntimeError)):
        with pytest.raises(err, match="complex64"):
            fn(*[x] * nin)
    out = np.full(2, 7 + 7j, np.complex64)
    with pytest.raises(TypeError):
        fn(*[a] * nin, out=out)
    assert (out == 7 + 7j).all()


@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble])
def test_long_double_names_the_fix(dtype):
    x = np.ones(3, dtype)
    with pytest.raises(TypeError, match="long double.*float64"):
        sw.add(x, x)
    with pytest.raises(TypeError, match="long double"):
        sw.ElementwiseKernel("T x", "T y", "y = x")(x)


# -- user kernels -----------------------------------------------------------------------------

def test_user_kernel_complex_names():
    """complex<float> as CuPy writes it, pycuda::complex<double> as PyCUDA does, and T bound
    by a complex array; the math names found by argument-dependent lookup."""
    a = values("complex64", n=64, seed=10, specials=False)
    s = np.linspace(-2, 2, 64, dtype=np.float32)
    k = sw.ElementwiseKernel("complex<float> x, float32 s", "complex<float> y",
                             "complex<float> t = x * s; y = t + conj(x) * complex<float>(abs(x), 0)")
    want = (a * s.astype(np.complex64)) + np.conj(a) * np.abs(a).astype(np.complex64)
    np.testing.assert_allclose(k(a, s), want, rtol=1e-6)
    z = a.astype(np.complex128)
    w = np.arange(64, dtype=np.float64)
    k2 = sw.ElementwiseKernel("pycuda::complex<double> *z, double *w", "z[i] = pycuda::conj(z[i]) * w[i]")
    k2(z, w)
    np.testing.assert_array_equal(z, np.conj(a.astype(np.complex128)) * w)
    t = sw.ElementwiseKernel("T x, T y", "T z", "z = x * y - T(1)")
    got = t(a, 2j)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, a * np.complex64(2j) - 1, rtol=1e-6)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_cupy_userkernel_dtype_loop(dtype):
    """CuPy test_userkernel.py::TestUserkernel::test_numpy_scalar and
    TestUserkernelScalar::test_scalar for complex64 / complex128 (for_all_dtypes): a NumPy
    scalar, and Python ints at the int64 edges cast by astype, added to shaped_arange."""
    add = sw.ElementwiseKernel("T x, T y", "T z", "z = x + y")
    x = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    np.testing.assert_array_equal(add(x, np.dtype(dtype).type(2)), x + np.dtype(dtype).type(2))
    for value in (-1, 2**32, 2**63 - 1, -(2**63)):
        y = np.array(value).astype(dtype)[()]
        got = add(x, y)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, x + y)


# -- layouts: the kernels' modes move 8- and 16-byte elements -----------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_every_layout(dtype):
    """Broadcast rows, outer products, transposes, short periodic rows and strided slices:
    every mode's loads and stores of complex elements (complex128: one element a pack)."""
    rng = np.random.default_rng(11)
    def draw(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    cases = [(draw(64, 130), draw(130)), (draw(64, 1), draw(1, 130)), (draw(130, 64).T, draw(64, 130)),
             (draw(300, 6), draw(1, 6)), (draw(64, 260)[:, ::2], draw(64, 1)), (draw(1001)[1:], draw(1000))]
    for a, b in cases:
        # against NumPy on dense copies: NumPy's own broadcast loop rounds an outer product's
        # last column differently from its dense loop (its formula is the dense one)
        da, db = (np.ascontiguousarray(x) for x in np.broadcast_arrays(a, b))
        assert same(sw.multiply(a, b), da * db).all()
        assert same(sw.divide(a, b), da / db).all()
    assert sw.explain(sw.multiply, *cases[0]).pack == 16 // np.dtype(dtype).itemsize


@pytest.mark.parametrize("dtype", COMPLEX)
def test_torch_pow_by_its_special_numbers(dtype):
    """torch's pow of a complex tensor by a number (at::pow's Scalar overload): 0 gives ones
    and 1 the base whatever it holds (exp(0 log z) was NaN for an infinite z; found by
    tools/fuzz_calls.py), 0.5 sqrt, 2 and 3 products, -0.5, -1 and -2 one over those, every
    pair of extreme parts included: NaN where torch's is, within TOLERANCE_ULP['pow']['torch
    <dtype>'] elsewhere (torch's vector reciprocal), bit for bit for 0, 1 and 0.5."""
    z = np.concatenate([extremes(dtype), values(dtype, seed=5)])
    for e in (0, 1, 0.5, 2, 3, -0.5, -1, -2, 0j, 1 + 0j):
        want = torch.pow(torch.from_numpy(z), e).numpy()
        got = sw.pow(torch.from_numpy(z), e).numpy()
        if e in (0, 1, 0.5):
            assert same(got, want).all(), e
        else:
            assert close(got, want, TOLERANCE_ULP["pow"][f"torch {dtype}"]), e


# -- the device's formulas, on the host --------------------------------------------------------

def extremes(dtype) -> np.ndarray:
    """Every pair of parts from zeros, ones, infinities, NaN, the smallest normal and
    subnormal, the largest finite value, and magnitudes far from 1."""
    fi = np.finfo(REAL[dtype])
    parts = [0.0, -0.0, 1.0, -2.5, 0.5, 7.0, math.inf, -math.inf, math.nan, float(fi.tiny),
             float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.max),
             -float(fi.max), 1e30, -1e-30, 100.0]
    z = np.empty(len(parts) ** 2, dtype)
    z.real, z.imag = np.repeat(parts, len(parts)), np.tile(parts, len(parts))
    return z


def formula(name: str, dtype: str, nin: int = 1):
    """A CPU user kernel calling the device's function sw::formulas::`name` (the host's
    built-in ops call the C library's), or `name` itself where it is a call expression."""
    ins = ", ".join(f"{dtype} x{i}" for i in range(nin))
    call = name if "(" in name else f"sw::formulas::{name}(x0)"
    return sw.ElementwiseKernel(ins, f"{dtype} y", f"y = {call}", "device_formula")


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "sin", "cos", "tanh"])
def test_device_formulas_against_numpy(op, dtype):
    """The formulas the GPU computes, compiled on the host, against NumPy (the C library's
    cexp, clog, ...): C99 Annex G's special values exactly (NaN in the same parts, infinities
    with their signs), subnormal and near-max arguments scaled, finite results within
    TOLERANCE_ULP[op]['cuda <dtype>']. The GPU's own results are test_gpu_against_numpy's."""
    x = np.concatenate([extremes(dtype), values(dtype, seed=21)])
    got, want = formula(op, dtype)(x), numpy_op(op, x)
    assert close(got, want, TOLERANCE_ULP[op][f"cuda {dtype}"]), (op, dtype)


def _pow_domain(a, b):
    """Pairs where exp(b log a) is well conditioned (|a| in [1e-3, 10], |b| <= 3, as
    TOLERANCE_ULP['pow'] is measured) or any part is infinite or NaN: beyond, a 1-ulp
    difference in log a is amplified by |b log a| in both libraries' results."""
    def finite(v):
        return np.isfinite(v.real) & np.isfinite(v.imag)
    keep = ~finite(a) | ~finite(b) | ((np.abs(a) >= 1e-3) & (np.abs(a.real) <= 10) & (np.abs(a.imag) <= 10)
                                      & (np.abs(b.real) <= 3) & (np.abs(b.imag) <= 3))
    return a[keep], b[keep]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_device_pow_formula_against_numpy(dtype):
    """NumPy's npy_cpow with the device's exp(b log a) (C's complex product between, whose
    infinities Annex G recovers), compiled on the host, against NumPy: every pair of extreme
    values, special results exactly, finite ones within TOLERANCE_ULP['pow']['cuda <dtype>']."""
    z = extremes(dtype)
    a, b = _pow_domain(np.repeat(z, len(z)), np.tile(z, len(z)))
    got, want = formula("sw::numpy_pow<true>(x0, x1)", dtype, 2)(a, b), numpy_op("pow", a, b)
    assert close(got, want, TOLERANCE_ULP["pow"][f"cuda {dtype}"])


@pytest.mark.parametrize("dtype", COMPLEX)
def test_device_hypot_against_numpys(dtype):
    """|z| as the device's sign computes it, against np.hypot: finite wherever np.hypot is
    (CUDA's own hypot rounds (max, 1) up to inf); on the host, the same bits."""
    x = np.concatenate([extremes(dtype), values(dtype, seed=22)])
    k = sw.ElementwiseKernel(f"{dtype} x", f"{REAL[dtype].__name__} y",
                             "y = sw::formulas::hypot(x.re, x.im)", "device_hypot")
    with np.errstate(all="ignore"):
        assert same(k(x), np.hypot(x.real, x.imag)).all()


# -- the GPU ------------------------------------------------------------------------------------

def close(got, want, tol) -> bool:
    """Per element: each part NaN where want's is, infinite where want's is (its sign too),
    and the finite parts within tol ulps of want's larger finite part."""
    g = np.stack([got.real, got.imag]).astype(np.float64)
    w = np.stack([want.real, want.imag]).astype(np.float64)
    fin = np.isfinite(w)
    if not ((np.isnan(g) == np.isnan(w)).all() and (g[~fin & ~np.isnan(w)] == w[~fin & ~np.isnan(w)]).all()):
        return False
    big = np.where(fin, np.abs(w), 0).max(axis=0)
    unit = np.spacing(np.maximum(big, np.finfo(want.real.dtype).tiny).astype(want.real.dtype))
    with np.errstate(invalid="ignore"):
        return bool((np.where(fin, np.abs(g - w), 0) <= tol * unit.astype(np.float64)).all())


def _cuda_oracle_ok(op, dtype, got, want):
    tol = TOLERANCE_ULP.get(op, {}).get(f"cuda {dtype}", 0)
    if tol == 0 or got.dtype == bool:
        return bool(same(got, want).all())
    return close(got, want, tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", UNARY + BINARY)
def test_gpu_against_numpy(op, dtype):
    """Every complex op on CUDA (torch tensors with convention numpy, so the formulas are
    NumPy's) against NumPy on the CPU: arithmetic bit for bit, transcendentals within
    TOLERANCE_ULP[op]['cuda <dtype>'] (`close`: special parts exactly), the extreme values
    (every pair of special, tiny and huge parts) included."""
    a, b = values(dtype, seed=12, specials=False), values(dtype, seed=13, specials=False)
    if op == "pow":   # integer exponents (NumPy's repeated products), then |b| <= 3
        b = np.concatenate([np.arange(-5, 5), b[10:] / np.maximum(1, np.abs(b[10:]) / 3)]).astype(dtype)
    if op in ("exp", "sin", "cos", "tanh", "pow"):   # away from overflow: |a| <= 10
        a = (a / np.maximum(1, np.abs(a) / 10)).astype(dtype)
    if op in UNARY:
        a = np.concatenate([extremes(dtype), a])
    elif op == "pow":
        z = extremes(dtype)
        pa, pb = _pow_domain(np.repeat(z, len(z)), np.tile(z, len(z)))
        a, b = np.concatenate([pa, a]), np.concatenate([pb, b])
    args = (a, b)[: 2 if op in BINARY else 1]
    want = numpy_op(op, *args)
    import cupy
    got = cupy.asnumpy(getattr(sw, op)(*[cupy.asarray(x) for x in args]))
    assert got.dtype == want.dtype
    assert _cuda_oracle_ok(op, dtype, got, want), (op, dtype, ulps(got, want))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", COMPLEX)
def test_gpu_sigmoid(dtype):
    """Complex sigmoid on CUDA against 1 / (1 + exp(-z)) in NumPy, |z| <= 10 (exp's range),
    within TOLERANCE_ULP['sigmoid']['cuda <dtype>']."""
    a = values(dtype, seed=15, specials=False)
    a = (a / np.maximum(1, np.abs(a) / 10)).astype(dtype)
    with np.errstate(all="ignore"):
        want = (1 / (1 + np.exp(-a))).astype(dtype)
    got = sw.sigmoid(torch.from_numpy(a).cuda()).cpu().numpy()
    assert got.dtype == want.dtype
    print("sigmoid", dtype, "ulps", ulps(got, want))
    assert _cuda_oracle_ok("sigmoid", dtype, got, want), ulps(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["sign", "clip"])
def test_gpu_sign_and_clip_against_numpy(op, dtype):
    """NumPy's complex sign and clip on CuPy arrays, every pair of special parts included,
    against NumPy on the CPU: clip bit for bit, sign within TOLERANCE_ULP['sign'] (CUDA's
    hypot against glibc's; 2 ulp measured on the H200), its specials exactly."""
    import cupy
    a, b, c = values(dtype, seed=14), values(dtype, seed=15), values(dtype, seed=16)
    if op == "sign":     # and |z| past the range: CUDA's hypot rounds (max, 1) up to inf
        a = np.concatenate([extremes(dtype), a])
    args = (a,) if op == "sign" else (a, np.minimum(b, c), np.maximum(b, c))
    want = numpy_op(op, *args)
    got = cupy.asnumpy(getattr(sw, op)(*[cupy.asarray(x) for x in args]))
    assert got.dtype == want.dtype
    assert _cuda_oracle_ok(op, dtype, got, want), (op, dtype, ulps(got, want))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", COMPLEX)
def test_gpu_torch_arithmetic(dtype):
    """torch CUDA tensors: add, subtract, negative, equal bit for bit with torch; multiply and
    divide within TOLERANCE_ULP (torch's CUDA kernels fuse products as nvcc chooses)."""
    a, b = (torch.from_numpy(values(dtype, seed=s, specials=False)).cuda() for s in (14, 15))
    for op in ("add", "subtract", "multiply", "divide", "negative", "equal", "abs", "exp", "sqrt"):
        args = (a, b) if op in BINARY else (a,)
        got = getattr(sw, op)(*args)
        want = getattr(torch, TORCH_NAME.get(op, op))(*args)
        assert got.dtype == want.dtype
        g, w = got.cpu().numpy(), want.cpu().numpy()
        if op in ("multiply", "divide"):     # a fused product errs by ulps of |a| |b|
            x, y = np.abs(args[0].cpu().numpy()), np.abs(args[1].cpu().numpy())
            scale = x * y if op == "multiply" else x / y
            assert (np.abs(g - w) <= 8 * np.finfo(REAL[dtype]).eps * scale).all(), op
        elif op in ("abs", "exp", "sqrt"):
            assert ulps(g, w) <= max(TOLERANCE_ULP[op].get(f"cuda {dtype}", 0), 2), op
        else:
            assert torch.equal(got, want), op


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", COMPLEX)
def test_gpu_layouts_and_user_kernel(dtype):
    import cupy
    rng = np.random.default_rng(16)
    def draw(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    for a, b in [(draw(640, 1300), draw(1300)), (draw(640, 1), draw(1, 1300)),
                 (draw(1300, 640).T, draw(640, 1300)), (draw(3000, 6), draw(1, 6)),
                 (draw(640, 2600)[:, ::2], draw(640, 1)), (draw(10001)[1:], draw(10000))]:
        got = cupy.asnumpy(sw.multiply(cupy.asarray(a), cupy.asarray(b)))
        assert same(got, a * b).all()
    k = sw.ElementwiseKernel("complex<float> x, T y", "T z", "z = T(x) * y + y")
    x, y = draw(1000).astype(np.complex64), draw(1000)
    got = cupy.asnumpy(k(cupy.asarray(x), cupy.asarray(y)))
    np.testing.assert_allclose(got, x.astype(dtype) * y + y, rtol=1e-5)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(COMPLEX),
       op=st.sampled_from(["add", "multiply", "divide", "equal", "abs", "sqrt", "maximum"]))
def test_hypothesis_shapes_and_strides(data, dtype, op):
    """Random shapes, broadcasting and slices (negative steps included) against NumPy's dense
    loop on contiguous copies (NumPy's own negative-stride complex64 product rounds
    otherwise, as docs/semantics.md says)."""
    shape = data.draw(st.lists(st.integers(1, 7), min_size=1, max_size=3), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))

    def operand():
        full = [n * 2 for n in shape]
        base = (rng.standard_normal(full) + 1j * rng.standard_normal(full)).astype(dtype)
        idx = []
        for n in shape:
            step = data.draw(st.sampled_from([1, 2, -1, -2]))
            keep = data.draw(st.booleans())      # or broadcast along this dim
            idx.append(slice(None, None, step) if keep else slice(0, 1))
        view = base[tuple(idx)]
        return view[tuple(slice(0, n) for n in shape)] if view.ndim else view

    nin = 1 if op in ("abs", "sqrt") else 2
    xs = [operand() for _ in range(nin)]
    dense = [x.copy(order="C") for x in np.broadcast_arrays(*xs)]   # fresh: positive strides
    got = getattr(sw, op)(*xs)
    want = numpy_op(op, *dense)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert same(got, want).all()


_GRAD_BINARY = ("add", "subtract", "multiply", "divide", "pow")


@pytest.mark.parametrize("op, second", [(op, s) for op in _GRAD_BINARY for s in ("complex", "real")]
                         + [(op, None) for op in ("exp", "log", "sqrt", "sin", "cos", "abs", "negative",
                                                  "square", "reciprocal", "tanh", "sigmoid")])
def test_autograd_matches_torchs_complex_convention(op, second):
    """Gradients through complex ops are torch's (grad * conj(f'(z)); a real input of a
    complex op gets the real part), against torch's own ops, with a real loss that mixes the
    parts; and torch.autograd.gradcheck on the complex inputs."""
    binary = op in _GRAD_BINARY
    gen = torch.Generator().manual_seed(0)
    xs = [torch.randn(6, dtype=torch.complex128, generator=gen, requires_grad=True)]
    if binary:
        dt = torch.complex128 if second == "complex" else torch.float64
        xs.append(torch.randn(6, dtype=dt, generator=gen, requires_grad=True))
    ref = getattr(torch, TORCH_NAME.get(op, op))

    def loss(f):
        y = f(*xs)
        return (y.real * 1.3 + y.imag * 0.7).sum() if y.is_complex() else (y * 1.3).sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = torch.autograd.grad(loss(getattr(sw, op)), xs)
        want = torch.autograd.grad(loss(ref), xs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12)
    if second != "real":
        assert torch.autograd.gradcheck(getattr(sw, op), tuple(xs))
