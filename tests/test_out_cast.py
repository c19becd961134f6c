"""An `out=` of another dtype than the op's result: cast into it by the owning library's rule.

NumPy's ufuncs cast their result into `out` under casting="same_kind" and torch's out= under
torch.can_cast; both compute in the result's dtype first. Each case runs the library's own op
with the same out and compares values, dtype and strides bit for bit; refused casts raise and
leave the out as it was.
"""
import numpy as np
import pytest
import torch

import stridewise as sw

# (op, input dtypes, out dtype): widening, narrowing within a kind, integer to float, bool to
# a number, complex to a narrower complex, and rounding of a 16-bit result before the out
CASTS = [
    ("add", ("int8", "int8"), "int16"),           # wraps in int8 first
    ("add", ("float16", "float16"), "float32"),   # rounded to float16 first
    ("add", ("float64", "float64"), "float16"),   # one rounding, float64 to float16
    ("multiply", ("int64", "int64"), "int8"),
    ("remainder", ("float64", "float64"), "float32"),
    ("remainder", ("int32", "int32"), "float64"),
    ("floor_divide", ("int16", "int16"), "int8"),
    ("less", ("float32", "float32"), "int32"),
    ("sqrt", ("float32",), "float64"),
    ("subtract", ("complex128", "complex128"), "complex64"),
]
REFUSED = [
    ("add", ("float32", "float32"), "int32"),          # float to integer
    ("sqrt", ("complex64",), "float32"),               # complex to real
    ("add", ("int16", "int16"), "bool"),               # a number to bool
]


def _data(dtype: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -120), min(info.max, 120)
        x = rng.integers(lo, hi + 1, n).astype(dtype)
        return np.where(x == 0, 1, x).astype(dtype)    # no zero divisors for floor_divide
    x = rng.standard_normal(n) * 50
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(n) * 50
    return np.abs(x).astype(dtype) if dtype != "float16" else (x / 10).astype(dtype)


def _inputs(dtypes, n=37):
    return [_data(dt, n, seed) for seed, dt in enumerate(dtypes)]


@pytest.mark.parametrize("op,ins,out", CASTS)
def test_numpy_out_of_another_dtype_is_the_ufuncs_same_kind_cast(op, ins, out):
    xs = _inputs(ins)
    want = np.zeros((37, 2), out)[:, 1]    # a strided out
    getattr(np, op)(*xs, out=want)
    got = np.zeros((37, 2), out)[:, 1]
    r = getattr(sw, op)(*xs, out=got)
    assert r is got
    assert got.dtype == want.dtype and got.strides == want.strides
    assert got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("op,ins,out", [c for c in CASTS if c[0] != "subtract"] +
                         [("sub", ("complex128", "complex128"), "complex64")])
def test_torch_out_of_another_dtype_is_torchs_out_cast(op, ins, out):
    xs = [torch.from_numpy(x) for x in _inputs(ins)]
    tname = {"floor_divide": "floor_divide", "less": "lt", "sub": "sub"}.get(op, op)
    want = torch.zeros(37, dtype=getattr(torch, out))
    getattr(torch, tname)(*xs, out=want)
    got = torch.zeros(37, dtype=getattr(torch, out))
    getattr(sw, "subtract" if op == "sub" else op)(*xs, out=got)
    assert got.dtype == want.dtype
    if out == "float16" and ins[0] == "float64":
        # torch rounds float64 to float16 through float32 (README: cast); stridewise once.
        # They agree except on a tie of the float32 rounding: compare with NumPy's one rounding.
        np.testing.assert_array_equal(got.numpy(), (xs[0].numpy() + xs[1].numpy()).astype(np.float16))
    elif op == "sqrt":
        # computed in float32 first, as torch does; torch's float32 sqrt is Sleef's on AVX-512
        # CPUs, within 1 ulp of the correctly rounded one (test_builtin_ops TORCH_DEPARTURES)
        g, w = got.numpy().astype(np.float32), want.numpy().astype(np.float32)
        assert np.array_equal(g.astype(np.float64), got.numpy())
        assert np.abs(g.view(np.int32).astype(np.int64) - w.view(np.int32)).max() <= 1
    else:
        assert torch.equal(got, want), (got, want)


@pytest.mark.parametrize("op,ins,out", REFUSED)
@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_a_cast_the_library_refuses_raises_and_writes_nothing(op, ins, out, lib):
    xs = _inputs(ins)
    o = np.full(37, 7, out)
    before = o.copy()
    if lib == "torch":
        xs, o = [torch.from_numpy(x) for x in xs], torch.from_numpy(o)
        with pytest.raises(RuntimeError):     # torch's own refusal, for the same arguments
            getattr(torch, op)(*xs, out=o.clone())
    else:
        with pytest.raises(TypeError):        # NumPy's _UFuncOutputCastingError is one
            getattr(np, op)(*xs, out=o.copy())
    with pytest.raises(TypeError, match=f"pass an out of dtype"):
        getattr(sw, op)(*xs, out=o)
    assert np.asarray(o).tobytes() == before.tobytes()


def test_signed_into_unsigned_follows_each_librarys_rule():
    """NumPy's same_kind refuses int16 into uint8 (another kind); torch casts it (wrapping)."""
    xs = _inputs(("int16", "int16"))
    with pytest.raises(TypeError):
        np.floor_divide(*xs, out=np.zeros(37, np.uint8))
    o = np.full(37, 7, np.uint8)
    with pytest.raises(TypeError, match="same_kind"):
        sw.floor_divide(*xs, out=o)
    assert (o == 7).all()
    ts = [torch.from_numpy(x) for x in xs]
    want, got = torch.zeros(37, dtype=torch.uint8), torch.zeros(37, dtype=torch.uint8)
    torch.floor_divide(*ts, out=want)
    sw.floor_divide(*ts, out=got)
    assert torch.equal(got, want)


def test_in_place_casts_as_the_library_does():
    """`remainder_` writes x1: NumPy's np.remainder(x, y, out=x), torch's x.remainder_(y)."""
    a = np.arange(1, 20, dtype=np.float32) * 1.37
    b = np.linspace(0.3, 4, 19)                      # float64: the result is float64
    want = a.copy()
    np.remainder(want, b, out=want)
    got = a.copy()
    sw.remainder_(got, b)
    assert got.tobytes() == want.tobytes()
    t = torch.from_numpy(a.copy())
    tw = t.clone().remainder_(torch.from_numpy(b))
    sw.remainder_(t, torch.from_numpy(b))
    assert torch.equal(t, tw)
    ints = np.arange(1, 20, dtype=np.int32)
    with pytest.raises(TypeError, match="out of place"):
        sw.remainder_(ints, b)
    assert (ints == np.arange(1, 20)).all()
    with pytest.raises(RuntimeError):
        torch.from_numpy(ints.copy()).remainder_(2.5)
    with pytest.raises(TypeError, match="out of place"):
        sw.remainder_(torch.from_numpy(ints), 2.5)


def test_torch_rule_is_torch_can_cast_and_holds_under_compile():
    """The out= rule (integrations/torch_ops.can_cast, which Dynamo can trace) is
    torch.can_cast over every pair, and a compiled call casts into out as eager torch does."""
    from stridewise.integrations.torch_ops import can_cast

    dts = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
           torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
           torch.complex128]
    assert [(a, b) for a in dts for b in dts if can_cast(a, b) != torch.can_cast(a, b)] == []
    f = torch.compile(lambda x, o: sw.add(x, x, out=o), fullgraph=True, backend="aot_eager")
    x = torch.from_numpy(_data("float16", 37, 5))
    got, want = torch.zeros(37), torch.zeros(37)
    f(x, got)
    torch.add(x, x, out=want)
    assert torch.equal(got, want)
