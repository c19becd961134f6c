"""Broadcast-invariant hoisting: hoisted user kernels are bit-identical to unhoisted ones, never
allocate at output scale, and whatever is outside the parsed subset runs as before."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import stridewise as sw
from stridewise.operands import arrays as _arrays
from stridewise.codegen import hoist as _hoist
from stridewise.ops.builtins import TOLERANCE_ULP
from test_builtin_ops import ulp_diff

OFF, ON = sw.Auto(hoist=False), sw.Auto(hoist=True)


def bits(x):
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}")


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(bits(a), bits(b))


SEED = "out = sin(a*b) + sqrt(c) + cos(a)/log(cos(b)+2)"


def seed_inputs(dtype, rng):
    a = (rng.random((8, 1, 256)) + 0.1).astype(dtype)
    b = (rng.random((1, 64, 1)) + 0.1).astype(dtype)
    c = (rng.random((64, 256)) + 0.1).astype(dtype)
    return a, b, c


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_seed_expression_hoists_bit_identically(dtype):
    rng = np.random.default_rng(1)
    a, b, c = seed_inputs(dtype, rng)
    k = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed")
    ref = k(a, b, c, algorithm=OFF)
    got = k(a, b, c)                      # Auto: the output is big enough
    same_bits(got, ref)
    # and the same value as NumPy's op-by-op evaluation (a different evaluation order,
    # so a tolerance: only the hoisted-vs-unhoisted comparison is exact)
    np.testing.assert_allclose(got, np.sin(a * b) + np.sqrt(c) + np.cos(a) / np.log(np.cos(b) + 2),
                               rtol={"float32": 1e-5, "float64": 1e-13}[dtype])
    hoisted = {h.text: (h.dtype, h.shape) for h in sw.explain(k, a, b, c).hoisted}
    assert hoisted == {"cos(a)": (dtype, (8, 1, 256)), "log(cos(b)+2)": (dtype, (1, 64, 1)),
                       "sqrt(c)": (dtype, (64, 256))}
    text = str(sw.explain(k, a, b, c))
    assert "hoist1 = cos(a)  [" in text and "2,048 elements" in text
    assert "out = sin(a*b) + hoist0 + hoist1/hoist2;" in text


def test_seed_pycuda_form_and_out():
    rng = np.random.default_rng(2)
    a, b, c = seed_inputs("float64", rng)
    k = sw.ElementwiseKernel("double *out, double *a, double *b, double *c",
                             "out[i] = sin(a[i] * b[i]) + sqrt(c[i]) + cos(a[i]) / log(cos(b[i]) + 2)",
                             name="seed_pycuda")
    ref = np.empty((8, 64, 256))
    got = np.empty((8, 64, 256))[:, :, ::-1]        # a reversed out: any strides
    k(ref, a, b, c, algorithm=OFF)
    k(got, a, b, c)
    same_bits(got, ref)
    assert len(sw.explain(k, got, a, b, c).hoisted) == 3


def test_nothing_output_sized_is_allocated(monkeypatch):
    rng = np.random.default_rng(3)
    a, b, c = seed_inputs("float32", rng)
    k = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed_alloc")
    out = np.empty((8, 64, 256), np.float32)
    k(a, b, c, out)                    # compile and check outside the recording
    sizes = []
    real = _arrays.allocator

    def recording(lib, device, shape, dtype):
        sizes.append(_arrays._prod(shape))
        return real(lib, device, shape, dtype)

    monkeypatch.setattr(_arrays, "allocator", recording)
    for _ in range(2):
        k(a, b, c, out)
    assert sizes, "the hoisted call allocates its temporaries"
    assert max(sizes) * _hoist.RATIO <= out.size
    assert sorted(set(sizes)) == [64, 2048, 64 * 256]


@pytest.mark.parametrize("operation", [
    # statements outside the subset: control flow, loops, pointers, increments
    "if (b > 0) { z = cos(a) * x; } else { z = x; }",
    "z = x; for (int j = 0; j < 2; ++j) z += cos(a);",
    "T t = x; t++; z = t * cos(a);",
])
def test_operations_outside_the_subset_run_unhoisted(operation):
    rng = np.random.default_rng(4)
    a, b, x = rng.random((1, 64)), rng.random((1, 64)) - 0.5, rng.random((1024, 64))
    k = sw.ElementwiseKernel("T a, T b, T x", "T z", operation, name="unparsed")
    got = k(a, b, x, algorithm=ON)
    assert sw.explain(k, a, b, x, algorithm=ON).hoisted == ()
    if operation.startswith("if"):
        want = np.where(b > 0, np.cos(a) * x, x)
    elif operation.startswith("z = x; for"):
        want = x + np.cos(a) + np.cos(a)
    else:
        want = (x + 1) * np.cos(a)
    # cos of doubles is vmath.h's on the host: within its tolerance of NumPy's, and the
    # unhoisted kernel's bits
    assert ulp_diff(got, want) <= TOLERANCE_ULP["cos"]["float64"]
    same_bits(got, k(a, b, x, algorithm=OFF))


def test_outputs_locals_index_and_lazy_branches_are_never_hoisted():
    rng = np.random.default_rng(5)
    x = rng.integers(-50, 50, (512, 32)).astype(np.int32)
    a = rng.integers(-50, 50, (1, 32)).astype(np.int32)
    b = rng.integers(-2, 3, (1, 32)).astype(np.int32)
    b[0, :4] = 0                                     # a / b would trap where b == 0
    lazy = sw.ElementwiseKernel("int32 x, int32 a, int32 b", "int32 z",
                                "z = b != 0 ? a / b + x : x", name="lazy")
    got = lazy(x, a, b, algorithm=ON)
    np.testing.assert_array_equal(got, lazy(x, a, b, algorithm=OFF))
    assert [h.text for h in sw.explain(lazy, x, a, b, algorithm=ON).hoisted] == ["b != 0"]
    # reading the output or a local: only the parts without them
    k = sw.ElementwiseKernel("T a, T x", "T z", "z = x; T t = z * 2; z = z + cos(a) * t + exp(t)",
                             name="reads")
    af, xf = rng.random((1, 32)), rng.random((512, 32))
    same_bits(k(af, xf, algorithm=ON), k(af, xf, algorithm=OFF))
    assert [h.text for h in sw.explain(k, af, xf, algorithm=ON).hoisted] == ["cos(a)"]
    # the flat index: no hoisting at all
    ki = sw.ElementwiseKernel("T a, T x", "T z", "z = x + cos(a) + (i % 3)", name="indexed")
    same_bits(ki(af, xf, algorithm=ON), ki(af, xf, algorithm=OFF))
    assert sw.explain(ki, af, xf, algorithm=ON).hoisted == ()


def test_a_wrong_type_inference_falls_back_to_unhoisted():
    """A template function declared to return T (float32 here) called on an int: the guard's
    static_assert fails the pre-pass compile, so the call runs unhoisted."""
    rng = np.random.default_rng(6)
    a, x = rng.random((1, 64)).astype(np.float32) * 10, rng.random((256, 64)).astype(np.float32)
    k = sw.ElementwiseKernel("T a, T x", "T z", "z = x + ident((int)a) / 3",
                             preamble="template <class T> T ident(T v) { return v; }",
                             name="lying")
    got = k(a, x, algorithm=ON)
    assert sw.explain(k, a, x, algorithm=ON).hoisted == ()
    t = k._hoist_template           # it parsed and planned; the guard turned the plan down
    assert t.kernels and list(t.plans.values()) == [None]
    np.testing.assert_array_equal(got, x + (a.astype(np.int32) // 3).astype(np.float32))


def test_scalars_placeholders_half_and_preamble_functions():
    rng = np.random.default_rng(7)
    a = rng.random((4, 1, 16)).astype(np.float16)
    x = rng.random((4, 32, 16)).astype(np.float16)
    k = sw.ElementwiseKernel("T a, T x, T s, float64 w", "T z",
                             "z = x * sq(cos(a) * s) + w * (T)exp(a)",
                             preamble="__device__ float sq(float v) { return v * v; }", name="mixed")
    for s, w in [(1.5, 2), (np.float16(0.25), np.float64(-1.0))]:
        same_bits(k(a, x, s, w, algorithm=ON), k(a, x, s, w, algorithm=OFF))
    texts = [h.text for h in sw.explain(k, a, x, 1.5, 2, algorithm=ON).hoisted]
    assert texts == ["sq(cos(a) * s)", "w * (T)exp(a)"]


def test_torch_tensors_hoist_too():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    a, b, c = (torch.from_numpy(v) for v in seed_inputs("float32", rng))
    k = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed_torch")
    same_bits(k(a, b, c).numpy(), k(a, b, c, algorithm=OFF).numpy())


def test_auto_skips_small_outputs_and_explicit_false_wins():
    rng = np.random.default_rng(9)
    a, b, c = rng.random((4, 1, 16)), rng.random((1, 16, 1)), rng.random((1, 16))
    k = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed_small")
    assert sw.explain(k, a, b, c).hoisted == ()            # 1,024 outputs: not worth a launch
    assert len(sw.explain(k, a, b, c, algorithm=ON).hoisted) == 3
    a, b, c = seed_inputs("float64", rng)
    assert sw.explain(k, a, b, c, algorithm=sw.Rows(hoist=False)).hoisted == ()


NORM = "out = (x - mean) * rsqrt(var + eps) * gamma + beta"
RSQRT = """#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
inline float rsqrt(float v) { return 1.0f / sqrtf(v); }
inline double rsqrt(double v) { return 1.0 / sqrt(v); }
#endif"""


def norm_inputs(dtype, rng, lib=np):
    x = rng.random((8, 64, 256)).astype(dtype)
    small = [(rng.random((64, 1)) + 0.1).astype(dtype) for _ in range(4)]
    return [lib.asarray(v) for v in (x, *small)]


@pytest.fixture
def cpu_rule():
    """Restore the host's tuning after a test registers its own."""
    from stridewise import tuning
    saved = tuning.elementwise_tuning("cpu")
    yield saved
    tuning.register_tuning("cpu", None, saved)


def test_auto_hoists_by_the_backends_rule_and_explicit_wins(cpu_rule):
    """Auto hoists where the operations saved per output element reach the tuning's
    hoist_work_per_byte times the bytes moved per element; explain gives the figures."""
    rng = np.random.default_rng(11)
    seed = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed_rule")
    ex = sw.explain(seed, *seed_inputs("float32", rng))
    # cos(a) 40 x (1 - 2048/131072) + log(cos(b)+2) 81 x (1 - 64/131072) + sqrt(c) 4 x 7/8
    # = 123.8; 4 bytes written + (2048 + 64 + 16384) x 4 read / 131072 = 4.6
    assert len(ex.hoisted) == 3 and ex.hoist_note.startswith(
        "Auto: hoisted, 123.8 operations saved per output element against 4.6 bytes moved")
    assert "hoisting  Auto: hoisted" in str(ex)
    args = norm_inputs("float32", rng) + [1e-5]
    # (1 add + 1 / sqrt) per output against 4 + 4 bytes: under the host's 1.25 per byte
    k = sw.ElementwiseKernel("T x, T mean, T var, T gamma, T beta, T eps", "T out", NORM,
                             preamble=RSQRT, name="norm_rule")
    ex = sw.explain(k, *args)
    assert ex.hoisted == () and ex.hoist_note.startswith(
        "Auto: not hoisted (rsqrt(var + eps)): 131,072 outputs, 9.0 operations saved per "
        "output element against 8.0 bytes moved; cpu hoists from 1.25 per byte")
    assert [h.text for h in sw.explain(k, *args, algorithm=ON).hoisted] == ["rsqrt(var + eps)"]
    assert sw.explain(k, *args, algorithm=ON).hoist_note == "hoist=True (caller)"
    assert sw.explain(seed, *seed_inputs("float32", rng), algorithm=sw.Rows(hoist=False)
                      ).hoist_note == "hoist=False (caller)"
    unhoisted = k(*args)                                   # Auto's choice, run
    same_bits(unhoisted, k(*args, algorithm=ON))
    same_bits(unhoisted, k(*args, algorithm=OFF))
    # the threshold is the tuning's: a host registered at 1 per byte hoists the norm
    from dataclasses import replace
    sw.register_tuning("cpu", None, replace(cpu_rule, hoist_work_per_byte=1.0))
    k2 = sw.ElementwiseKernel("T x, T mean, T var, T gamma, T beta, T eps", "T out", NORM,
                              preamble=RSQRT, name="norm_rule2")
    assert [h.text for h in sw.explain(k2, *args).hoisted] == ["rsqrt(var + eps)"]
    same_bits(k2(*args), unhoisted)
    # and so does its minimum output
    sw.register_tuning("cpu", None, replace(cpu_rule, hoist_min_output=1 << 30))
    k3 = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed_rule3")
    assert sw.explain(k3, *seed_inputs("float32", rng)).hoisted == ()


def test_the_rule_on_the_cuda_tuning():
    """The same figures against the GPU's threshold: the norm (memory-bound, one root per
    channel) stays unhoisted there, the seed (three transcendentals) hoists."""
    from stridewise.tuning import elementwise_tuning
    cuda, cpu = elementwise_tuning("cuda", None, "float32"), elementwise_tuning("cpu")
    assert cuda.hoist_work_per_byte > cpu.hoist_work_per_byte
    assert cuda.measurement("", "hoist_work_per_byte") and cpu.measurement("", "hoist_work_per_byte")
    rng = np.random.default_rng(12)
    k = sw.ElementwiseKernel("T x, T mean, T var, T gamma, T beta, T eps", "T out", NORM,
                             preamble=RSQRT, name="norm_rule_cuda")
    seed = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed_rule_cuda")
    for kern, args in ((k, norm_inputs("float32", rng) + [1e-5]),
                       (seed, list(seed_inputs("float32", rng)))):
        hoisted = sw.explain(kern, *args, algorithm=ON).hoisted
        views = [_arrays.as_operand(a, "x") for a in args]
        size = _arrays._prod(np.broadcast_shapes(*(np.shape(a) for a in args)))
        saved, moved = _hoist.rule_inputs(hoisted, views, [4], size, kern._hoist_template.costs)
        hoists = saved >= cuda.hoist_work_per_byte * moved
        assert hoists == (kern is seed), (saved, moved)


def test_preamble_functions_cost_what_their_bodies_do():
    """sw.fuse's preamble functions call the built-in ops' functors: an add is cheap, a
    tanh is not."""
    @sw.fuse
    def f(x, m, v):
        return (x - m) / sw.sqrt(v + 1e-5) + sw.tanh(x) * sw.remainder(x, m)

    x, m = np.ones((64, 1024)), np.ones((64, 1))
    costs = _hoist._function_costs(f.kernel(x, m, m).preamble)
    assert costs == {"sw_subtract": 1, "sw_add": 1, "sw_sqrt": 4, "sw_divide": 4,
                     "sw_tanh": 40, "sw_remainder": 40, "sw_multiply": 1}
    assert _hoist._function_costs(RSQRT) == {"rsqrt": 8}


# -- random expressions ---------------------------------------------------------------------
_UNARY = ["sin({})", "cos({})", "sqrt(fabs({}))", "log(fabs({}) + 1)", "(-{})", "fabs({})",
          "exp(-fabs({}))", "(T)({})", "({} * T(0.5))"]
_BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / {})", "min({}, {})", "max({}, {})",
           "({} > {} ? {} : 2)", "(({} < {}) + {})", "atan2({}, {})"]


@st.composite
def expressions(draw, names, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        # literals of type T: sin(2) or atan2(float, double) has no single CUDA overload (a
        # user's error, on any path), so every subexpression keeps the kernel's type
        return draw(st.sampled_from(names + ["T(2.0)", "T(1.5)", "T(0.25)"]))
    if draw(st.booleans()):
        return draw(st.sampled_from(_UNARY)).format(draw(expressions(names, depth - 1)))
    form = draw(st.sampled_from(_BINARY))
    args = [draw(expressions(names, depth - 1)) for _ in range(form.count("{}"))]
    return form.format(*args)


@st.composite
def problems(draw):
    n = draw(st.integers(2, 4))
    out = tuple(draw(st.sampled_from([3, 8, 16])) for _ in range(3))
    shapes = []
    for j in range(n):
        keep = draw(st.lists(st.booleans(), min_size=3, max_size=3))
        if j == 0:   # a small operand: one dim of three, so at most 1/9 of the output
            keep = [False] * 3
            keep[draw(st.integers(0, 2))] = True
        if j == 1:   # the output's shape
            keep = [True] * 3
        shape = tuple(d if k else 1 for d, k in zip(out, keep))
        shapes.append(shape[draw(st.integers(0, 2)):] if j > 1 else shape)
    names = "abcd"[:n]
    expr = draw(expressions(list(names)))
    layouts = [draw(st.sampled_from(["c", "reversed", "strided", "transposed"])) for _ in range(n)]
    return shapes, layouts, expr


def _layout(x, how):
    if how == "reversed":
        return np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    if how == "strided":
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    if how == "transposed":
        return np.ascontiguousarray(x.T).T
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(problem=problems(), seed=st.integers(0, 2**32 - 1))
def test_random_expressions_hoist_bit_identically(dtype, problem, seed):
    shapes, layouts, expr = problem
    rng = np.random.default_rng(seed)
    names = "abcd"[:len(shapes)]
    arrays = [_layout((rng.standard_normal(s) * 2).astype(dtype), how)
              for s, how in zip(shapes, layouts)]
    # a term of the small operand alone, so every example has something to hoist
    op = f"z = {expr} * (1 + sin(a))"
    k = sw.ElementwiseKernel(", ".join(f"T {n}" for n in names), "T z", op, name="random")
    ref = k(*arrays, algorithm=OFF)
    got = k(*arrays, algorithm=ON)
    same_bits(got, ref)
    hoisted = sw.explain(k, *arrays, algorithm=ON).hoisted
    assert hoisted, op
    # every temporary is the size of a small shape, never the output's
    assert all(_arrays._prod(h.shape) * _hoist.RATIO <= ref.size for h in hoisted), hoisted


# -- what is never hoisted, and what never fails ----------------------------------------------
def test_preamble_functions_with_effects_are_never_hoisted():
    """A preamble function that writes a global or a static, or calls one that does, runs at
    every element as written; a pure one is computed once."""
    pre = ("double last_seen;\n"
           "inline double keep(double v) { last_seen = v; return v; }\n"
           "inline double counted(double v) { static long n = 0; ++n; return v; }\n"
           "inline double via(double v) { double w = v * 2; w += 1; return keep(w); }\n"
           "inline double sq(double v) { double w = v; for (int j = 0; j < 2; ++j) w = w * v; return w; }")
    k = sw.ElementwiseKernel("float64 a, float64 x", "float64 z",
                             "z = x * keep(cos(a)) + x * counted(a) + x * via(a) + x * sq(cos(a))",
                             preamble=pre, name="effects")
    rng = np.random.default_rng(12)
    a, x = rng.random((1, 64)), rng.random((512, 64))
    assert [h.text for h in sw.explain(k, a, x, algorithm=ON).hoisted] == ["sq(cos(a))"]
    same_bits(k(a, x, algorithm=ON), k(a, x, algorithm=OFF))
    np.testing.assert_allclose(k(a, x), x * np.cos(a) + x * a + x * (2 * a + 1) + x * np.cos(a) ** 3,
                               rtol=1e-14)


_SOUP = ["z", "x", "a", "t", "T", "int", "double", "cos", "keep", "sizeof", "(", ")", "?", ":",
         ";", "=", "+=", "++", "--", "+", "-", "*", "/", "%", "<", "<<", "&&", "!", "~", "&", "[",
         "]", "{", "}", ",", ".", "->", "::", "std", "if", "for", "return", "1", "2.5f", "0x1p3",
         "1e", "07", "1ull", "'c'", "\"s\"", "#define", "static_cast", "<", ">", "i", "_ind"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_SOUP), max_size=24))
def test_the_parser_never_raises(tokens):
    """Whatever a user writes, parsing answers a template or None (run unhoisted), and typing
    a template's expressions answers a type or None: it never raises."""
    env = {"x": "double", "a": "float"}
    t = _hoist.parse(" ".join(tokens), ["x", "a"], ["z"], ["T"], "inline double keep(double v) { return v; }")
    if t is not None:
        for r in t.roots:
            assert _hoist.infer(r, env, {"T": "double"}, t.pre) in (None, "bool", "int", "long long",
                                                                   "float", "double")


_FORMS = ["z = x * cos(a)", "z = x; z += cos(a) * x", "if (a > 0.5) z = x * cos(a); else z = x",
          "T t = cos(a); z = t * x", "z = x * (a > 0.5 ? cos(a) : sin(a))",
          "z = x * keep(cos(a))", "z = x * sq(cos(a))", "z = x * SQ(cos(a))",
          "z = x; { z = z * cos(a); }", "z = x * [&]{ return cos(a); }()",
          "z = x * cos(a) + (T)sizeof(T)", "z = x * std::cos(a) + ::sin(a)",
          "z = x * static_cast<T>(cos(a))", "z = x * cos(a), z = z + 1", "z = x * cos(a); ;;"]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_FORMS), min_size=1, max_size=2, unique=True), st.integers(0, 2**32 - 1))
def test_operations_in_or_out_of_the_subset_are_never_rejected(forms, seed):
    """Statements in and out of the parsed subset, mixed: every one compiles and runs, and the
    hoisted call (where it hoists) is bit-identical to the unhoisted one."""
    pre = ("double last_seen; inline double keep(double v) { last_seen = v; return v; }\n"
           "inline double sq(double v) { return v * v; }\n#define SQ(v) ((v) * (v))")
    op = "; ".join(forms)
    k = sw.ElementwiseKernel("T a, T x", "T z", op, preamble=pre, name="mixed_forms")
    rng = np.random.default_rng(seed)
    a, x = rng.random((1, 64)), rng.random((256, 64))
    same_bits(k(a, x, algorithm=ON), k(a, x, algorithm=OFF))
    same_bits(k(a, x), k(a, x, algorithm=OFF))


def test_the_bench_hands_cupy_fuse_explicit_named_functions():
    """cupy.fuse reads the function's signature (no *args) and names its kernel after it."""
    import inspect

    from stridewise.bench import fused as bench_fused

    case = bench_fused.CASES[1]
    f = bench_fused._explicit(case.fused, np, bench_fused._names(case), "cupy_fused_norm")
    assert f.__name__ == "cupy_fused_norm"
    assert list(inspect.signature(f).parameters) == ["x", "mean", "var", "gamma", "beta", "eps"]
    x, m, v, g, b = (np.full((2, 3), 2.0),) * 5
    np.testing.assert_array_equal(f(x, m, v, g, b, 0.25), case.fused(np, x, m, v, g, b, 0.25))


# -- the type inference against both compilers ------------------------------------------------
_TYPED = [  # (expression over f: float, d: double, n: int, q: long long, p: bool)
    "cos(f)", "log(cos(f) + 2)", "f * 2", "f * 2.0", "f / 2.5f", "n / 3", "n * q",
    "p + p", "f < d", "n > 0 ? f : d", "max(d, (double)f)", "fabs(f)", "abs(n)",
    "pow(f, f)", "atan2(f, 2.0f)", "(float)d * 2", "(double)f", "-n", "!f", "f + q",
    "fma(f, f, f)", "exp(-fabs(f))", "(f > 1) + f", "static_cast<int>(d) % 3", "fmod(d, n)",
]


# calls whose argument types differ: the host's overloads resolve them, CUDA's are ambiguous
# (such an operation does not compile on the GPU, hoisted or not)
_HOST_ONLY = ["sqrt(n)", "min(f, n)", "max(d, f)", "pow(f, d)"]


def _guards(texts=_TYPED):
    env = {"f": "float", "d": "double", "n": "int", "q": "long long", "p": "bool"}
    lines = []
    for text in texts:
        t = _hoist.parse(f"z = {text};", list(env), ["z"], [], "")
        ctype = _hoist.infer(t.roots[0], env, {}, {})
        assert ctype is not None, text
        lines.append(f"static_assert(sw_hoist_same<decltype({text}), {ctype}>::value, \"{text}\");")
    params = "float f, double d, int n, long long q, bool p"
    return params, "\n".join(lines)


def test_inferred_types_hold_on_the_host_compiler(tmp_path):
    import subprocess

    from stridewise import cache as _cache

    params, guards = _guards(_TYPED + _HOST_ONLY)
    src = tmp_path / "t.cpp"
    src.write_text(f"#include <stridewise/user.h>\n{_hoist._SAME}\nvoid k({params}) {{\n{guards}\n}}\n")
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", f"-I{_cache.INCLUDE_DIR}", str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:2000]


@pytest.mark.nvrtc
def test_inferred_types_hold_under_nvrtc():
    pytest.importorskip("cuda.core", reason="needs the cuda extra (cuda.core + NVRTC wheels)")
    from stridewise.backends import cuda

    params, guards = _guards()
    src = (f"#include <stridewise/user.h>\n{_hoist._SAME}\n"
           f"extern \"C\" __global__ void k({params}) {{\n{guards}\n}}\n")
    cuda.compile(src, "k", "sm_90")


# -- the GPU: NVRTC contracts a*b + c into fma, so products feeding sums stay in place ----------
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_seed_on_the_gpu_is_bit_identical(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    a, b, c = (torch.from_numpy(v).cuda() for v in seed_inputs(dtype, rng))
    k = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed_gpu")
    same_bits(k(a, b, c).cpu().numpy(), k(a, b, c, algorithm=OFF).cpu().numpy())
    assert len(sw.explain(k, a, b, c).hoisted) == 3
    n = sw.ElementwiseKernel("T x, T mean, T var, T gamma, T beta, T eps", "T out", NORM,
                             preamble=RSQRT, name="norm_gpu")
    args = [torch.from_numpy(v).cuda() for v in norm_inputs(dtype, rng)] + [1e-5]
    ex = sw.explain(n, *args)
    assert ex.hoisted == () and ex.hoist_note.startswith("Auto: not hoisted"), ex.hoist_note
    same_bits(n(*args).cpu().numpy(), n(*args, algorithm=ON).cpu().numpy())
    # products that feed a sum: the unhoisted kernel may have fused them, so they stay
    d = sw.ElementwiseKernel("T x, T y", "T z", "z = sqrt((x - 1)*(x - 1) + (y - 2)*(y - 2))",
                             name="dist_gpu")
    x, y = torch.rand(1, 512, device="cuda"), torch.rand(256, 1, device="cuda")
    assert sw.explain(d, x, y, algorithm=ON).hoisted[0].text == "(x - 1)"
    same_bits(d(x, y, algorithm=ON).cpu().numpy(), d(x, y, algorithm=OFF).cpu().numpy())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(problem=problems(), seed=st.integers(0, 2**32 - 1))
def test_random_expressions_on_the_gpu_are_bit_identical(dtype, problem, seed):
    torch = pytest.importorskip("torch")
    shapes, layouts, expr = problem
    rng = np.random.default_rng(seed)
    names = "abcd"[:len(shapes)]
    # torch has no negative strides: a "reversed" operand runs dense there
    arrays = [torch.from_numpy(_layout((rng.standard_normal(s) * 2).astype(dtype),
                                       "dense" if how == "reversed" else how)).cuda()
              for s, how in zip(shapes, layouts)]
    k = sw.ElementwiseKernel(", ".join(f"T {n}" for n in names), "T z",
                             f"z = {expr} * (1 + sin(a))", name="random_gpu")
    same_bits(k(*arrays, algorithm=ON).cpu().numpy(), k(*arrays, algorithm=OFF).cpu().numpy())


@pytest.mark.gpu
def test_fuse_on_the_gpu_equals_the_ops_one_by_one():
    torch = pytest.importorskip("torch")

    @sw.fuse
    def f(a, b, c):
        return sw.sin(a * b) + sw.sqrt(c) + sw.cos(a) / sw.log(sw.cos(b) + 2)

    rng = np.random.default_rng(11)
    for dtype in ("float16", "float32", "float64"):
        a, b, c = (torch.from_numpy(v).cuda() for v in seed_inputs(dtype, rng))
        eager = sw.add(sw.add(sw.sin(sw.multiply(a, b)), sw.sqrt(c)),
                       sw.divide(sw.cos(a), sw.log(sw.add(sw.cos(b), 2))))
        same_bits(f(a, b, c).cpu().numpy(), eager.cpu().numpy())


def test_fused_bench_runs_and_checks_bit_identity():
    from stridewise.bench import fused as bench_fused

    rows = bench_fused.run_fused("cpu", dtypes=("float64",), scale=0.25, cases=bench_fused.CASES[:1])
    assert not [r for r in rows if "error" in r], rows
    mine = next(r for r in rows if r["impl"] == "sw kernel")
    assert mine["bitwise"] and len(mine["hoisted"]) == 3
    assert {r["impl"] for r in rows} >= {"sw kernel", "sw kernel unhoisted", "sw.fuse", "numpy"}
    assert "| seed | float64 | sw kernel |" in bench_fused.format_rows(rows)


def test_autograd_calls_take_the_custom_op_and_stay_exact():
    torch = pytest.importorskip("torch")
    k = sw.ElementwiseKernel(
        "T a, T x", "T z", "z = x * cos(a)", name="grad_hoist",
        backward=lambda inputs, outputs, grads: (-inputs[1] * torch.sin(inputs[0]) * grads[0],
                                                 torch.cos(inputs[0]) * grads[0]))
    a = torch.rand(1, 64, dtype=torch.float64, requires_grad=True)
    x = torch.rand(1024, 64, dtype=torch.float64, requires_grad=True)
    z = k(a, x)
    z.sum().backward()
    a2, x2 = a.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
    (x2 * torch.cos(a2)).sum().backward()
    same_bits(z.detach().numpy(), k(a.detach(), x.detach(), algorithm=OFF).numpy())
    torch.testing.assert_close(a.grad, a2.grad)
    torch.testing.assert_close(x.grad, x2.grad)
    with torch.no_grad():                      # plain tensors: hoisted
        assert [h.text for h in sw.explain(k, a, x).hoisted] == ["cos(a)"]


def test_warm_hoisted_calls_across_layouts_shapes_and_bad_outputs():
    """A warm hoisted call finds its plan from dtypes and shapes alone: other layouts of the same
    shapes reuse it bit-identically, other shapes plan anew, and a bad output is refused as the
    unhoisted call refuses it, with nothing written."""
    rng = np.random.default_rng(13)
    k = sw.ElementwiseKernel("T a, T b, T c", "T out", SEED, name="seed_warm")
    for step in range(6):
        a, b, c = seed_inputs("float64", rng)
        if step % 2:
            a, c = _layout(a, "reversed"), _layout(c, "transposed")
        if step >= 4:
            a, b, c = a[:4], b[:, :32], c[:32]
        same_bits(k(a, b, c, algorithm=ON), k(a, b, c, algorithm=OFF))
        out = np.full(np.broadcast_shapes(a.shape, b.shape, c.shape), 7.0)[..., ::-1]
        same_bits(k(a, b, c, out, algorithm=ON), k(a, b, c, algorithm=OFF))
    frozen = np.full((4, 32, 256), 7.0)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only|writeable"):
        k(a, b, c, frozen, algorithm=ON)
    assert (frozen == 7.0).all()
