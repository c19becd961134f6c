"""Comparison, logical, bitwise, test, rounding and the other table ops added with the new
dtypes: promotion and errors. Every row's values, in every compute dtype, are held to NumPy
and torch by the table tests (tests/test_builtin_ops.py test_op_matches_*)."""
import numpy as np
import pytest

import stridewise as sw

torch = pytest.importorskip("torch")


def test_comparisons_give_bool_with_promotion():
    a = np.arange(10, dtype=np.int8)
    assert sw.less(a, 4.5).dtype == np.bool_
    np.testing.assert_array_equal(sw.less(a, 4.5), a < 4.5)
    t = torch.arange(10, dtype=torch.int16)
    assert torch.equal(sw.greater_equal(t, torch.tensor(3.5, dtype=torch.float64)), t >= 3.5)
    # the condition of where now comes from a comparison
    x = np.linspace(-3, 3, 13)
    np.testing.assert_array_equal(sw.where(sw.greater(x, 0), x, 0.0), np.where(x > 0, x, 0.0))


def test_bool_unary_ops_follow_each_library():
    """abs, sign, square, floor, ceil and trunc of a bool mask, each library's way: NumPy's
    absolute(bool) is the identity and its sign has no bool loop; torch's sign(bool) is the
    identity, and its abs of a bool is the identity on CUDA (its CPU kernel raises: stridewise
    gives the identity on both)."""
    x = np.array([True, False, True, True])
    got = sw.abs(x)
    assert got.dtype == np.abs(x).dtype and (got == np.abs(x)).all()
    with pytest.raises(TypeError, match="loop"):
        np.sign(x)
    with pytest.raises(TypeError, match="no loop"):
        sw.sign(x)
    t = torch.from_numpy(x)
    assert torch.equal(sw.sign(t), torch.sign(t))
    with pytest.raises(RuntimeError):
        torch.abs(t)
    got = sw.abs(t)
    assert got.dtype == torch.bool and torch.equal(got, t)
    # torch's square is pow(x, 2), which gives a bool int64; NumPy's square(bool) is int8
    for lib_x, ref in ((t, torch.square), (x, np.square)):
        got, want = sw.square(lib_x), ref(lib_x)
        assert got.dtype == want.dtype and (np.asarray(got) == np.asarray(want)).all()
    # torch has no floor, ceil or trunc of bool (NumPy's are the identity, as stridewise's)
    for op in ("floor", "ceil", "trunc"):
        with pytest.raises(RuntimeError):
            getattr(torch, op)(t)
        with pytest.raises(RuntimeError, match="torch bool"):
            getattr(sw, op)(t)
        want = getattr(np, op)(x)
        got = getattr(sw, op)(x)
        assert got.dtype == want.dtype and (got == want).all()


def test_float_only_ops_raise_the_librarys_error():
    with pytest.raises(TypeError):
        sw.bitwise_and(np.ones(3), np.ones(3))
    with pytest.raises(TypeError):
        sw.left_shift(torch.ones(3), torch.ones(3))
    with pytest.raises(TypeError, match="reciprocal"):
        sw.reciprocal(np.ones(3, np.int32))     # NumPy's integer reciprocal is not provided
    assert sw.reciprocal(torch.ones(3, dtype=torch.int32)).dtype == torch.float32


def test_where_reads_numpys_truth_of_any_condition():
    """NumPy's where takes a condition of any real dtype as its truth (nonzero, NaN included);
    torch's raises unless it is bool, and so does stridewise for torch tensors."""
    x, y = np.arange(6, dtype=np.float32), -np.arange(6, dtype=np.float32)
    conds = [np.array([0, 1, 2, -1, 0, 7], np.int64), np.array([0, 1, 0, 255, 3, 0], np.uint8),
             np.array([0.0, np.nan, -0.0, 2.5, np.inf, 1e-45], np.float32),
             np.array([0, 1, 0, 1, 1, 0], np.float16)[::-1]]
    for c in conds:
        want, got = np.where(c, x, y), sw.where(c, x, y)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    t = torch.tensor([0, 1, 2])
    with pytest.raises(RuntimeError):
        torch.where(t, torch.ones(3), torch.zeros(3))
    with pytest.raises(TypeError, match="bool condition"):
        sw.where(t, torch.ones(3), torch.zeros(3))


@pytest.mark.gpu
def test_where_reads_the_truth_of_a_cupy_condition():
    cupy = pytest.importorskip("cupy")
    c = np.array([0.0, np.nan, -0.0, 2.5, 0, 3], np.float32)
    x, y = np.arange(6, dtype=np.float64), -np.arange(6, dtype=np.float64)
    got = sw.where(cupy.asarray(c), cupy.asarray(x), cupy.asarray(y))
    np.testing.assert_array_equal(cupy.asnumpy(got), np.where(c, x, y))
