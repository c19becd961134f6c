"""Output layout: stridewise allocates its output as the owning library's own op would, and its
strides (not only its values) equal that op's, over hypothesis-generated layouts: permutations,
channels_last, broadcasts, extent-1 dims, negative steps (NumPy), slices with steps."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import stridewise as sw
from stridewise.plan import TooManyDims
from stridewise.operands import layout as _layout

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def base_shapes(draw, max_dims=4):
    nd = draw(st.integers(1, max_dims))
    return tuple(draw(st.lists(st.sampled_from([1, 1, 2, 3, 4, 5]), min_size=nd, max_size=nd)))


@st.composite
def layout_of(draw, shape, negative: bool):
    """A view of `shape` made the ways user code makes views: a permuted dense buffer, then
    per dim a step (and with `negative`, a reversal), or a broadcast of an extent-1 dim."""
    nd = len(shape)
    perm = draw(st.permutations(range(nd)))
    steps = [draw(st.sampled_from([1, 1, 1, 2])) for _ in range(nd)]
    flips = [negative and draw(st.booleans()) for _ in range(nd)]
    bcast = [n > 1 and draw(st.integers(0, 5)) == 0 for n in shape]
    return perm, steps, flips, bcast


def make_numpy(shape, how, dtype):
    perm, steps, flips, bcast = how
    own = [1 if b else n for n, b in zip(shape, bcast)]
    big = [own[d] * steps[d] for d in perm]
    a = (np.arange(int(np.prod(big)) or 1)[: int(np.prod(big))].reshape(big) % 7 + 1).astype(dtype)
    a = a.transpose(np.argsort(perm))
    a = a[tuple(slice(None, None, -s if f else s) for s, f in zip(steps, flips))]
    return np.broadcast_to(a, shape) if any(bcast) else a


def make_torch(shape, how, dtype, device="cpu"):
    perm, steps, _, bcast = how
    own = [1 if b else n for n, b in zip(shape, bcast)]
    big = [own[d] * steps[d] for d in perm]
    t = (torch.arange(int(np.prod(big)), device=device).reshape(big) % 7 + 1).to(dtype)
    t = t.permute(*np.argsort(perm).tolist())[tuple(slice(None, None, s) for s in steps)]
    return t.expand(*shape) if any(bcast) else t


def _rank_shape(shape, k):
    """The right-aligned trailing k dims of `shape`, some dropped to 1 (a broadcast operand)."""
    return shape[len(shape) - k:]


@st.composite
def operand_pair(draw, negative):
    shape = draw(base_shapes())
    k2 = draw(st.integers(1, len(shape)))
    s2 = tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in _rank_shape(shape, k2))
    return shape, draw(layout_of(shape, negative)), s2, draw(layout_of(s2, negative))


def _check_torch(a, b, out_dtype=None):
    want = torch.remainder(a, b)
    got = sw.remainder(a, b)
    assert got.stride() == want.stride(), (a.shape, a.stride(), b.shape, b.stride())
    assert got.dtype == want.dtype
    assert torch.equal(got, want)


@SETTINGS
@given(operand_pair(negative=False), st.sampled_from(["float32", "int64"]))
def test_torch_strides_match_tensoriterator(case, dtype):
    """Allocated outputs take the strides torch.remainder gives, with its values."""
    shape, how, s2, how2 = case
    dt = getattr(torch, dtype)
    _check_torch(make_torch(shape, how, dt), make_torch(s2, how2, dt))


@SETTINGS
@given(operand_pair(negative=False))
def test_torch_strides_mixed_dtypes_cpu(case):
    """float16 with float32: on the CPU torch casts the float16 input with .to() first, which
    makes a non-dense one dense; the output's strides follow."""
    shape, how, s2, how2 = case
    _check_torch(make_torch(shape, how, torch.float16), make_torch(s2, how2, torch.float32))


@SETTINGS
@given(base_shapes(), st.data())
def test_torch_strides_with_python_scalar(shape, data):
    """A Python scalar is a wrapped 0-d tensor to torch: it turns the fast setup off."""
    t = make_torch(shape, data.draw(layout_of(shape, False)), torch.float32)
    want = torch.remainder(t, 3.0)
    got = sw.remainder(t, 3.0)
    assert got.stride() == want.stride() and torch.equal(got, want)


@SETTINGS
@given(operand_pair(negative=False), st.sampled_from(["less", "equal", "logical_and", "isnan"]))
def test_torch_comparison_strides_follow_the_common_dtype(case, op):
    """A comparison's bool result: torch casts the inputs to their common dtype (not to
    bool), so same-dtype inputs keep their layouts, on the CPU too."""
    shape, how, s2, how2 = case
    a, b = make_torch(shape, how, torch.float32), make_torch(s2, how2, torch.float32)
    args = (a,) if op == "isnan" else (a, b)
    want = getattr(torch, {"equal": "eq"}.get(op, op))(*args)
    got = getattr(sw, op)(*args)
    assert got.dtype == want.dtype and got.stride() == want.stride(), (a.stride(), b.stride())
    assert torch.equal(got, want)


@SETTINGS
@given(base_shapes(), st.data(), st.sampled_from(["cast", "abs", "isfinite", "isinf"]))
def test_torch_cast_and_complex_abs_strides_are_empty_like(shape, data, op):
    """x.to(dtype), the absolute value of a complex tensor, and isfinite and isinf of an
    integer one allocate empty_like(x): x's own strides where x is dense (extent-1 dims'
    strides included), else infer_dense_strides."""
    x = make_torch(shape, data.draw(layout_of(shape, False)), torch.float32)
    if op == "cast":
        want, got = x.to(torch.float16), sw.cast(x, torch.float16)
    elif op in ("isfinite", "isinf"):     # of an integer tensor: ones_like / zeros_like
        i = make_torch(shape, data.draw(layout_of(shape, False)), torch.int32)
        want, got = getattr(torch, op)(i), getattr(sw, op)(i)
    else:
        z = make_torch(shape, data.draw(layout_of(shape, False)), torch.complex64)
        want, got = torch.abs(z), sw.abs(z)
    assert got.dtype == want.dtype and got.stride() == want.stride()
    assert torch.equal(got, want)


@SETTINGS
@given(base_shapes(), st.data(), st.sampled_from(["clamp numbers", "clamp 0-d and number", "clamp 0-d",
                                                  "pow number exponent", "pow number base"]))
def test_torch_scalar_overloads_allocate_over_the_tensor_alone(shape, data, call):
    """torch takes numbers as Scalar arguments where an overload has them: clamp with a number
    bound (a 0-d tensor bound then converts too) and pow with a number exponent run a
    TensorIterator over x alone (its fast setup keeps x's dense layout); pow of a number
    allocates C-contiguous; clamp with tensor bounds only takes them all as operands."""
    x = make_torch(shape, data.draw(layout_of(shape, False)), torch.float32)
    t0 = torch.tensor(2.0)
    torch_fn, sw_fn, args = {
        "clamp numbers": (torch.clamp, sw.clip, (x, 2.0, 5.0)),
        "clamp 0-d and number": (torch.clamp, sw.clip, (x, t0, 5.0)),
        "clamp 0-d": (torch.clamp, sw.clip, (x, t0, t0 + 3)),
        "pow number exponent": (torch.pow, sw.pow, (x, 2.0)),
        "pow number base": (torch.pow, sw.pow, (2.0, x)),
    }[call]
    want, got = torch_fn(*args), sw_fn(*args)
    assert got.dtype == want.dtype and got.stride() == want.stride(), x.stride()
    assert torch.equal(got, want)


@SETTINGS
@given(base_shapes(), st.data(), st.sampled_from(["cast", "abs", "less"]))
def test_numpy_cast_abs_and_comparison_strides_are_order_k(shape, data, op):
    x = make_numpy(shape, data.draw(layout_of(shape, True)), np.float32)
    if op == "cast":
        want, got = x.astype(np.float16), sw.cast(x, np.float16)
    elif op == "abs":
        z = make_numpy(shape, data.draw(layout_of(shape, True)), np.complex64)
        want, got = np.abs(z), sw.abs(z)
    else:
        want, got = np.less(x, 3), sw.less(x, 3)
    want, got = np.asarray(want), np.asarray(got)
    assert got.dtype == want.dtype and got.strides == want.strides
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_torch_channels_last_and_transposed(dtype):
    x = (torch.arange(2 * 8 * 5 * 6) % 11 + 1).to(dtype).reshape(2, 8, 5, 6)
    x = x.contiguous(memory_format=torch.channels_last)
    bias = (torch.arange(8) % 5 + 1).to(dtype).reshape(1, 8, 1, 1)
    for a, b in [(x, bias), (x, x), (bias, x), (x, 2)]:
        got = sw.remainder(a, b)
        assert got.is_contiguous(memory_format=torch.channels_last)
        assert got.stride() == torch.remainder(a, b).stride()
    m = (torch.arange(48) % 9 + 1).to(dtype).reshape(6, 8)
    got = sw.remainder(m.t(), m.t() + 1)
    assert got.stride() == (1, 8) == torch.remainder(m.t(), m.t() + 1).stride()


def _numpy_case(shape, strides, dtype="float64"):
    """An array of `shape` whose strides (elements) are `strides`, over a buffer of its own."""
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(shape, strides))
    base = np.arange(1, span + 1).astype(dtype)
    return np.lib.stride_tricks.as_strided(base, shape, [s * base.itemsize for s in strides])


@pytest.mark.parametrize("a, b", [
    # F-contiguous alike (extent-1 dims' strides ignored): NumPy's trivial loop, an F output
    (((1, 2, 1, 2), (4, 1, 4, 2)), ((1, 2, 1, 2), (4, 1, 4, 2))),
    (((3, 4), (1, 3)), ((3, 4), (1, 3))),
    # C and F operands: the iterator's order, C winning
    (((3, 4), (1, 3)), ((3, 4), (4, 1))),
    # an F operand with a 0-d and a 1-d operand of the same length (both trivial)
    (((4, 3), (1, 4)), ((), ())),
    # one operand both C and F contiguous (a single long dim), the other F only: the iterator
    (((1, 5), (5, 1)), ((1, 5), (1, 1))),
    # an empty result: NumPy 2 gives it zero strides
    (((2, 0, 3), (1, 2, 0)), ((2, 0, 3), (0, 3, 1))),
])
@pytest.mark.parametrize("second", ["float64", "float32"])
def test_numpy_trivial_loop_layouts(a, b, second):
    """numpy/_core/src/umath/ufunc_object.c's trivial loop (one output, same shapes, all C- or
    all F-contiguous, no N-d input cast) chooses the output's order before the iterator does;
    a cast N-d input (float32 into a float64 loop) sends NumPy to the iterator."""
    x, y = _numpy_case(*a), _numpy_case(*b, dtype=second)
    want = np.remainder(x, y)
    got = sw.remainder(x, y)
    assert got.strides == want.strides and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@SETTINGS
@given(operand_pair(negative=True), st.sampled_from(["float64", "int64", "float16"]))
def test_numpy_strides_match_order_k(case, dtype):
    """NumPy arrays: the output's strides equal np.remainder's (order='K'), negative steps
    included (the output has positive strides)."""
    shape, how, s2, how2 = case
    a, b = make_numpy(shape, how, dtype), make_numpy(s2, how2, dtype)
    want = np.remainder(a, b)
    got = sw.remainder(a, b)
    assert got.strides == want.strides, (a.shape, a.strides, b.shape, b.strides)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want, strict=True)


@SETTINGS
@given(operand_pair(negative=True), st.sampled_from("KCFAkcfa"), st.booleans(),
       st.sampled_from(["float64", "float32"]))
def test_numpy_order_keyword_matches_numpy(case, order, unary, second):
    """order= (NumPy's ufunc keyword): a new output's strides equal NumPy's for "C", "F", "A"
    (its trivial loop's order, else F where every input is F-contiguous) and "K", with NumPy's
    values; a second operand of another dtype is cast (no trivial loop)."""
    shape, how, s2, how2 = case
    a, b = make_numpy(shape, how, "float64"), make_numpy(s2, how2, second)
    want = np.negative(a, order=order) if unary else np.add(a, b, order=order)
    got = sw.negative(a, order=order) if unary else sw.add(a, b, order=order)
    assert got.strides == want.strides, (order, a.shape, a.strides, b.shape, b.strides)
    np.testing.assert_array_equal(got, want, strict=True)


@pytest.mark.parametrize("order", "CFAK")
def test_numpy_order_keyword_on_empty_and_extent_one_shapes(order):
    for x, y in ((np.ones((2, 0, 3)), 1.0), (np.ones((3, 1)), np.ones((1, 4))),
                 (np.ones((1, 5)), np.ones((5, 1)).T)):
        want, got = np.add(x, y, order=order), sw.add(x, y, order=order)
        assert got.strides == want.strides and got.shape == want.shape, (order, x.shape)


def test_numpy_order_a_counts_a_short_cast_input_as_its_copy():
    """order="A" where an input of another dtype is 0-d or 1-d and short: NumPy casts it into
    a contiguous copy before choosing a loop (check_for_trivial_loop), so a broadcast row of
    stride 0 counts as contiguous there, and as itself where no cast is needed."""
    row = np.broadcast_to(np.float32(2.5), (2,))            # stride 0
    cases = [
        (np.ones((1, 2)), row),                              # F and C; the copy is F: F
        (np.asfortranarray(np.ones((3, 2))), row),
        (np.asfortranarray(np.ones((3, 2))), row.astype(np.float64)),   # no cast: C
        (np.ones((1, 2)), row.astype(np.float64)),
        (np.ones((1, 2)), np.float32(2.5)[()]),              # 0-d: the trivial loop, C
        (np.ones((1, 2)), np.ones((1, 1), np.float32)),      # 2-d cast: the iterator, F
        (np.asfortranarray(np.ones((3, 2))), np.ones(2, np.float32)),
        (np.asfortranarray(np.ones((3, 9000))),              # longer than a buffer: a view
         np.broadcast_to(np.float32(1), (9000,))),
    ]
    for x, y in cases:
        want, got = np.add(x, y, order="A"), sw.add(x, y, order="A")
        assert got.strides == want.strides, (x.shape, x.strides, y.shape, y.strides, y.dtype)
        np.testing.assert_array_equal(got, want, strict=True)


def _unmergeable(shape, perm, offset):
    """A view of `shape`, its dims in memory order `perm`, that no merge shortens: every dim
    steps by 2."""
    inv = np.argsort(perm)
    buf = np.arange(offset, offset + 2 ** len(shape) * int(np.prod(shape)), dtype=np.float64)
    full = buf.reshape([2 * shape[j] for j in inv])[(slice(None, None, 2),) * len(shape)]
    view = full.transpose(perm)
    assert view.shape == tuple(shape)
    return view


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(9, 10), st.integers(0, 2**32 - 1))
def test_more_dims_than_a_kernel_holds_split_along_the_outermost(nd, seed):
    """Layouts of 9-10 dims that no merge brings to a kernel's 8 (numpy/_core/tests allow 64
    dims): built-in ops split the call along its outermost dim (pipeline._split_call). NumPy's
    and torch's values and output strides, with a broadcast operand of fewer dims, an out
    given, and in place."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(2, 4, nd))
    a = _unmergeable(shape, rng.permutation(nd), 1)
    b = _unmergeable(a.shape[1:], rng.permutation(nd - 1), 1)
    with pytest.raises(TooManyDims, match="split"):     # past one kernel: explain says so
        sw.explain(sw.remainder, a, b)
    got, want = sw.remainder(a, b), np.remainder(a, b)
    assert got.strides == want.strides
    np.testing.assert_array_equal(got, want, strict=True)
    out = np.zeros(a.shape)
    assert sw.multiply(a, b, out=out) is out
    np.testing.assert_array_equal(out, a * b, strict=True)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    got, want = sw.remainder(ta, tb), torch.remainder(ta, tb)
    assert got.stride() == want.stride() and torch.equal(got, want)
    x = a.copy()
    x_view = _unmergeable(x.shape, range(nd), 0)
    x_view[...] = x
    sw.remainder_(x_view, 3.0)
    np.testing.assert_array_equal(x_view, np.remainder(x, 3.0))


def test_numpy_fortran_order():
    a = np.asfortranarray(np.arange(1, 61, dtype=np.float32).reshape(6, 10))
    got = sw.remainder(a, np.asfortranarray(a % 7 + 1))
    assert got.flags.f_contiguous and got.strides == np.remainder(a, a % 7 + 1).strides
    got = sw.remainder(a, 3.0)
    assert got.flags.f_contiguous


def test_rule_is_pure_and_documented():
    """The pure rule (what torch.library fake implementations call) matches for 0-d and
    empty outputs, and CuPy's rule is C order."""
    assert _layout.output_strides("torch", (), ((( ), (), "float32"),), "float32") == ()
    assert _layout.output_strides("cupy", (3, 4), (((3, 4), (1, 3), "float32"),)) == (4, 1)
    # an empty output has no element whose place the strides fix (NumPy gives it strides of
    # its own making): shape and dtype only
    for shape in [(0, 3), (3, 0, 2), (2, 0)]:
        a = np.zeros(shape, np.float32).T
        got, want = sw.remainder(a, a), np.remainder(a, a)
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
        t = torch.zeros(shape).t() if len(shape) == 2 else torch.zeros(shape).permute(2, 1, 0)
        got, want = sw.remainder(t, t), torch.remainder(t, t)
        assert (got.shape, got.dtype) == (want.shape, want.dtype)


def test_explain_names_the_layout():
    x = torch.ones(2, 8, 5, 6).contiguous(memory_format=torch.channels_last)
    text = str(sw.explain("remainder", x, x))
    assert "output layout" in text
    assert str(x.stride()) in text and "TensorIterator" in text


@pytest.mark.parametrize("shape, view", [
    ((3, 5, 7, 9), lambda x: x),                    # rows of 9 over three outer dims
    ((2, 3, 20011), lambda x: x[:, ::-1, :]),       # rows split in parts (kChunk), a flipped dim
    ((4, 6, 5, 16), lambda x: x.transpose(1, 0, 2, 3)),
    ((7, 3, 2, 5), lambda x: x[:, :, :, 1:]),       # rows shorter than a pack
])
@pytest.mark.parametrize("dtype", ["uint8", "float64"])
def test_the_host_rows_loop_steps_from_row_to_row(shape, view, dtype):
    """cpu/loops.h rows_loop: each thread's first row part from its index (divisions), every
    later one by stepping the outer multi-index; against NumPy, with a row vector broadcast
    and an operand read in another order, so each operand's outer strides differ."""
    rng = np.random.default_rng(7)
    a = view(rng.integers(1, 100, shape).astype(dtype))
    b = rng.integers(1, 100, a.shape[-1]).astype(dtype)
    c = np.ascontiguousarray(rng.integers(1, 100, a.shape[::-1]).astype(dtype)).T
    for x, y in ((a, b), (a, c)):   # add: a cheap op's row tail (row_tail); remainder: not
        got = sw.add(x, y, algorithm=sw.Rows())
        assert sw.explain(sw.add, x, y, algorithm=sw.Rows()).mode == "rows"
        np.testing.assert_array_equal(got, x + y)
    np.testing.assert_array_equal(sw.remainder(a, c, algorithm=sw.Rows()), np.remainder(a, c))
