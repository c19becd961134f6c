"""stridewise inside torch: autograd (torch's derivatives, gradcheck), torch.library custom
ops with fake and meta implementations, torch.compile(fullgraph) through Inductor, version
counters and torch's in-place rules. torch itself is the oracle throughout: each stridewise
result, gradient and error is compared with what torch's own op gives."""
import math

import pytest

torch = pytest.importorskip("torch")

import stridewise as sw  # noqa: E402
from stridewise.launch import pipeline as _ops  # noqa: E402
from stridewise.integrations import torch_ops as _torch_ops  # noqa: E402

F64 = torch.float64
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def _leaf(t):
    return t.detach().clone().requires_grad_()


def _inputs(seed=0):
    """Float64 operands away from the ops' kinks: x / y is never near an integer (remainder,
    fmod jump there), values are positive where log / sqrt / pow need it, no ties."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(4, 3, generator=g, dtype=F64) * 3 + 0.5
    y = torch.rand(3, generator=g, dtype=F64) * 0.2 + 0.7      # broadcast along dim 0
    z = torch.rand(4, 1, generator=g, dtype=F64) - 0.5
    # nudge x so x / y sits 0.2 or more from an integer
    q = x / y
    x = torch.where((q - q.round()).abs() < 0.2, x + 0.3 * y, x)
    return x, y, z


# name: (stridewise function, torch's own op, number of tensor operands)
REFERENCES = {
    "add": (sw.add, torch.add, 2),
    "subtract": (sw.subtract, torch.sub, 2),
    "multiply": (sw.multiply, torch.mul, 2),
    "divide": (sw.divide, torch.div, 2),
    "remainder": (sw.remainder, torch.remainder, 2),
    "fmod": (sw.fmod, torch.fmod, 2),
    "maximum": (sw.maximum, torch.maximum, 2),
    "minimum": (sw.minimum, torch.minimum, 2),
    "pow": (sw.pow, torch.pow, 2),
    "fma": (sw.fma, lambda a, b, c: torch.addcmul(c, a, b), 3),
    "relu": (sw.relu, torch.relu, 1),
    "abs": (sw.abs, torch.abs, 1),
    "negative": (sw.negative, torch.neg, 1),
    "exp": (sw.exp, torch.exp, 1),
    "log": (sw.log, torch.log, 1),
    "sqrt": (sw.sqrt, torch.sqrt, 1),
    "sin": (sw.sin, torch.sin, 1),
    "cos": (sw.cos, torch.cos, 1),
    "tanh": (sw.tanh, torch.tanh, 1),
    "sigmoid": (sw.sigmoid, torch.sigmoid, 1),
    "square": (sw.square, torch.square, 1),
    "reciprocal": (sw.reciprocal, torch.reciprocal, 1),
    "floor": (sw.floor, torch.floor, 1),
    "ceil": (sw.ceil, torch.ceil, 1),
    "trunc": (sw.trunc, torch.trunc, 1),
    "sign": (sw.sign, torch.sign, 1),
    "copysign": (lambda a, b: sw.copysign(a, b - 0.8), lambda a, b: torch.copysign(a, b - 0.8), 2),
    "clip": (sw.clip, torch.clamp, 3),         # bounds of both orders: hi < lo where z < y
}


def _grads(fn, args):
    leaves = [_leaf(a) for a in args]
    out = fn(*leaves)
    w = torch.linspace(-1, 2, out.numel(), dtype=out.dtype).reshape(out.shape)
    (out * w).sum().backward()
    return out, [a.grad for a in leaves]


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_gradients_are_torchs(name):
    """Every differentiable built-in: value and each input's gradient (broadcast dims summed)
    as torch's own op gives them."""
    ours, theirs, n = REFERENCES[name]
    x, y, z = _inputs()
    if name == "relu":
        x = x - 2          # both signs
    args = (x, y, z)[:n]
    out, grads = _grads(ours, args)
    ref, ref_grads = _grads(theirs, args)
    assert out.grad_fn is not None and out.dtype == ref.dtype and out.shape == ref.shape
    torch.testing.assert_close(out.detach(), ref.detach(), rtol=1e-14, atol=1e-14)
    for g, r in zip(grads, ref_grads):
        assert g.shape == r.shape and g.dtype == r.dtype
        torch.testing.assert_close(g, r, rtol=1e-12, atol=1e-12)


def test_clip_with_one_bound_has_clamps_derivative():
    """torch.clamp(x, min=lo) gives x the gradient where x >= lo (a tie included, NaN not) and
    a tensor bound where x < lo; maximum's formula would split ties and pass NaN's."""
    x = torch.tensor([math.nan, 0.2, 0.5, 0.9, -math.inf, -0.0], dtype=F64)
    lo = torch.tensor([0.5], dtype=F64)
    for bounds in ((lo, None), (None, lo), (0.5, None), (None, 0.0)):
        tensors = [b for b in bounds if isinstance(b, torch.Tensor)]

        def call(fn, a, *ts):
            it = iter(ts)
            return fn(a, *(next(it) if isinstance(b, torch.Tensor) else b for b in bounds))

        out, grads = _grads(lambda a, *ts: call(sw.clip, a, *ts), (x, *tensors))
        ref, ref_grads = _grads(lambda a, *ts: call(torch.clamp, a, *ts), (x, *tensors))
        assert torch.equal(out.detach().nan_to_num(), ref.detach().nan_to_num())
        for g, r in zip(grads, ref_grads):
            assert torch.equal(g, r), bounds
    n = torch.tensor([0, -3, 5, 2])              # an integer x by a float bound: the bound's
    hi = torch.tensor([0.0, -0.0, 2.0, 1.5], dtype=F64)
    (g,) = _grads(lambda b: sw.clip(n, None, b), (hi,))[1]
    (r,) = _grads(lambda b: torch.clamp(n, None, b), (hi,))[1]
    assert torch.equal(g, r)


def test_pow_by_the_least_int64_differentiates():
    """pow's derivative takes exponent - 1, past int64 for -2**63: a double there, as torch's."""
    for n in (0, 3):
        (g,) = _grads(lambda a: sw.pow(a, -2**63), (torch.full((n,), 1.5, dtype=F64),))[1]
        (r,) = _grads(lambda a: torch.pow(a, -2**63), (torch.full((n,), 1.5, dtype=F64),))[1]
        assert torch.equal(g, r)


def test_where_and_cast_gradients_are_torchs():
    x, y, _ = _inputs(1)
    c = x > 1.5
    out, (gx, gy) = _grads(lambda a, b: sw.where(c, a, b), (x, y))
    ref, (rx, ry) = _grads(lambda a, b: torch.where(c, a, b), (x, y))
    torch.testing.assert_close(out, ref, rtol=0, atol=0)
    torch.testing.assert_close((gx, gy), (rx, ry), rtol=0, atol=0)
    out, (g,) = _grads(lambda a: sw.cast(a, torch.float32), (x,))
    ref, (r,) = _grads(lambda a: a.to(torch.float32), (x,))
    assert out.dtype == torch.float32 and g.dtype == F64
    torch.testing.assert_close((out, g), (ref, r), rtol=0, atol=0)


def test_ties_split_the_gradient_as_torch():
    """maximum / minimum on equal operands: torch gives each side half the gradient."""
    x = torch.tensor([1.0, 2.0, 3.0], dtype=F64)
    y = torch.tensor([1.0, 1.0, 4.0], dtype=F64)
    for ours, theirs in ((sw.maximum, torch.maximum), (sw.minimum, torch.minimum)):
        assert [g.tolist() for g in _grads(ours, (x, y))[1]] == \
               [g.tolist() for g in _grads(theirs, (x, y))[1]]


@pytest.mark.parametrize("name,fn,args", [
    ("remainder", sw.remainder, "xy"), ("divide", sw.divide, "xy"), ("pow", sw.pow, "xy"),
    ("maximum", sw.maximum, "xy"), ("fma", sw.fma, "xyz"), ("sqrt", sw.sqrt, "x"),
    ("remainder scalar divisor", lambda a: sw.remainder(a, 0.75), "x"),
    ("pow scalar base", lambda b: sw.pow(2.5, b), "y"),
])
def test_gradcheck_float64(name, fn, args):
    x, y, z = _inputs(2)
    pool = {"x": x, "y": y, "z": z}
    assert torch.autograd.gradcheck(fn, tuple(_leaf(pool[a]) for a in args))


def test_scalar_operands_get_no_gradient_and_keep_weak_promotion():
    x = _leaf(torch.tensor([5.5, -3.25, 7.0], dtype=torch.float32))
    out = sw.remainder(x, 2)
    ref = torch.remainder(x.detach(), 2)
    assert out.dtype == ref.dtype and torch.equal(out.detach(), ref)
    out.sum().backward()
    assert torch.equal(x.grad, torch.ones(3))


def test_bool_and_complex_numbers_through_autograd_and_compile():
    """Python bools and complex numbers are schema Scalars too: with a tensor that requires
    grad, and in a compiled graph, they promote and differentiate as torch's own ops do (a
    real input's gradient from a complex result is its real part, without a warning)."""
    import warnings

    x = torch.tensor([0.5, -1.25, 2.0])
    z = torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64)
    cases = [(sw.add, torch.add, x, True), (sw.multiply, torch.mul, x, 2j),
             (sw.multiply, torch.mul, z, 1j), (sw.subtract, torch.sub, z, 0.5 - 1j)]
    for ours, theirs, t, number in cases:
        grads = []
        for fn in (ours, theirs):
            leaf = _leaf(t)
            out = fn(leaf, number)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                out.abs().sum().backward()
            grads.append((out.detach(), leaf.grad))
        (got, got_grad), (want, want_grad) = grads
        assert got.dtype == want.dtype and torch.equal(got, want)
        torch.testing.assert_close(got_grad, want_grad, rtol=1e-6, atol=1e-6)
    torch._dynamo.reset()
    f = torch.compile(lambda a: sw.where(a > 0, a, False) + sw.multiply(a, True) * sw.add(a, 1j).real,
                      fullgraph=True, backend="aot_eager")
    assert torch.equal(f(x), torch.where(x > 0, x, False) + torch.mul(x, True) * torch.add(x, 1j).real)


def test_floor_divide_has_no_derivative_as_in_torch():
    x, y = _leaf(torch.tensor([5.0, -3.0])), torch.tensor([2.0, 2.0])
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        torch.floor_divide(x, y).sum().backward()
    with pytest.raises(RuntimeError, match="derivative for stridewise::floor_divide.* is not implemented"):
        sw.floor_divide(x, y).sum().backward()


def test_integer_result_does_not_require_grad():
    x = _leaf(torch.tensor([1.5, -2.5]))
    out = sw.cast(x, torch.int32)
    assert out.dtype == torch.int32 and not out.requires_grad
    assert out.requires_grad == x.to(torch.int32).requires_grad


def test_no_grad_runs_the_plain_path():
    x = _leaf(torch.rand(5, dtype=F64))
    with torch.no_grad():
        for _ in range(2):        # cold, then warm
            out = sw.remainder(x, 0.3)
            assert not out.requires_grad and torch.equal(out, torch.remainder(x.detach(), 0.3))


# -- user kernels ------------------------------------------------------------------------

def _sqmul(**kw):
    return sw.ElementwiseKernel("T x, T y", "T z", "z = x * x * y", name="sqmul", **kw)


def test_kernel_without_backward_refuses_a_gradient():
    k = _sqmul()
    x = _leaf(torch.rand(3, dtype=F64))
    with pytest.raises(RuntimeError, match=r"x requires grad, but the kernel has no backward.*backward=fn"):
        k(x, torch.rand(3, dtype=F64))
    assert torch.equal(k(x.detach(), x.detach()), x.detach() ** 3)


def test_kernel_backward_gradcheck():
    def backward(inputs, outputs, grads):
        x, y = inputs
        (g,) = grads
        return 2 * x * y * g, x * x * g

    x, y, _ = _inputs(3)
    for k in (_sqmul(backward=backward), _sqmul()):
        if k._backward is None:
            k.defvjp(backward)
        assert torch.autograd.gradcheck(k, (_leaf(x), _leaf(y)))
        out, grads = _grads(k, (x, y))
        ref, ref_grads = _grads(lambda a, b: a * a * b, (x, y))
        torch.testing.assert_close((out, *grads), (ref, *ref_grads), rtol=1e-14, atol=1e-14)


def test_two_output_kernel_with_outs_given_under_autograd_and_fake():
    """Two outputs, outs given (their dtype binds T, their shape broadcasts the inputs): the
    gradient reaches the inputs through both outputs, and the fake result is the eager one."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    def backward(i, o, g):
        return g[0] * i[1] + g[1], g[0] * i[0] - g[1]

    x, y, _ = _inputs(7)
    grad_k = sw.ElementwiseKernel("T x, T y", "T z, T w", "z = x * y; w = x - y",
                                  name="mulsub", backward=backward)
    assert torch.autograd.gradcheck(lambda a, b: grad_k(a, b), (_leaf(x), _leaf(y)))
    k = sw.ElementwiseKernel("float64 x, float64 y", "T z, T w", "z = x * y; w = x - y",
                             name="mulsub_out")
    z, w = torch.empty(4, 3, dtype=F64), torch.empty(4, 3, dtype=F64)
    with torch.no_grad():
        k(x, y, z, w)
    assert torch.equal(z, x * y) and torch.equal(w, x - y)
    row, zf, wf = y[None, :], z.float(), w.float()
    with FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) for t in (x, row, zf, wf)]
        k(*fakes)                 # defines the overload; the outs come back through copy_
        op = getattr(torch.ops.stridewise, _torch_ops._name(k)).TT
        fz, fw = op(*fakes, None)
    for f in (fz, fw):
        assert (f.dtype, f.shape, f.stride()) == (zf.dtype, zf.shape, zf.stride())


def test_kernel_backward_of_the_wrong_arity_is_named():
    k = _sqmul(backward=lambda inputs, outputs, grads: (grads[0],))
    x = _leaf(torch.rand(3, dtype=F64))
    with pytest.raises(TypeError, match="return one gradient .* per input, 2 in all"):
        k(x, x).sum().backward()


# -- in place, out= and version counters --------------------------------------------------

def _torch_error(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


def test_in_place_refuses_a_leaf_that_requires_grad_as_torch():
    x = _leaf(torch.rand(3) + 1)
    expected = _torch_error(lambda: x.remainder_(0.5))
    with pytest.raises(RuntimeError, match="^" + expected + "$"):
        sw.remainder_(x, 0.5)
    assert x._version == 0


def test_out_refuses_autograd_as_torch():
    x, o = _leaf(torch.rand(3) + 1), torch.empty(3)
    expected = _torch_error(lambda: torch.remainder(x, 0.5, out=o))
    with pytest.raises(RuntimeError, match="^" + expected.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.") + "$"):
        sw.remainder(x, 0.5, out=o)


def test_in_place_on_a_non_leaf_is_differentiated_as_torch():
    x, y, _ = _inputs(4)

    def run(fn):
        a = _leaf(x)
        b = a * 1.5
        fn(b)
        b.sum().backward()
        return b.detach(), a.grad

    torch.testing.assert_close(run(lambda b: sw.remainder_(b, y)), run(lambda b: b.remainder_(y)),
                               rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("how", ["out", "inplace", "builtin out"])
def test_writes_bump_the_version_counter(warm_path, how):
    a, b = torch.rand(8, 16) + 1, torch.rand(16) + 1
    o = torch.empty(8, 16)
    call = {"out": lambda: sw.remainder(a, b, out=o), "inplace": lambda: sw.remainder_(o, b),
            "builtin out": lambda: sw.add(a, b, out=o)}[how]
    for i in range(3):            # cold, remembered, warm
        before = o._version
        call()
        assert o._version == before + 1, f"call {i}"


def test_overwriting_a_saved_tensor_fails_backward_as_torch():
    """`backward()` after an out= write into a tensor autograd saved raises torch's
    "modified by an inplace operation", for torch's op and for stridewise's alike."""
    def run(write):
        x = _leaf(torch.rand(4))
        w = torch.rand(4) + 1
        y = x * w                 # saves w
        write(w)
        return _torch_error(lambda: y.sum().backward())

    ours = run(lambda w: sw.remainder(w, 0.5, out=w))
    theirs = run(lambda w: torch.remainder(w, 0.5, out=w))
    assert "modified by an inplace operation" in theirs
    assert ours == theirs


# -- fake and meta tensors, dispatch modes --------------------------------------------------

LAYOUTS = [
    lambda: (torch.rand(4, 6), torch.rand(6)),
    lambda: (torch.rand(6, 4).t(), torch.rand(4, 6)),
    lambda: (torch.rand(3, 1, 5).permute(2, 0, 1), torch.rand(5, 1, 1).double()),
    lambda: (torch.randint(-9, 9, (2, 3), dtype=torch.int32), 2.5),
]


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_fake_and_meta_results_match_eager(layout):
    """The fake (meta) implementation gives the eager result's shape, dtype and strides."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    a, b = LAYOUTS[layout]()
    eager = sw.remainder(a, b)
    meta = sw.remainder(*(t.to("meta") if isinstance(t, torch.Tensor) else t for t in (a, b)))
    with FakeTensorMode() as mode:
        fake = sw.remainder(*(mode.from_tensor(t) if isinstance(t, torch.Tensor) else t
                              for t in (a, b)))
    for r in (meta, fake):
        assert (r.shape, r.dtype, r.stride()) == (eager.shape, eager.dtype, eager.stride())
    assert meta.device.type == "meta"
    ref = torch.remainder(a, b)
    assert (eager.shape, eager.dtype) == (ref.shape, ref.dtype)


def test_meta_after_a_warm_cpu_call():
    """A meta tensor keys like a CPU tensor (get_device() is -1 for both): it must not run
    the CPU kernel remembered for that key."""
    a = torch.rand(8, 16)
    sw.remainder(a, a)
    sw.remainder(a, a)
    m = sw.remainder(a.to("meta"), a.to("meta"))
    assert m.device.type == "meta" and m.shape == a.shape


def test_fake_errors_are_the_eager_ones():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        a, b = mode.from_tensor(torch.rand(3, 4)), mode.from_tensor(torch.rand(5))
        with pytest.raises(ValueError, match="broadcast"):
            sw.remainder(a, b)


def test_warm_calls_leave_grad_and_modes_to_the_dispatcher(warm_path):
    """A signature already warm on plain tensors: the same call with an input that requires
    grad, on meta tensors, or under make_fx's dispatch mode, goes through the custom op."""
    from torch.fx.experimental.proxy_tensor import make_fx

    a, b = torch.rand(4, 6) + 1, torch.rand(6) + 1
    for _ in range(3):
        assert not sw.remainder(a, b).requires_grad
    assert sw.remainder(a.requires_grad_(), b).grad_fn is not None
    a.requires_grad_(False)
    assert sw.remainder(a.to("meta"), b.to("meta")).device.type == "meta"
    gm = make_fx(lambda x, y: sw.remainder(x, y))(a, b)
    assert "stridewise.remainder.TT" in {str(n.target) for n in gm.graph.nodes}


def test_forward_ad_dual_tensors_get_torchs_tangents(warm_path):
    """Dual tensors of torch.autograd.forward_ad (which neither require grad nor are wrapped)
    go through the ops' jvp, on a signature already warm on plain tensors too: each tangent is
    torch's for the same op, and a user kernel's comes from its backward. Without the routing
    the result came back with no tangent, silently."""
    import torch.autograd.forward_ad as fwAD

    x, y = torch.rand(4, 6, dtype=torch.float64) + 1, torch.rand(6, dtype=torch.float64) + 1
    tx, ty = torch.rand(4, 6, dtype=torch.float64), torch.rand(6, dtype=torch.float64)
    k = _sqmul(backward=lambda i, o, g: (2 * i[0] * i[1] * g[0], i[0] * i[0] * g[0]))
    cases = [(sw.remainder, torch.remainder), (sw.multiply, torch.mul), (sw.divide, torch.div),
             (sw.power, torch.pow), (sw.maximum, torch.maximum), (k, lambda a, b: a * a * b)]
    for ours, theirs in cases:
        for _ in range(3):
            ours(x, y)                                   # warm on plain tensors
        with fwAD.dual_level():
            for args in ((fwAD.make_dual(x, tx), fwAD.make_dual(y, ty)), (fwAD.make_dual(x, tx), y),
                         (x, fwAD.make_dual(y, ty))):
                got, want = fwAD.unpack_dual(ours(*args)), fwAD.unpack_dual(theirs(*args))
                assert got.tangent is not None, ours
                torch.testing.assert_close(got.primal, want.primal, rtol=1e-13, atol=0)
                torch.testing.assert_close(got.tangent, want.tangent, rtol=1e-13, atol=1e-13)
        with fwAD.dual_level():
            got = fwAD.unpack_dual(sw.exp(fwAD.make_dual(x, tx)))
        torch.testing.assert_close(got.tangent, tx * torch.exp(x), rtol=1e-13, atol=0)


def test_make_fx_records_the_custom_op():
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(a, b):
        return sw.remainder(a, b) + sw.exp(a)

    a, b = torch.rand(3, 4) + 1, torch.rand(4) + 1
    gm = make_fx(f)(a, b)
    targets = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    assert {"stridewise.remainder.TT", "stridewise.exp.T"} <= targets
    torch.testing.assert_close(gm(a, b), torch.remainder(a, b) + torch.exp(a), rtol=1e-6, atol=1e-6)


def test_opcheck_builtin_and_kernel():
    """torch.library.opcheck: schema, fake vs real, autograd registration, as torch tests
    its own custom ops."""
    x, y, _ = _inputs(5)
    sw.remainder(_leaf(x), y)    # defines the overloads
    k = _sqmul(backward=lambda i, o, g: (2 * i[0] * i[1] * g[0], i[0] * i[0] * g[0]))
    k(_leaf(x), y)
    ops = [(torch.ops.stridewise.remainder.TT, (_leaf(x), y, None, None)),
           (getattr(torch.ops.stridewise, _torch_ops._name(k)).TT, (_leaf(x), _leaf(y), None, None))]
    for op, args in ops:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor",
                                                    "test_autograd_registration"))


def test_vmap_is_torchs_batched_op():
    """torch.vmap over built-ins and a user kernel, batch dims anywhere, inputs unbatched,
    numbers, logical ranks that differ and nested vmap: each equals torch's op on the whole
    arrays (the batch as a leading dim), values, dtype and shape."""
    x, y, z = _inputs(6)                      # (4, 3), (3,), (4, 1)
    xb = torch.stack([x, x * 1.5, x + 2])     # a batch of 3 along dim 0
    cases = [
        (sw.remainder, torch.remainder, (0, None), (xb, y), (xb, y)),
        (sw.remainder, torch.remainder, (2, None), (xb.permute(1, 2, 0), y), (xb, y)),
        (sw.remainder, torch.remainder, (None, 0), (x, torch.stack([y, y + 1])), (x, torch.stack([y, y + 1])[:, None])),
        (sw.multiply, torch.mul, (0, None), (xb, 0.5), (xb, 0.5)),
        (sw.add, torch.add, (0, 0), (torch.stack([y, y]), torch.stack([z, z])), (torch.stack([y, y])[:, None], torch.stack([z, z]))),
    ]
    for fn, ref, dims, args, ref_args in cases:
        got = torch.vmap(fn, in_dims=dims)(*args)
        want = ref(*ref_args)
        assert got.shape == want.shape and got.dtype == want.dtype and torch.equal(got, want), fn
    nested = torch.vmap(torch.vmap(sw.remainder, in_dims=(0, None)), in_dims=(0, None))(xb, y)
    assert torch.equal(nested, torch.remainder(xb, y))
    k = _sqmul()
    assert torch.equal(torch.vmap(k, in_dims=(0, None))(xb, y), xb * xb * y)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_func_transforms_take_torchs_derivatives(device):
    """torch.func's grad, vjp, jacrev, jacfwd, hessian and vmap(grad) (per-sample gradients)
    through built-ins and a user kernel with a backward: each is torch.func's answer over
    torch's own ops (register_autograd's generated Function alone is refused under these
    transforms: pytorch/pytorch#168393)."""
    x, y, _ = (t.to(device) for t in _inputs(8))            # (4, 3), (3,)
    k = _sqmul(backward=lambda i, o, g: (2 * i[0] * i[1] * g[0], i[0] * i[0] * g[0]))

    def ours(a, b):
        return (sw.remainder(a, b) * sw.multiply(a, b) + sw.divide(a, 3.0) + k(a, b)).sum()

    def theirs(a, b):
        return (torch.remainder(a, b) * torch.mul(a, b) + torch.div(a, 3.0) + a * a * b).sum()

    tight = dict(rtol=1e-13, atol=1e-13)
    f = torch.func
    torch.testing.assert_close(f.grad(ours, argnums=(0, 1))(x, y), f.grad(theirs, argnums=(0, 1))(x, y), **tight)
    torch.testing.assert_close(f.jacrev(ours, argnums=1)(x, y), f.jacrev(theirs, argnums=1)(x, y), **tight)
    torch.testing.assert_close(f.jacfwd(ours, argnums=1)(x, y), f.jacfwd(theirs, argnums=1)(x, y), **tight)
    torch.testing.assert_close(f.hessian(ours)(x[0], y), f.hessian(theirs)(x[0], y), **tight)
    torch.testing.assert_close(f.vmap(f.grad(ours), in_dims=(0, None))(x, y),
                               f.vmap(f.grad(theirs), in_dims=(0, None))(x, y), **tight)
    (_, pullback), (_, ref_pullback) = f.vjp(sw.sqrt, y), f.vjp(torch.sqrt, y)
    torch.testing.assert_close(pullback(x[0]), ref_pullback(x[0]), **tight)
    _, tangent = f.jvp(sw.divide, (x, y), (torch.ones_like(x), y))
    _, ref_tangent = f.jvp(torch.div, (x, y), (torch.ones_like(x), y))
    torch.testing.assert_close(tangent, ref_tangent, **tight)
    z = torch.ones(3, dtype=torch.complex128, device=device)
    with pytest.raises(NotImplementedError, match="complex tensors are not implemented; use torch.func.jacrev"):
        f.jvp(lambda a: sw.multiply(a, a), (z,), (z,))


def test_torch_func_inside_torch_compile():
    """torch.func.grad around stridewise ops inside a compiled function: fullgraph names the
    limit (Dynamo cannot trace the autograd.Function the transform needs), and without it the
    frame runs eagerly, with torch's gradients."""
    x, y, _ = _inputs(11)

    def grad_of(rem, sin):
        return lambda a, b: torch.func.grad(lambda t: (rem(t, b) * sin(t)).sum())(a)

    torch._dynamo.reset()
    with pytest.raises(Exception, match="run eagerly only"):
        torch.compile(grad_of(sw.remainder, sw.sin), fullgraph=True, backend="aot_eager")(x, y)
    torch._dynamo.reset()
    got = torch.compile(grad_of(sw.remainder, sw.sin), backend="aot_eager")(x, y)
    torch.testing.assert_close(got, grad_of(torch.remainder, torch.sin)(x, y), rtol=1e-13, atol=1e-13)


def test_tensor_subclasses_keep_their_type_as_in_torch():
    """A user's Tensor subclass: torch's default __torch_function__ gives the result the
    subclass's type, and one that overrides it sees the stridewise op (the kernel reads the
    tensor as a plain one; it routed back into itself before)."""
    class Tagged(torch.Tensor):
        pass

    seen = []

    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return super().__torch_function__(func, types, args, kwargs or {})

    x, y, _ = _inputs(9)
    k = _sqmul()
    for cls in (Tagged, Logged):
        a = x.as_subclass(cls)
        for got, want in ((sw.remainder(a, y), torch.remainder(a, y)), (sw.add(a, 2.0), torch.add(a, 2.0)),
                          (k(a, y), a * a * y)):
            assert type(got) is type(want) is cls
            assert torch.equal(got.as_subclass(torch.Tensor), want.as_subclass(torch.Tensor))
    assert any("stridewise.remainder" in f for f in seen)


def test_jit_trace_records_the_custom_ops(warm_path):
    """torch.jit.trace of a function already warm on the same tensors: the trace records the
    stridewise ops (the warm path leaves a call to torch's dispatcher while it records), and
    the traced function is torch's ops' answer at another shape."""
    def f(a, b):
        return sw.remainder(a, b) * 2 + sw.add(a, 1.5)

    x, y, _ = _inputs(10)
    for _ in range(3):
        f(x, y)
    traced = torch.jit.trace(f, (x, y))
    assert "stridewise::remainder" in str(traced.graph) and "stridewise::add" in str(traced.graph)
    x2, y2 = torch.rand(6, 3, dtype=F64) * 4, torch.rand(3, dtype=F64) + 0.5
    assert torch.equal(traced(x2, y2), torch.remainder(x2, y2) * 2 + torch.add(x2, 1.5))


def test_vmap_after_warm_calls_of_the_same_logical_shape(warm_path):
    """A batched tensor's logical shape is a plain tensor's: the warm path, keyed for the
    plain call, must leave it to the custom op (it has no storage to point at)."""
    x, y, _ = _inputs(7)
    for _ in range(3):
        sw.remainder(x, y)
    xb = torch.stack([x, x + 1])
    assert torch.equal(torch.vmap(sw.remainder, in_dims=(0, None))(xb, y), torch.remainder(xb, y))


# -- torch.compile ---------------------------------------------------------------------------

def test_compile_fullgraph_aot_eager_covers_every_entry_point():
    """Built-ins, remainder and remainder_, out=, user kernels: one graph, no break
    (aot_eager: AOTAutograd and the fakes, without Inductor's compile time)."""
    k = _sqmul(backward=lambda i, o, g: (2 * i[0] * i[1] * g[0], i[0] * i[0] * g[0]))

    def f(a, b, o):
        r = sw.remainder(a, b) + sw.add(a, 1.0) * sw.sin(b)
        sw.multiply(r, 2.0, out=o)
        c = r * 1.0
        sw.remainder_(c, 0.75)
        z = torch.empty_like(c)
        k(c, b, z)                # the kernel's out, given
        return k(c, b) + o + z

    a, b = torch.rand(4, 3, dtype=F64) + 0.5, torch.rand(3, dtype=F64) + 0.5
    o1, o2 = torch.empty(4, 3, dtype=F64), torch.empty(4, 3, dtype=F64)
    torch._dynamo.reset()
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(a, b, o1)
    torch.testing.assert_close(got, f(a, b, o2), rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(o1, o2, rtol=0, atol=0)


def test_compile_every_builtin_traces():
    """Each built-in, with tensor and number operands, in one graph; results bit for bit the
    eager ones (aot_eager runs the same kernels), dtypes included."""
    def f(a, b):
        return [sw.add(a, b), sw.subtract(a, 2), sw.multiply(3, b), sw.divide(a, b),
                sw.fmod(a, b), sw.floor_divide(a, b), sw.maximum(a, b), sw.minimum(a, b),
                sw.pow(a, b), sw.pow(a, 2), sw.where(a > b, a, b), sw.relu(a - 1), sw.abs(a),
                sw.negative(a), sw.exp(a), sw.log(a), sw.sqrt(a), sw.sin(a), sw.cos(a),
                sw.fma(a, b, a), sw.cast(a, torch.float32), sw.remainder(a, b)]

    a, b = torch.rand(4, 3, dtype=F64) + 0.5, torch.rand(3, dtype=F64) + 0.5
    torch._dynamo.reset()
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(a, b)
    for g, r in zip(got, f(a, b), strict=True):
        assert g.dtype == r.dtype and torch.equal(g, r)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [None, True])
def test_compile_across_shapes_and_numbers(dynamic, device):
    """A compiled function called with new shapes and Python numbers: Dynamo recompiles with
    symbolic sizes and numbers (dynamic=None does so from the second call on), the fakes type
    a symbolic number by its kind and lay the output out from symbolic sizes. Values, dtypes
    and strides are torch's own ops', channels_last and integer tensors included."""
    # no product feeds a sum: NVRTC contracts a user kernel's x * x + y into an fma, as CuPy's
    # does (README), where torch's ops round twice
    k = sw.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * x", "submul")

    def ours(a, b, i, n, s):
        return [sw.remainder(a, b), sw.add(a, n), sw.multiply(a, s), sw.where(a > 0, a, b),
                sw.cast(a, torch.float16), sw.clip(a, -0.5, 0.5), k(a, b),
                sw.negative(a.transpose(-1, -2)), sw.remainder(i, n), sw.pow(i, n), sw.divide(i, s)]

    def theirs(a, b, i, n, s):
        return [torch.remainder(a, b), torch.add(a, n), torch.mul(a, s), torch.where(a > 0, a, b),
                a.to(torch.float16), torch.clamp(a, -0.5, 0.5), (a - b) * a,
                torch.neg(a.transpose(-1, -2)), torch.remainder(i, n), torch.pow(i, n), torch.div(i, s)]

    torch._dynamo.reset()
    compiled = torch.compile(ours, fullgraph=True, backend="aot_eager", dynamic=dynamic)
    g = torch.Generator().manual_seed(5)
    for shape, n, s in [((3, 5), 3, 1.5), ((4, 7), 4, 2.5), ((6, 9), 5, -0.25), ((2, 3, 4, 5), 2, 3.0)]:
        a, b = torch.randn(shape, generator=g), torch.rand(shape[-1], generator=g) + 0.5
        if len(shape) == 4:
            a = a.contiguous(memory_format=torch.channels_last)
        i = torch.randint(-50, 50, shape, generator=g)
        a, b, i = a.to(device), b.to(device), i.to(device)
        for got, want in zip(compiled(a, b, i, n, s), theirs(a, b, i, n, s), strict=True):
            assert (got.dtype, got.shape, got.stride()) == (want.dtype, want.shape, want.stride())
            assert torch.equal(got, want), (shape, n, s)


def test_export_with_dynamic_dims():
    """torch.export with dynamic dims: the fakes' layout rule takes no guard on a symbolic
    extent (a row divisor's length compared with the batch extent was one), so each export
    holds for every size in the dims' ranges; the exported program's results, values and
    strides, are torch's own ops' at other sizes."""
    D = torch.export.Dim
    rows, cols, n, h = D("rows"), D("cols"), D("n"), D("h")

    def nchw(*shape):
        return torch.randn(shape).contiguous(memory_format=torch.channels_last)

    cases = [   # ours, theirs, example inputs, their dynamic dims, inputs of other sizes
        (sw.remainder, torch.remainder, (torch.randn(4, 6), torch.rand(6) + 0.5),
         ({0: rows}, None), [(torch.randn(9, 6), torch.rand(6) + 0.5)]),
        (sw.remainder, torch.remainder, (torch.randn(4, 6), torch.rand(6) + 0.5),
         ({0: rows, 1: cols}, {0: cols}), [(torch.randn(5, 7), torch.rand(7) + 1), (torch.randn(9, 3), torch.rand(3) + 1)]),
        (lambda x, y: sw.remainder(x.t(), y), lambda x, y: torch.remainder(x.t(), y),
         (torch.randn(6, 4), torch.rand(6) + 1), ({0: cols, 1: rows}, {0: cols}), [(torch.randn(7, 5), torch.rand(7) + 1)]),
        (sw.multiply, torch.mul, (nchw(2, 3, 8, 8), torch.rand(1, 3, 1, 1)), ({0: n, 2: h}, None),
         [(nchw(3, 3, 5, 8), torch.rand(1, 3, 1, 1))]),
        (sw.add, torch.add, (torch.randn(4, 6), torch.rand(4, 1)), ({0: rows}, {0: rows}),
         [(torch.randn(9, 6), torch.rand(9, 1))]),
        (lambda x: sw.cast(x.t(), torch.float16), lambda x: x.t().to(torch.float16), (torch.randn(6, 4),),
         ({0: cols, 1: rows},), [(torch.randn(7, 5),)]),
    ]
    for ours, theirs, example, dims, others in cases:
        module = type("M", (torch.nn.Module,), {"forward": lambda self, *a, f=ours: f(*a)})()
        program = torch.export.export(module, example, dynamic_shapes=(dims,)).module()
        for args in others:
            got, want = program(*args), theirs(*args)
            assert (got.dtype, got.shape, got.stride()) == (want.dtype, want.shape, want.stride())
            assert torch.equal(got, want)


def test_compile_fullgraph_inductor_cpu_trains():
    """Inductor's CPU backend: the compiled step's loss and gradients are eager torch's."""
    def encode(pos, w, period):
        return torch.sin(sw.remainder(pos, period) * w).sum()

    def encode_ref(pos, w, period):
        return torch.sin(torch.remainder(pos, period) * w).sum()

    pos = torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.37
    torch._dynamo.reset()
    compiled = torch.compile(encode, fullgraph=True, backend="inductor")
    w1 = _leaf(torch.rand(4))
    w2 = _leaf(w1)
    p1, p2 = _leaf(pos), _leaf(pos)
    loss = compiled(p1, w1, 1.5)
    ref = encode_ref(p2, w2, 1.5)
    loss.backward()
    ref.backward()
    torch.testing.assert_close((loss, w1.grad, p1.grad), (ref, w2.grad, p2.grad), rtol=1e-5, atol=1e-5)


# -- GPU: the same through CUDA, in CUDA graphs ------------------------------------------------

@pytest.mark.gpu
def test_cuda_gradcheck_and_fake():
    x, y, _ = (t.cuda() for t in _inputs(6))
    assert torch.autograd.gradcheck(sw.remainder, (_leaf(x), _leaf(y)))
    assert torch.autograd.gradcheck(sw.pow, (_leaf(x), _leaf(y)))
    from torch._subclasses.fake_tensor import FakeTensorMode

    eager = sw.remainder(x, y)
    with FakeTensorMode() as mode:
        fake = sw.remainder(mode.from_tensor(x), mode.from_tensor(y))
    assert (fake.shape, fake.dtype, fake.stride(), fake.device) == \
           (eager.shape, eager.dtype, eager.stride(), eager.device)


@pytest.mark.gpu
def test_cuda_compiled_graph_in_a_cuda_graph():
    """mode="reduce-overhead": Inductor captures the compiled graph, stridewise's kernels
    included, in a CUDA graph and replays it."""
    def f(a, b):
        return sw.remainder(a, b) * 2 + sw.exp(b)

    a, b = torch.rand(64, 32, device="cuda") + 1, torch.rand(32, device="cuda") + 1
    torch._dynamo.reset()
    cf = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    for _ in range(3):            # warm-up, record, replay
        got = cf(a, b)
    torch.testing.assert_close(got, torch.remainder(a, b) * 2 + torch.exp(b), rtol=1e-6, atol=1e-6)
    a.copy_(torch.rand(64, 32, device="cuda") + 1)
    got = cf(a, b)
    torch.testing.assert_close(got, torch.remainder(a, b) * 2 + torch.exp(b), rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_cuda_compile_inductor_trains():
    pos = (torch.arange(96, dtype=torch.float32, device="cuda").reshape(8, 12) * 0.37)
    w1 = _leaf(torch.rand(12, device="cuda"))
    w2 = _leaf(w1.detach())
    torch._dynamo.reset()
    loss = torch.compile(lambda p, w: torch.sin(sw.remainder(p, 1.5) * w).sum(), fullgraph=True)(pos, w1)
    ref = torch.sin(torch.remainder(pos, 1.5) * w2).sum()
    loss.backward()
    ref.backward()
    torch.testing.assert_close((loss, w1.grad), (ref, w2.grad), rtol=1e-5, atol=1e-5)


def test_train_bench_variants_agree_with_torch(monkeypatch):
    """The training-step bench checks every variant's loss and gradients against eager torch
    before timing; here the eager variants, on a tiny model."""
    from stridewise.bench import matrix as bench
    from stridewise.bench import train as bench_train

    monkeypatch.setitem(bench_train.SIZES, "cpu", (64, 8, 16))
    monkeypatch.setattr(bench, "time_interleaved",
                        lambda fns, dev: {k: {"time_s": (f(), 1.0)[1]} for k, f in fns.items()})
    rows = bench_train.run_train("cpu", compile_=False)
    assert [r["impl"] for r in rows] == ["torch eager", "stridewise eager"]
    assert all("error" not in r for r in rows)


def test_saved_inputs_only_where_the_derivative_reads_them():
    """add reads neither input in backward: overwriting one afterwards is fine, as in torch;
    multiply reads them: overwriting one fails backward, as in torch."""
    for ours, theirs, fails in ((sw.add, torch.add, False), (sw.multiply, torch.mul, True)):
        for fn in (ours, theirs):
            x, w = _leaf(torch.rand(3)), torch.rand(3)
            y = fn(x, w)
            w.add_(1)
            if fails:
                with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                    y.sum().backward()
            else:
                y.sum().backward()
                assert torch.equal(x.grad, torch.ones(3))


def test_compiled_cast_after_numpy_calls():
    """torch.compile traces dtype_of, whose memo a NumPy call fills with NumPy dtypes; torch
    2.11's Dynamo cannot hash those among a dict's keys, so torch dtypes have a memo of their
    own (test_compile_every_builtin_traces failed after NumPy tests in the same process)."""
    import numpy as np

    from stridewise.operands.dtypes import dtype_of

    dtype_of(np.dtype("float64"))
    sw.add(np.ones(3), np.ones(3, np.float32))
    f = torch.compile(lambda a: sw.cast(a, torch.float32), fullgraph=True)
    got = f(torch.arange(4, dtype=torch.float64))
    assert got.dtype == torch.float32 and torch.equal(got, torch.arange(4, dtype=torch.float32))
