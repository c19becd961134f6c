"""sw.fuse and sw.evaluate: one kernel, bit-identical to the ops run one by one (and to NumPy
and torch where their ops are correctly rounded)."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import stridewise as sw

OFF = sw.Auto(hoist=False)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(f"u{a.dtype.itemsize}"), b.view(f"u{b.dtype.itemsize}"))


@sw.fuse
def seed(a, b, c):
    return sw.sin(a * b) + sw.sqrt(c) + sw.cos(a) / sw.log(sw.cos(b) + 2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_seed_equals_the_ops_one_by_one(dtype):
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    rng = np.random.default_rng(0)
    a = (rng.random((8, 1, 256)) + 0.1).astype(dt)
    b = (rng.random((1, 64, 1)) + 0.1).astype(dt)
    c = (rng.random((64, 256)) + 0.1).astype(dt)
    eager = sw.add(sw.add(sw.sin(sw.multiply(a, b)), sw.sqrt(c)),
                   sw.divide(sw.cos(a), sw.log(sw.add(sw.cos(b), 2))))
    got = seed(a, b, c)
    same_bits(got, eager)
    same_bits(seed(a, b, c, algorithm=OFF), eager)
    hoisted = sw.explain(seed.kernel(a, b, c), a, b, c).hoisted
    assert [h.shape for h in hoisted] == [(64, 256), (8, 1, 256), (1, 64, 1)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normalization_matches_numpy_bit_for_bit(dtype):
    """Only correctly rounded ops, so NumPy's op-by-op result is the exact oracle."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 32, 64)).astype(dtype)
    mean, var = rng.standard_normal((32, 1)).astype(dtype), rng.random((32, 1)).astype(dtype)
    gamma, beta = rng.standard_normal((32, 1)).astype(dtype), rng.standard_normal((32, 1)).astype(dtype)

    @sw.fuse
    def norm(x, mean, var, gamma, beta):
        return (x - mean) / sw.sqrt(var + 1e-5) * gamma + beta

    got = norm(x, mean, var, gamma, beta)
    same_bits(got, (x - mean) / np.sqrt(var + 1e-5) * gamma + beta)
    kernel = norm.kernel(x, mean, var, gamma, beta)
    texts = [h.text for h in sw.explain(kernel, x, mean, var, gamma, beta,
                                        algorithm=sw.Auto(hoist=True)).hoisted]
    assert texts == ["sw_sqrt(sw_add(x2, 0x1.4f8b588e368f1p-17))"]
    same_bits(norm(x, mean, var, gamma, beta, algorithm=sw.Auto(hoist=True)), got)
    # one add and one root per output element are not worth a pre-pass (tuning.py)
    assert sw.explain(kernel, x, mean, var, gamma, beta).hoist_note.startswith("Auto: not hoisted")


_EXACT = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
          lambda x, y: sw.maximum(x, y), lambda x, y: sw.minimum(x, y),
          lambda x, y: sw.where(x > y, x, y * 0.5), lambda x, y: sw.sqrt(sw.abs(x)) + y,
          lambda x, y: -x + 3 * y]
_NUMPY = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
          np.maximum, np.minimum, lambda x, y: np.where(x > y, x, y * 0.5),
          lambda x, y: np.sqrt(np.abs(x)) + y, lambda x, y: -x + 3 * y]


@st.composite
def programs(draw):
    return [(draw(st.integers(0, len(_EXACT) - 1)), draw(st.integers(0, 9)), draw(st.integers(0, 9)))
            for _ in range(draw(st.integers(1, 5)))]


def _run(prog, ops, args):
    vals = list(args)
    for f, i, j in prog:
        vals.append(ops[f](vals[i % len(vals)], vals[j % len(vals)]))
    return vals[-1]


@pytest.mark.parametrize("lib", ["numpy", "torch"])
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(prog=programs(), dtype=st.sampled_from(["float32", "float64"]),
       shapes=st.sampled_from([((64, 1), (1, 32), (64, 32)), ((1, 1, 16), (8, 4, 1), (4, 16)),
                               ((256,), (3, 256), (3, 1))]),
       seed=st.integers(0, 2**32 - 1))
def test_random_programs_match_the_library_bit_for_bit(lib, prog, dtype, shapes, seed):
    rng = np.random.default_rng(seed)
    host = [rng.standard_normal(s).astype(dtype) for s in shapes]
    fused = sw.fuse(lambda a, b, c: _run(prog, _EXACT, (a, b, c)))
    want = _run(prog, _NUMPY, host)
    if lib == "torch":
        torch = pytest.importorskip("torch")
        args = [torch.from_numpy(h) for h in host]
        got = fused(*args).numpy()
        # The same ops one by one on the tensors: torch's arithmetic operators, stridewise's
        # functions. (torch's own CPU sqrt is not correctly rounded everywhere: for
        # x = -0.9447516, torch.sqrt(|x|) is 1 ulp below IEEE's, so torch.sqrt is no oracle.)
        eager = _run(prog, _EXACT, args).numpy()
        same_bits(got, np.ascontiguousarray(np.broadcast_to(eager, got.shape)))
    else:
        got = fused(*host)
    want = np.broadcast_to(want, got.shape)   # the kernel's output spans every argument
    same_bits(got, np.ascontiguousarray(want))


def test_traced_once_per_signature_and_layouts_share_it():
    calls = []

    @sw.fuse
    def f(x, y):
        calls.append(1)
        return x * y + 1

    x = np.arange(12.0).reshape(3, 4)
    f(x, x)
    f(x.T, x.T)                               # another layout: the same kernel
    f(x[:, ::2], np.float64(2.0))            # a NumPy scalar: a 0-d float64 array
    assert len(calls) == 1
    f(x[:, ::2], 2.0)                         # a Python number: its own signature
    assert len(calls) == 2
    f(x.astype(np.float32), x)                 # other dtypes: traced again
    assert len(calls) == 3
    same_bits(f(x.T, 2.5), x.T * 2.5 + 1)
    y = np.zeros((4, 3))
    assert f(x.T, x.T, out=y) is y
    same_bits(y, x.T * x.T + 1)
    # warm calls find the kernel from the arguments' types and dtypes: alternate them
    for _ in range(2):
        same_bits(f(x, 2.0), x * 2.0 + 1)
        same_bits(f(x, np.float64(3.0)), x * 3.0 + 1)
        same_bits(f(x, np.array(0.5)), x * 0.5 + 1)
        same_bits(f(x, 2), x * 2 + 1)
        same_bits(f(x.astype(np.float32), x), x.astype(np.float32) * x + 1)
    assert len(calls) == 4            # the Python int is the only new signature


def test_several_outputs_ints_and_remainder():
    @sw.fuse
    def f(a, b):
        return (a + b) // 3, (a * b) % 7, a < b

    rng = np.random.default_rng(2)
    a = rng.integers(-100, 100, (5, 6)).astype(np.int32)
    b = rng.integers(-100, 100, (6,)).astype(np.int32)
    q, r, lt = f(a, b)
    same_bits(q, (a + b) // 3)
    same_bits(r, (a * b) % 7)
    same_bits(lt, a < b)


def test_torch_gradients_through_a_fused_function():
    """A fused function of torch tensors that require grad: the kernel runs forward, and
    backward differentiates the function op by op, so gradients are torch's over torch's own
    ops (loss.backward(), gradcheck, torch.func.grad); bool results and integer inputs get
    none."""
    torch = pytest.importorskip("torch")
    f = sw.fuse(lambda a, b: sw.sin(sw.remainder(a, b)) * a)
    g = torch.Generator().manual_seed(3)
    x = torch.rand(5, 3, generator=g, dtype=torch.float64) * 4
    y = torch.rand(3, generator=g, dtype=torch.float64) + 0.5
    w = torch.linspace(-1, 2, 15, dtype=torch.float64).reshape(5, 3)
    grads = []
    for fn in (f, lambda a, b: torch.sin(torch.remainder(a, b)) * a):
        a, b = x.clone().requires_grad_(), y.clone().requires_grad_()
        (fn(a, b) * w).sum().backward()
        grads.append((a.grad, b.grad))
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-14, atol=1e-14)
    assert torch.autograd.gradcheck(f, (x.clone().requires_grad_(), y.clone().requires_grad_()))
    torch.testing.assert_close(torch.func.grad(lambda a: f(a, y).sum())(x),
                               torch.func.grad(lambda a: (torch.sin(torch.remainder(a, y)) * a).sum())(x),
                               rtol=1e-14, atol=1e-14)
    two = sw.fuse(lambda a, n: (a * n, a > 1, sw.exp(a) + n))
    a = x.clone().requires_grad_()
    p, above, q = two(a, 3)
    assert above.dtype == torch.bool and not above.requires_grad
    (p.sum() + (2 * q).sum()).backward()
    torch.testing.assert_close(a.grad, 3 + 2 * torch.exp(x), rtol=1e-14, atol=1e-14)
    n = torch.arange(15).reshape(5, 3)                  # an integer input takes no gradient
    a = x.clone().requires_grad_()
    sw.fuse(lambda u, v: u * v)(a, n).sum().backward()
    assert torch.equal(a.grad, n.to(torch.float64))


def test_a_fused_function_inside_torch_compile():
    """torch.compile(fullgraph=True) over a fused function (never called eagerly first), its
    out= and several outputs: one graph, the eager results bit for bit."""
    torch = pytest.importorskip("torch")
    f = sw.fuse(lambda a, b: sw.sin(sw.remainder(a, b)) * a)
    two = sw.fuse(lambda a: (a * 2, a > 0.5))

    def body(a, b, o):
        f(a, b, out=o)
        p, q = two(a)
        return f(a, b) + 1, p, q

    g = torch.Generator().manual_seed(4)
    x, y = torch.rand(5, 3, generator=g), torch.rand(3, generator=g) + 0.5
    o1, o2 = torch.empty(5, 3), torch.empty(5, 3)
    torch._dynamo.reset()
    got = torch.compile(body, fullgraph=True, backend="aot_eager")(x, y, o1)
    for a, b in zip(got, body(x, y, o2), strict=True):
        assert a.dtype == b.dtype and torch.equal(a, b)
    assert torch.equal(o1, o2)


def test_errors_name_the_fix():
    x = np.ones((4, 4))

    @sw.fuse
    def closure(a):
        return a + x

    with pytest.raises(TypeError, match="pass every array as an argument"):
        closure(x)

    @sw.fuse
    def branch(a):
        return a if a > 0 else -a

    with pytest.raises(TypeError, match="sw.where"):
        branch(x)

    @sw.fuse
    def scalar(a):
        return 1.0

    with pytest.raises(TypeError, match="must return a value computed from its arguments"):
        scalar(x)
    k = sw.ElementwiseKernel("T a", "T b", "b = a + 1", name="user")
    with pytest.raises(TypeError, match="user kernel"):
        sw.fuse(lambda a: k(a) * 2)(x)
    with pytest.raises(ValueError, match="at least one argument must be an array"):
        sw.fuse(lambda a: a + 1)(2.0)


def test_evaluate_matches_numpy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((50, 40))
    m = rng.standard_normal((1, 40))
    same_bits(sw.evaluate("where(x > m, (x - m) * (x - m), 0.5 * x) / 3", {"x": x, "m": m}),
              np.where(x > m, (x - m) * (x - m), 0.5 * x) / 3)
    same_bits(sw.evaluate("sqrt(abs(x)) - m"), np.sqrt(np.abs(x)) - m)   # caller's names
    with pytest.raises(ValueError, match="not supported"):
        sw.evaluate("x.sum()", {"x": x})
    with pytest.raises(NameError, match="local_dict"):
        sw.evaluate("x + nothing_here", {"x": x})


@sw.fuse
def division_family(a, b):
    return sw.remainder(a, b) + sw.fmod(a, b) + sw.floor_divide(a, b)


DIVISION_DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64"]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("dtype", DIVISION_DTYPES)
def test_fused_division_equals_the_ops_one_by_one(dtype, device):
    """Fused remainder, fmod and floor_divide take each functor's fast path where it holds and
    its exact form elsewhere (sw::call_one): the same bits as the ops one by one, over values
    that leave the fast paths (huge quotients, subnormal and zero divisors, specials). A NaN
    matches any NaN: its sign bit is the path's (a pack's exact form or the lane's fast one)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
    import fuzz

    rng = np.random.default_rng(5)
    a = fuzz.value_pool(rng, dtype)[:1024].reshape(32, 32)
    b = fuzz.value_pool(rng, dtype, divisor=True)[:1024].reshape(32, 32)
    if device == "cuda":
        cp = pytest.importorskip("cupy")
        if dtype == "bfloat16":
            pytest.skip("CuPy has no bfloat16")
        a, b = cp.asarray(a), cp.asarray(b)
    with np.errstate(all="ignore"):
        eager = sw.add(sw.add(sw.remainder(a, b), sw.fmod(a, b)), sw.floor_divide(a, b))
        got = division_family(a, b)
    if device == "cuda":
        got, eager = got.get(), eager.get()
    assert fuzz.same(np.asarray(got), np.asarray(eager)) is None


@pytest.mark.nvrtc
def test_fused_division_compiles_with_nvrtc():
    """The fused division family's kernel, every dtype, compiles for sm_90 (no GPU needed)."""
    pytest.importorskip("cuda.core")
    from nvrtc_batch import compile_batched

    sources = []
    for dtype in DIVISION_DTYPES:
        a = np.ones((8, 64), ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
        sources.append(division_family.kernel(a, a)._explain((np.empty_like(a), a, a), {}).spec)
    assert compile_batched(sources) == len(sources)
