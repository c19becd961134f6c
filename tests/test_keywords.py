"""The keywords users port from NumPy and torch: where=, dtype=, casting=, order=, subok= and a
positional out (NumPy's ufuncs), alpha=
(torch.add, torch.sub) and rounding_mode= (torch.div). Oracles: NumPy's ufuncs with the same
keywords, torch's own ops on the CPU, and Python's integer arithmetic; bit for bit, dtypes
and (where an out is given) the untouched elements around it included. Sizes are multiples
of 64 where torch is the oracle: torch's CPU loops finish a tail element by element, in other
roundings (alpha in 16-bit arithmetic) than their vector body."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stridewise as sw
from stridewise.ops.builtins import TOLERANCE_ULP
from stridewise.ops.keywords import AlphaError
from oracle import NP, same_bits
from test_builtin_ops import ulp_diff

torch = pytest.importorskip("torch")

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
EVERY = INTS + FLOATS + ("bool",)
TORCH_INTS = ("int8", "int16", "int32", "int64", "uint8")   # torch's add and div stop there


def _values(rng, name, shape):
    dt = NP[name]
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64
                            if info.max < 2**63 else np.uint64).astype(dt)
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-2, 3, size=shape)
    return x.astype(dt)


def _t(x):
    return torch.from_numpy(x) if x.dtype != NP["bfloat16"] else \
        torch.from_numpy(x.view(np.uint16)).view(torch.bfloat16)


def _n(t):
    t = t.cpu()
    return t.view(torch.uint16).numpy().view(NP["bfloat16"]) if t.dtype == torch.bfloat16 \
        else t.numpy()


# -- where= -----------------------------------------------------------------------------------

def _numpy_where(fn, args, out, mask):
    """NumPy's answer; bfloat16 (whose ufuncs ml_dtypes registers) through float32, rounded
    once, ml_dtypes' own definition, so the oracle leans on no registration."""
    if out.dtype == NP["bfloat16"]:
        wide = np.asarray(out, dtype=np.float32)
        fn(*[a.astype(np.float32) for a in args], out=wide, where=mask)
        out[...] = np.where(mask, wide.astype(NP["bfloat16"]), out)
        return
    fn(*args, out=out, where=mask)


@pytest.mark.parametrize("name", EVERY)
def test_where_add_every_dtype_into_a_strided_out(name):
    """np.add(a, b, out=o, where=m): a broadcast mask, an out of every other column of a
    bigger buffer; the masked-off elements and the gaps keep their values."""
    rng = np.random.default_rng(1)
    a, b = _values(rng, name, (6, 9)), _values(rng, name, (9,))
    mask = rng.random(9) < 0.5
    buf = _values(rng, name, (6, 18))
    want = buf.copy()
    _numpy_where(np.add, (a, b), want[:, ::2], mask)
    got = sw.add(a, b, out=buf[:, ::2], where=mask)
    assert got is not None and same_bits(buf, want)


@pytest.mark.parametrize("fn, np_fn, name, second", [
    (sw.subtract, np.subtract, "int8", 7),               # a Python number
    (sw.floor_divide, np.floor_divide, "float16", None),
    (sw.remainder, np.remainder, "int32", None),
    (sw.less, np.less, "float32", None),                 # a bool result
    (sw.maximum, np.maximum, "float64", None),
    (sw.negative, np.negative, "int16", ()),             # unary
    (sw.sqrt, np.sqrt, "float32", ()),
    (sw.multiply, np.multiply, "uint64", None),
])
def test_where_other_ops_match_numpy(fn, np_fn, name, second):
    rng = np.random.default_rng(2)
    a = _values(rng, name, (4, 64))
    if name == "float32" and np_fn is np.sqrt:
        a = np.abs(a)
    args = (a,) if second == () else (a, second if second is not None else _values(rng, name, (4, 64)))
    if np_fn is np.floor_divide:
        args = (a, np.where(np.abs(args[1]) < 0.01, 3, args[1]).astype(a.dtype))
    if np_fn is np.remainder:
        args = (a, np.where(args[1] == 0, 3, args[1]).astype(a.dtype))
    mask = rng.random((4, 1)) < 0.5
    res = np.result_type(np_fn(*[x[:1] if isinstance(x, np.ndarray) else x for x in args]))
    out = np.full(a.shape, 5, dtype=res)
    want = out.copy()
    np_fn(*args, out=want, where=mask)
    fn(*args, out=out, where=mask)
    assert same_bits(out, want)


def test_where_param_upstream():
    """numpy/_core/tests/test_ufunc.py::TestUfunc::test_where_param: a mask from a comparison,
    an out that is also an input, a mask broadcast along rows."""
    a, b, c = np.arange(7), np.ones(7), np.zeros(7)
    sw.add(a, b, out=c, where=(a % 2 == 1))
    assert c.tolist() == [0, 2, 0, 4, 0, 6, 0]
    a = np.arange(4).reshape(2, 2) + 2
    sw.pow(a, np.array([2, 3]), out=a, where=[[0, 1], [1, 0]])
    assert a.tolist() == [[2, 27], [16, 5]]
    sw.subtract(a, 2, out=a, where=[True, False])
    assert a.tolist() == [[0, 27], [14, 5]]


def test_where_param_buffer_output_upstream():
    """numpy/_core/tests/test_ufunc.py::TestUfunc::test_where_param_buffer_output: an int64
    sum cast into a float64 out where a list mask holds."""
    a, b = np.ones(10, np.int64), np.ones(10, np.int64)
    c = 1.5 * np.ones(10, np.float64)
    sw.add(a, b, out=c, where=[1, 0, 0, 1, 0, 0, 1, 1, 1, 0])
    assert c.tolist() == [2, 1.5, 1.5, 2, 1.5, 1.5, 2, 2, 2, 1.5]


def test_where_param_alloc_upstream_and_zero_elsewhere():
    """numpy/_core/tests/test_ufunc.py::TestUfunc::test_where_param_alloc (sqrt of int64 and
    float64 with an allocated out); where the mask is False, stridewise gives 0 (NumPy leaves
    the memory uninitialized), in NumPy's result dtype."""
    m = np.array([True])
    for a in (np.array([1], np.int64), np.array([1.0])):
        got = sw.sqrt(a, where=m)
        assert got.dtype == np.float64 and got.tolist() == [1]
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    got = sw.add(a, np.int8(3), where=np.array([True, False, True]))
    assert got.dtype == np.add(a, np.int8(3)).dtype and got.tolist() == [[3, 0, 5], [6, 0, 8]]
    assert sw.add(a, 1, where=True).tolist() == (a + 1).tolist()
    assert sw.add(a, 1, where=False).tolist() == np.zeros_like(a).tolist()


def test_where_rounds_to_the_loop_dtype_before_out():
    """float16 + float16 into a float32 out: NumPy's loop runs in float16, then casts; the
    one kernel does the same (rounds to float16, then float32), where the mask holds."""
    rng = np.random.default_rng(3)
    a, b = _values(rng, "float16", 256), _values(rng, "float16", 256)
    mask = rng.random(256) < 0.7
    out, want = np.full(256, -1.0, np.float32), np.full(256, -1.0, np.float32)
    np.add(a, b, out=want, where=mask)
    sw.add(a, b, out=out, where=mask)
    assert same_bits(out, want)


def test_where_warm_calls_read_each_mask_and_out():
    """The second call runs warm (the same signature): it reads the new mask and out."""
    a, b = np.arange(8.0), np.ones(8)
    for seed in range(3):
        mask = np.random.default_rng(seed).random(8) < 0.5
        out, want = np.full(8, float(seed)), np.full(8, float(seed))
        np.add(a, b, out=want, where=mask)
        sw.add(a, b, out=out, where=mask)
        assert same_bits(out, want)


def test_where_input_overlapping_out_reads_the_old_values():
    """An input that overlaps out shifted (not the same view) is read before any write, as
    NumPy's buffering does."""
    buf = np.random.default_rng(12).standard_normal(10)
    ref = buf.copy()
    mask = np.array([True, False] * 4 + [True])
    np.add(ref[:-1], 1.0, out=ref[1:], where=mask)
    sw.add(buf[:-1], 1.0, out=buf[1:], where=mask)
    assert same_bits(buf, ref)


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 5), st.integers(1, 9), st.sampled_from([1, 2, -1]), st.integers(0, 2**32 - 1))
def test_where_hypothesis_shapes_and_strides(rows, cols, step, seed):
    rng = np.random.default_rng(seed)
    a = _values(rng, "float32", (rows, cols * 2))[:, ::2]
    b = _values(rng, "float32", (cols,))[::step] if step != 2 else _values(rng, "float32", (1, cols))
    mask = rng.random((rows, 1) if seed % 2 else (cols,)) < 0.5
    out = _values(rng, "float32", (cols, rows)).T          # transposed out
    want = out.copy()
    np.add(a, b, out=want, where=mask)
    sw.add(a, b, out=out, where=mask)
    assert same_bits(out, want)


def test_where_errors_name_the_fix_and_write_nothing():
    a, out = np.arange(4.0), np.full(4, 9.0)
    with pytest.raises(TypeError, match="bool mask"):
        sw.add(a, a, out=out, where=np.array([1, 0, 1, 0]))    # NumPy refuses too ('safe')
    with pytest.raises(TypeError, match="same_kind"):
        sw.add(a, a, out=np.zeros(4, np.int8), where=np.ones(4, bool))
    assert out.tolist() == [9.0] * 4
    with pytest.raises(TypeError, match="torch.where"):
        sw.add(torch.ones(3), torch.ones(3), where=torch.ones(3, dtype=torch.bool))


def test_explain_names_the_where_kernel():
    a = np.arange(4.0)
    e = sw.explain(sw.add, a, a, out=np.zeros(4), where=np.ones(4, bool))
    assert "add_where" in str(e) and "sw::MaskedInto<sw::AddFunctor<double>, double>" in e.source


# -- dtype= -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, np_fn, x, y, dtype", [
    (sw.add, np.add, "int32", "int32", "int8"),          # wraps in int8
    (sw.add, np.add, "int32", "int32", "float16"),       # int -> float16 rounds
    (sw.multiply, np.multiply, "float64", "float64", "float32"),   # inputs rounded first
    (sw.subtract, np.subtract, "uint8", 7, "int16"),
    (sw.divide, np.divide, "int16", "int16", "float32"),
    (sw.less, np.less, "int32", "float32", "bool"),
    (sw.negative, np.negative, "int8", None, "int64"),
    (sw.floor_divide, np.floor_divide, "int64", "int64", "float64"),
])
def test_dtype_matches_numpy(fn, np_fn, x, y, dtype):
    rng = np.random.default_rng(4)
    a = _values(rng, x, (3, 64))
    args = (a,) if y is None else (a, y if isinstance(y, int) else _values(rng, y, (64,)))
    if np_fn is np.floor_divide:
        args = (a, np.where(args[1] == 0, 5, args[1]))
    with np.errstate(all="ignore"):
        want = np_fn(*args, dtype=dtype)
    got = fn(*args, dtype=dtype)
    assert same_bits(got, want)
    if dtype in ("int8", "float32", "bool"):
        out = np.zeros((64, 3), want.dtype).T               # a strided out
        fn(*args, dtype=np.dtype(dtype), out=out)
        assert same_bits(out, want)


def test_dtype_casts_numpy_refuses_raise_numpys_error():
    a, f = np.arange(4, dtype=np.int32), np.ones(4)
    for args, dtype in (((f, a), np.int32), ((a, a), np.uint8), ((a, a), bool), ((a, 1.5), np.int32)):
        with pytest.raises(TypeError) as info:
            np.add(*args, dtype=dtype)
        with pytest.raises(type(info.value), match="same_kind"):
            sw.add(*args, dtype=dtype)
    with pytest.raises(TypeError, match="No loop"):
        sw.less(a, a, dtype=np.float32)
    with pytest.raises(TypeError, match="NumPy's and CuPy's"):
        sw.add(torch.ones(2), torch.ones(2), dtype=torch.float64)


def test_dtype_and_where_together():
    rng = np.random.default_rng(5)
    a, b = _values(rng, "float64", 128), _values(rng, "float64", 128)
    mask = rng.random(128) < 0.5
    out, want = np.zeros(128, np.float32), np.zeros(128, np.float32)
    np.multiply(a, b, out=want, where=mask, dtype=np.float32)
    sw.multiply(a, b, out=out, where=mask, dtype=np.float32)
    assert same_bits(out, want)


# -- alpha= -----------------------------------------------------------------------------------

def _alphas(name):
    if name == "bool":
        return (True, False)
    return (2, -3, 0) + ((0.3, -2.5, 1 / 3) if name in FLOATS else ())


@pytest.mark.parametrize("name", TORCH_INTS + FLOATS + ("bool",))
def test_alpha_matches_torch_every_dtype(name):
    """torch.add(x1, x2, alpha=) on the CPU, bit for bit: a broadcast x2; a Python number x2,
    torch.sub and a transposed out= for one dtype of each kind (the same functor)."""
    rng = np.random.default_rng(6)
    a, b = _t(_values(rng, name, (64, 64))), _t(_values(rng, name, (64,)))
    num = 3 if name != "bool" else True
    for alpha in _alphas(name):
        want = torch.add(a, b, alpha=alpha)
        got = sw.add(a, b, alpha=alpha)
        assert got.dtype == want.dtype and same_bits(_n(got), _n(want)), alpha
        if name not in ("int8", "uint8", "float16", "bfloat16", "float32", "bool"):
            continue
        assert same_bits(_n(sw.add(a, num, alpha=alpha)), _n(torch.add(a, num, alpha=alpha)))
        if name != "bool":
            assert same_bits(_n(sw.subtract(a, b, alpha=alpha)), _n(torch.sub(a, b, alpha=alpha)))
        if name in ("float16", "int8"):
            out = torch.empty(64, 64, dtype=want.dtype).T
            sw.add(a, b, alpha=alpha, out=out)
            assert same_bits(_n(out), _n(want))


def test_add_upstream_alpha_cases():
    """test/test_binary_ufuncs.py::TestBinaryUfuncs::test_add: bool tensors with alpha=0,
    complex64 with a float, complex and integer alpha, and the refused alphas."""
    a = torch.zeros(2, 3, dtype=torch.bool)
    assert torch.equal(sw.add(a, a, alpha=0), torch.zeros(2, 3).bool())
    m1 = torch.tensor([2 + 3j, 4 + 5j], dtype=torch.complex64)
    m2 = torch.tensor([4 + 5j, 2 + 3j], dtype=torch.complex64)
    for alpha, want in ((0.1, [2.4 + 3.5j, 4.2 + 5.3j]), (complex(0.1, 0.2), [1.4 + 4.3j, 3.6 + 5.7j]),
                        (2, [10 + 13j, 8 + 11j])):
        got = sw.add(m1, m2, alpha=alpha)
        torch.testing.assert_close(got, torch.tensor(want, dtype=torch.complex64))
        assert torch.equal(got, torch.add(m1, m2, alpha=alpha))
    i1, i2 = torch.tensor([1], dtype=torch.int8), torch.tensor([2], dtype=torch.int8)
    with pytest.raises(RuntimeError, match=r"Boolean alpha only supported for Boolean results\."):
        sw.add(i1, i2, alpha=True)
    with pytest.raises(RuntimeError, match=r"For integral input tensors, argument alpha must not be"):
        sw.add(i1, i2, alpha=1.0)
    msg = r"For non-complex input tensors, argument alpha must not be a complex number\."
    for dt in (torch.float32, torch.float64):
        f1, f2 = torch.tensor([3.0, 4.0], dtype=dt), torch.tensor([4.0, 3.0], dtype=dt)
        with pytest.raises(RuntimeError, match=msg):
            sw.add(f1, f2, alpha=complex(0.1, 0.2))


def test_alpha_range_is_torchs():
    """torch converts alpha to the dtype with a range check; an unsigned dtype also takes
    down to -max, which wraps (sub of uint8 is add with 256 - alpha)."""
    i8, u8 = torch.tensor([5, -7], dtype=torch.int8), torch.tensor([3, 200], dtype=torch.uint8)
    with pytest.raises(AlphaError, match="without overflow"):
        sw.add(i8, i8, alpha=300)
    with pytest.raises(RuntimeError):
        torch.add(i8, i8, alpha=300)
    for alpha in (-2, -255, 255):
        assert torch.equal(sw.add(u8, u8, alpha=alpha), torch.add(u8, u8, alpha=alpha))
        assert torch.equal(sw.subtract(u8, u8, alpha=alpha), torch.sub(u8, u8, alpha=alpha))
    with pytest.raises(AlphaError):
        sw.add(u8, u8, alpha=-256)


@pytest.mark.parametrize("name", ("int8", "uint16", "uint64", "float32"))
def test_alpha_on_numpy_arrays_is_torchs_formula(name):
    """NumPy arrays take alpha= too, with torch's meaning: integers wrap (Python's integers
    modulo 2^bits are the oracle), floats are one fused multiply-add (float64's exact product
    and sum, rounded once to float32: the oracle)."""
    rng = np.random.default_rng(7)
    a, b = _values(rng, name, 128), _values(rng, name, 128)
    got = sw.add(a, b, alpha=3)
    assert got.dtype == a.dtype
    if name != "float32":
        bits = 8 * a.itemsize
        want = [(int(x) + 3 * int(y)) % 2**bits for x, y in zip(a, b)]
        assert [int(g) % 2**bits for g in got.tolist()] == want
    else:
        exact = a.astype(np.float64) + 3.0 * b.astype(np.float64)
        assert same_bits(got, exact.astype(np.float32))


# -- rounding_mode= ---------------------------------------------------------------------------

def _divisors(x):
    return torch.where(x == 0, torch.ones((), dtype=x.dtype), x)


@pytest.mark.parametrize("name", TORCH_INTS + FLOATS)
def test_rounding_modes_match_torch_every_dtype(name):
    """torch.div(a, b, rounding_mode=) on the CPU, bit for bit: tensors, a one-element
    divisor, Python numbers, and the result dtype (integers stay integers)."""
    rng = np.random.default_rng(8)
    a, b = _t(_values(rng, name, 4096)), _divisors(_t(_values(rng, name, 4096)))
    # one kernel per kind of divisor: the 16-bit floats' forms differ by kind (keywords.py)
    numbers = (0.1, -2.7, 1 / 3) if name in FLOATS else (3, -7)
    cases = [("trunc", d) for d in (b, *numbers)] + [("floor", b)]
    if name in ("float16", "bfloat16"):
        cases += [("trunc", b[:1])]   # floor's 16-bit forms: test_builtin_ops, test_bf16_ops
    for mode, d in cases:
        if name == "uint8" and isinstance(d, int) and d < 0:
            continue
        want = torch.div(a, d, rounding_mode=mode)
        got = sw.divide(a, d, rounding_mode=mode)
        assert got.dtype == want.dtype and same_bits(_n(got), _n(want)), (mode, d)
    assert same_bits(_n(sw.divide(a, b, rounding_mode=None)), _n(torch.div(a, b)))


@pytest.mark.parametrize("name", ("int8", "uint8"))
def test_trunc_division_every_8bit_pair(name):
    """All 65536 pairs against Python's integers: the quotient toward zero; x / 0 gives 0
    (torch raises ZeroDivisionError on the CPU) and -128 / -1 wraps to -128."""
    info = np.iinfo(name)
    v = np.arange(info.min, info.max + 1)
    a, b = np.repeat(v, v.size).astype(name), np.tile(v, v.size).astype(name)
    got = sw.divide(a, b, rounding_mode="trunc")
    assert got.dtype == np.dtype(name)
    q = [0 if y == 0 else (abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1)
         for x, y in zip(a.astype(int).tolist(), b.astype(int).tolist())]
    want = ((np.array(q) - info.min) % 2**8 + info.min).astype(name)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name", ("float16", "float32", "float64"))
def test_trunc_division_of_numpy_arrays_is_trunc_of_divide(name):
    """NumPy has no trunc division: its users write np.trunc(a / b), which rounds the
    quotient to the dtype first; special values included."""
    from oracle import grid
    a, b = grid(name)
    with np.errstate(all="ignore"):
        want = np.trunc(np.divide(a, b))
    assert same_bits(sw.divide(a, b, rounding_mode="trunc"), want)


@pytest.mark.parametrize("name", TORCH_INTS + FLOATS)
def test_div_rounding_modes_upstream(name):
    """test/test_binary_ufuncs.py::TestBinaryUfuncs::test_div_rounding_modes: a / b in true
    division times b is a; floor(a / b) * b + remainder(a, b) is a; trunc mode is
    trunc(a / b) (16-bit: of float32's quotient, where torch says rounding is unsupported)."""
    dt = getattr(torch, name)
    g = torch.Generator().manual_seed(9)
    if dt.is_floating_point:
        a, b = (torch.rand(100, generator=g, dtype=torch.float64) * 20 - 10 for _ in range(2))
        a, b = a.to(dt), b.to(dt)
        b[(-0.1 < b) & (b < 0.1)] = 0.1
    else:
        info = torch.iinfo(dt)
        a, b = (torch.randint(info.min, info.max, (100,), generator=g, dtype=torch.int64).to(dt)
                for _ in range(2))
        b[b == 0] = 1
        a = torch.where(a < 0, a + b, a)
    d_true = sw.divide(a, b)
    assert d_true.is_floating_point()
    torch.testing.assert_close(d_true * b, a.to(d_true.dtype))
    d_floor = sw.divide(a, b, rounding_mode="floor")
    if dt in (torch.float16, torch.bfloat16):
        torch.testing.assert_close(d_floor * b + torch.remainder(a.float(), b.float()), a,
                                   check_dtype=False)
    else:
        torch.testing.assert_close(d_floor * b + torch.remainder(a, b), a)
    d_trunc = sw.divide(a, b, rounding_mode="trunc")
    ref = d_true.float() if dt == torch.float16 else d_true
    torch.testing.assert_close(d_trunc, ref.trunc().to(dt))


def test_rounding_mode_errors():
    a = torch.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="one of None, 'trunc', or 'floor' but found 'round'"):
        sw.divide(a, a, rounding_mode="round")
    for mode in ("trunc", "floor"):    # torch raises NotImplementedError for bool too
        with pytest.raises(TypeError):
            sw.divide(torch.ones(2, dtype=torch.bool), torch.ones(2, dtype=torch.bool), rounding_mode=mode)
    i = torch.tensor([7, -7], dtype=torch.int32)
    assert sw.divide(i, torch.zeros(2, dtype=torch.int32), rounding_mode="trunc").tolist() == [0, 0]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):     # torch's CPU, documented
        torch.div(i, torch.zeros(2, dtype=torch.int32), rounding_mode="trunc")


# -- the generated functions and torch.compile ------------------------------------------------

def test_signatures_take_the_rows_keywords():
    import inspect
    from stridewise.ops.builtins import ROWS
    ufunc_keywords = ("where", "dtype", "casting", "order", "subok")
    for name, row in ROWS.items():
        params = inspect.signature(getattr(sw, name)).parameters
        for k in ufunc_keywords + ("alpha", "rounding_mode"):
            assert (k in params) == (k in row.takes), (name, k)
        # out positional where the op is a NumPy ufunc, as the ufunc's is
        assert params["out"].kind == (inspect.Parameter.POSITIONAL_OR_KEYWORD if row.ufunc
                                      else inspect.Parameter.KEYWORD_ONLY), name
    assert ROWS["add"].takes == ufunc_keywords + ("alpha",)
    assert ROWS["divide"].takes == ufunc_keywords + ("rounding_mode",)
    assert ROWS["clip"].takes == ("casting",)      # np.clip passes casting= to its loop
    with pytest.raises(TypeError, match="unexpected keyword"):
        sw.clip(np.ones(2), 0, 1, where=np.ones(2, bool))
    with pytest.raises(TypeError):
        sw.where(np.ones(2, bool), 1.0, 2.0, np.ones(2))   # np.where takes no out


# -- NumPy's other ufunc keywords: casting=, order=, subok=, and out given positionally -------

CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


@pytest.mark.parametrize("casting", CASTINGS)
def test_casting_matches_numpy(casting):
    """casting= decides as NumPy's ufuncs do (np.can_cast's rules for the inputs' casts into
    the loop and the result's into out): a TypeError exactly where NumPy raises its
    UFuncTypeError, with out untouched; otherwise NumPy's values and dtype, bit for bit, in
    the out given. Small positive values, so every cast "unsafe" allows is defined."""
    rng = np.random.default_rng(30)
    for x1, x2, into in itertools.product(("int8", "uint8", "float16", "float64"),
                                          ("int32", "float32"), (None, "int16", "float32", "bool")):
        a = rng.integers(0, 6, (4, 8)).astype(NP[x1])
        b = rng.integers(1, 6, 8).astype(NP[x2])
        for fn, np_fn in ((sw.add, np.add), (sw.divide, np.divide)):
            mine, theirs = ((None, None) if into is None
                            else (np.zeros((4, 8), NP[into]), np.zeros((4, 8), NP[into])))
            try:
                want = np_fn(a, b, out=theirs, casting=casting)
            except TypeError:
                with pytest.raises(TypeError):
                    fn(a, b, out=mine, casting=casting)
                assert mine is None or not mine.any(), (x1, x2, into, fn)
                continue
            got = fn(a, b, out=mine, casting=casting)
            assert got.dtype == want.dtype and same_bits(got, want), (x1, x2, into, fn, casting)
            assert into is None or got is mine


def test_casting_with_dtype_and_where():
    """casting= with dtype= (the loop NumPy picks for both) and with where=."""
    a = np.arange(1.0, 13.0).reshape(3, 4) / 4
    b = np.full(4, 2.5)
    for kw in ({"dtype": np.int16, "casting": "unsafe"}, {"dtype": np.float32, "casting": "same_kind"},
               {"dtype": np.float32, "casting": "safe"}, {"dtype": np.float64, "casting": "no"}):
        try:
            want = np.multiply(a, b, **kw)
        except TypeError:
            with pytest.raises(TypeError):
                sw.multiply(a, b, **kw)
            continue
        got = sw.multiply(a, b, **kw)
        assert got.dtype == want.dtype and same_bits(got, want), kw
    mask = np.array([True, False, True, True])
    want, got = np.full((3, 4), 7, np.int32), np.full((3, 4), 7, np.int32)
    np.add(a, b, out=want, where=mask, casting="unsafe")
    sw.add(a, b, out=got, where=mask, casting="unsafe")
    assert same_bits(got, want)
    with pytest.raises(TypeError):
        sw.add(a, b, out=got, where=mask, casting="safe")


def test_safe_casting_upstream():
    """numpy/_core/tests/test_ufunc.py::TestUfunc::test_safe_casting: out of place an int
    array plus 1.1 is float; into the int array itself "same_kind" refuses; "unsafe"
    truncates into it."""
    a = np.array([1, 2, 3], dtype=np.int64)
    np.testing.assert_array_equal(sw.add(a, 1.1), [2.1, 3.1, 4.1])
    with pytest.raises(TypeError):
        sw.add(a, 1.1, out=a)
    np.testing.assert_array_equal(a, [1, 2, 3])
    sw.add(a, 1.1, out=a, casting="unsafe")
    np.testing.assert_array_equal(a, [2, 3, 4])


def test_keyword_values_numpy_refuses():
    a = np.ones(3)
    for kw, err in (({"casting": "bad"}, ValueError), ({"casting": 1}, TypeError),
                    ({"order": "X"}, ValueError), ({"order": 1}, TypeError)):
        with pytest.raises(err):
            np.add(a, a, **kw)
        with pytest.raises(err, match=next(iter(kw))):
            sw.add(a, a, **kw)


def test_out_positional_upstream():
    """numpy/_core/tests/test_umath.py::TestOut::test_out_subok: out given positionally, by
    keyword and as a 1-tuple, for either subok, returns the out array itself (0-d too); out
    twice is a TypeError."""
    for subok in (True, False):
        a, o = np.array(0.5), np.empty(())
        assert sw.add(a, 2, o, subok=subok) is o and o[()] == 2.5
        assert sw.add(a, 2, out=o, subok=subok) is o
        assert sw.add(a, 2, out=(o,), subok=subok) is o
    with pytest.raises(TypeError):
        sw.add(a, 2, o, out=o)
    with pytest.raises(TypeError):
        sw.add(a, 2, o, o)
    x, out = np.arange(6.0).reshape(2, 3), np.zeros((2, 3))
    # exp of doubles is within TOLERANCE_ULP of NumPy's (cpu/vmath.h), the same bits as allocated
    assert sw.exp(x, out) is out and same_bits(out, sw.exp(x))
    assert ulp_diff(out, np.exp(x)) <= TOLERANCE_ULP["exp"]["float64"]
    assert sw.remainder(x, 4.0, out) is out and same_bits(out, np.remainder(x, 4.0))


def test_subok_false_returns_a_base_ndarray():
    """subok=False: NumPy's base-class result for ndarray subclasses; the default keeps the
    subclass (its __array_wrap__)."""
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    for subok in (True, False):
        want, got = np.add(m, 1.5, subok=subok), sw.add(m, 1.5, subok=subok)
        assert type(got) is type(want) and same_bits(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("fn, np_fn", [(sw.add, np.add), (sw.remainder, np.remainder),
                                        (sw.less, np.less), (sw.maximum, np.maximum)])
def test_outer_matches_numpys_ufunc_outer(fn, np_fn):
    """`sw.<op>.outer` against NumPy's ufunc.outer: shapes, dtype, strides and values, for
    arrays of any layout, lists, numbers and NumPy scalars, with out (positional too) and
    dtype=; torch's own outer product for tensors."""
    rng = np.random.default_rng(32)
    a = rng.integers(1, 50, (2, 3)).astype(np.float64)
    b = rng.integers(1, 9, 4).astype(np.float32)
    for x, y in ((a, b), (a.T, b), (a[:, ::2], b[::-1]), (2, b), ([1, 2], [3, 4, 5]),
                 (a, 3.0), (np.float32(2.5), b), (b, a)):
        got, want = fn.outer(x, y), np_fn.outer(x, y)
        assert type(got) is type(want) and np.shape(got) == np.shape(want)
        assert got.dtype == want.dtype and getattr(got, "strides", 0) == getattr(want, "strides", 0)
        assert same_bits(np.asarray(got), np.asarray(want))
    out = np.zeros(a.shape + b.shape, np_fn.outer(a, b).dtype)
    assert fn.outer(a, b, out) is out and same_bits(out, np_fn.outer(a, b))
    if np_fn is not np.less:
        assert fn.outer(a, b, dtype=np.float32).dtype == np_fn.outer(a, b, dtype=np.float32).dtype
    if fn is sw.add:
        ta, tb = torch.from_numpy(a[0]), torch.from_numpy(b.astype(np.float64))
        assert torch.equal(sw.multiply.outer(ta, tb), torch.outer(ta, tb))


def test_numpy_keywords_refused_for_torch_and_named():
    t = torch.ones(4)
    for kw in ({"casting": "unsafe"}, {"order": "F"}, {"subok": False}):
        with pytest.raises(TypeError, match=f"{next(iter(kw))}= is NumPy"):
            sw.add(t, t, **kw)


def test_compile_fullgraph_traces_alpha_and_rounding_mode():
    """One graph, no break: alpha= and rounding_mode= become their derived ops' custom ops;
    results bit for bit the eager ones and torch's."""
    def f(a, b):
        return (sw.add(a, b, alpha=2.5), sw.subtract(a, 1.5, alpha=3),
                sw.divide(a, b, rounding_mode="trunc"), sw.divide(a, 0.7, rounding_mode="floor"))

    a = torch.rand(4, 64, dtype=torch.float32) * 10 - 5
    b = torch.rand(64, dtype=torch.float32) + 0.5
    torch._dynamo.reset()
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(a, b)
    want = (torch.add(a, b, alpha=2.5), torch.sub(a, 1.5, alpha=3),
            torch.div(a, b, rounding_mode="trunc"), torch.div(a, 0.7, rounding_mode="floor"))
    for g, e, w in zip(got, f(a, b), want, strict=True):
        assert g.dtype == w.dtype and torch.equal(g, e) and torch.equal(g, w)


# -- CUDA ---------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("name", ("int8", "int32", "int64", "uint8", "float16", "bfloat16",
                                  "float32", "float64"))
def test_keywords_cuda_match_torch(name):
    """On the device: torch.div(rounding_mode=) and torch.add(alpha=) of CUDA tensors, bit for
    bit, tensors, a CPU scalar and Python numbers; where= of CuPy arrays against NumPy's."""
    rng = np.random.default_rng(10)
    a = _t(_values(rng, name, (64, 1024))).cuda()
    b = _divisors(_t(_values(rng, name, (1024,)))).cuda()
    numbers = (3, -7) + ((0.1, -2.7, 1 / 3) if name in FLOATS else ())
    for mode in ("trunc", "floor"):
        for d in (b, b[:1], *numbers):
            if name == "uint8" and isinstance(d, int) and d < 0:
                continue
            want, got = torch.div(a, d, rounding_mode=mode), sw.divide(a, d, rounding_mode=mode)
            assert got.dtype == want.dtype and same_bits(_n(got), _n(want)), (mode, d)
    for alpha in (2, -3) + ((0.3, 1 / 3) if name in FLOATS else ()):
        for d in (b, 3):
            want, got = torch.add(a, d, alpha=alpha), sw.add(a, d, alpha=alpha)
            assert got.dtype == want.dtype and same_bits(_n(got), _n(want)), (alpha, d)


@pytest.mark.gpu
def test_where_cupy_matches_numpy():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(11)
    a, b = _values(rng, "float32", (64, 256)), _values(rng, "float32", (256,))
    mask = rng.random(256) < 0.5
    want = np.full((64, 256), 3.0, np.float32)
    np.add(a, b, out=want, where=mask)
    out = cp.full((64, 256), 3.0, cp.float32)
    sw.add(cp.asarray(a), cp.asarray(b), out=out, where=cp.asarray(mask))
    assert same_bits(cp.asnumpy(out), want)
    got = sw.add(cp.asarray(a), cp.asarray(b), where=[True, False] * 128)
    assert same_bits(cp.asnumpy(got)[:, 1::2], np.zeros((64, 128), np.float32))


@pytest.mark.gpu
@pytest.mark.parametrize("casting", CASTINGS)
def test_casting_cupy_matches_cupy(casting):
    """CuPy arrays: casting= and a positional out as CuPy's own ufuncs take them (a TypeError
    where CuPy raises, CuPy's values otherwise); order= and subok=, which CuPy's ufuncs
    refuse, raise TypeError."""
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(31)
    for x1, into in itertools.product(("int8", "float16", "float64"), (None, "int16", "float32")):
        a = cp.asarray(rng.integers(0, 6, (4, 64)).astype(NP[x1]))
        b = cp.asarray(rng.integers(1, 6, 64).astype(np.float32))
        mine, theirs = ((None, None) if into is None
                        else (cp.zeros((4, 64), NP[into]), cp.zeros((4, 64), NP[into])))
        try:
            want = cp.add(a, b, theirs, casting=casting)
        except TypeError:
            with pytest.raises(TypeError):
                sw.add(a, b, mine, casting=casting)
            assert mine is None or not bool(mine.any())
            continue
        got = sw.add(a, b, mine, casting=casting)
        assert got.dtype == want.dtype and same_bits(cp.asnumpy(got), cp.asnumpy(want))
    for kw in ({"order": "F"}, {"subok": False}):
        with pytest.raises(TypeError):
            cp.add(a, b, **kw)
        with pytest.raises(TypeError, match=next(iter(kw))):
            sw.add(a, b, **kw)


@pytest.mark.nvrtc
def test_keyword_kernels_compile_for_the_device(monkeypatch):
    """NVRTC compiles every keyword's kernel for sm_90 (no GPU needed): where= over each
    dtype class, alpha= (bool, integers, 16-bit, complex), trunc division in every form torch's
    CUDA calls pick (keywords.py _TruncDivide.torch_numbers)."""
    pytest.importorskip("cuda.core", reason="needs the cuda extra (cuda.core + NVRTC wheels)")
    import dataclasses
    from nvrtc_batch import compile_batched
    from stridewise.launch import pipeline as _ops
    from stridewise.ops import keywords as _keywords
    from stridewise.ops.builtins import OPS

    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    specs = []

    def add(op, args, out=None, **kw):
        kop, kargs, kout = _keywords.resolve(OPS[op], args, out, kw)
        specs.append(_ops._call(kop, kargs, kout, dry=True).spec)

    for name in ("int8", "uint64", "bool", "float16", "bfloat16", "float64", "complex64"):
        a = np.ones((8, 64), NP[name])
        add("add", (a, a), np.zeros_like(a), where=np.ones(64, bool))
        add("add", (a, a), alpha=True if name == "bool" else 2)
    for name in ("int8", "uint16", "int64", "float16", "bfloat16", "float32", "float64"):
        a = np.ones((8, 64), NP[name])
        add("divide", (a, a), rounding_mode="trunc")
    add("multiply", (np.ones(64), np.ones(64)), np.zeros(64, np.float32), where=np.ones(64, bool),
        dtype=np.float32)
    t16 = [s for s in specs if s.op == "divide_trunc" and s.compute.name in ("float16", "bfloat16")]
    specs += [dataclasses.replace(s, functor=f) for s in t16
              for f in ("sw::TruncDivideByNumberFunctor<float>", "sw::TruncDivideFunctor<float>")]
    assert compile_batched(specs, chunks=1) == len(specs) == 14 + 7 + 1 + 4


def test_keywords_autograd_matches_torch():
    """alpha= and rounding_mode= under autograd: torch's gradients (alpha times the
    gradient for x2; zero through a rounded quotient), a complex alpha included."""
    x = torch.tensor([1.5, -2.0, 3.25], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([0.5, 4.0, -1.0], dtype=torch.float64, requires_grad=True)
    g = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    cases = ((lambda f, a, b: f(a, b, alpha=2.5), sw.add, torch.add),
             (lambda f, a, b: f(a, b, alpha=-3), sw.subtract, torch.sub),
             (lambda f, a, b: f(a, b, rounding_mode="trunc"), sw.divide, torch.div),
             (lambda f, a, b: f(a, b, rounding_mode="floor"), sw.divide, torch.div))
    for call, mine, theirs in cases:
        got = torch.autograd.grad(call(mine, x, y), (x, y), g)
        want = torch.autograd.grad(call(theirs, x, y), (x, y), g)
        assert all(torch.equal(a, b) for a, b in zip(got, want))
    # floor_divide itself has no derivative in torch, and none here
    for f in (sw.floor_divide, torch.floor_divide):
        with pytest.raises(RuntimeError, match="derivative for .*floor_divide.* is not implemented"):
            f(x, y).sum().backward()
    # a complex alpha is a schema Scalar too: torch's values and gradients
    xc, yc = (t.detach().to(torch.complex128).requires_grad_() for t in (x, y))
    gc = g.to(torch.complex128)
    got = sw.add(xc, yc, alpha=1 - 2j)
    want = torch.add(xc, yc, alpha=1 - 2j)
    assert torch.equal(got.detach(), want.detach())
    assert all(torch.equal(a, b) for a, b in zip(torch.autograd.grad(got, (xc, yc), gc),
                                                  torch.autograd.grad(want, (xc, yc), gc)))
