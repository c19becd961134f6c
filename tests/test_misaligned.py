"""Misaligned base pointers and rows whose length is not a multiple of the pack: every mode
keeps full 16-byte packs (a head peel aligns the output, per run or per row; inputs
misaligned otherwise load "shifted") and matches NumPy bit for bit, for every offset
1..pack-1 and odd row lengths."""
import numpy as np
import pytest

import stridewise as sw
from stridewise import algorithms
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise.plan import plan

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _values(shape, dtype, seed, divisor=False):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        v = rng.uniform(-50, 50, shape).astype(dtype)
        return np.where(np.abs(v) < 0.5, 3, v).astype(dtype) if divisor else v
    v = rng.integers(-1000, 1000, shape).astype(dtype)
    return np.where(v == 0, 7, v).astype(dtype) if divisor else v


def _check(args, alg, out=None):
    want = np.remainder(*args)
    got = sw.remainder(*args, algorithm=alg, out=out)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))   # bit for bit
    return _ops._call(_builtins.OPS["remainder"], args, out, None, alg, dry=True)


def _sliced(base, offset):
    """A view `offset` elements past base's (aligned) start."""
    return base.reshape(-1)[offset:offset + base.size - 16].reshape(-1) if base.ndim == 1 else base


@pytest.mark.parametrize("dtype", DTYPES)
def test_flat_modes_every_offset(dtype):
    """contiguous and scalar: an input misaligned by 1..pack-1 elements against an aligned
    output keeps the full pack; so does an output misaligned like its input (in place)."""
    pack = 16 // np.dtype(dtype).itemsize
    n = 1000 + 3                        # odd: a tail too
    x = _values(n + pack, dtype, 1)
    y = _values(n + pack, dtype, 2, divisor=True)
    for off in range(1, pack):
        a, b = x[off:off + n], y[:n]
        prep = _check((a, b), algorithms.Contiguous())
        assert prep.layout.pack == pack and "shifted" in prep.layout.kinds
        prep = _check((a, y[off:off + n]), algorithms.Contiguous())
        assert prep.layout.pack == pack
        prep = _check((a, y[5]), algorithms.Scalar())
        assert prep.layout.pack == pack
        out = np.empty(n + pack, dtype)[off:off + n]   # the output misaligned too
        prep = _check((a, b), algorithms.Contiguous(), out=out)
        assert prep.layout.pack == pack and prep.layout.aux == (-off) % pack


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(37, 129), (9, 16 * 8 + 5), (5, 3)])
def test_rows_misaligned_slices_and_odd_rows(dtype, shape):
    """a[o:, o:] of a 2-d array against a row divisor, and rows of odd length: rows (and
    short_rows where it applies) keep the full pack for every offset o."""
    pack = 16 // np.dtype(dtype).itemsize
    r, c = shape
    big = _values((r + pack, c + pack), dtype, 3)
    div = _values((c + pack,), dtype, 4, divisor=True)
    for off in range(0, pack):
        a = big[off:off + r, off:off + c]
        d = div[off:off + c]
        for alg in (algorithms.Rows(), algorithms.Rows(share_rows=True), None):
            prep = _check((a, d), alg)
            if prep.layout.mode == "rows":
                assert prep.layout.pack == pack, (off, prep.layout)
        _check((a, _values((r, c), dtype, 9, divisor=True)), algorithms.Rows())
        col = _values((r + pack, 1), dtype, 5, divisor=True)[off:off + r]
        prep = _check((a, col), algorithms.Rows())
        assert prep.layout.pack == pack
        # an outer product of odd length: the output's rows start anywhere
        prep = _check((big[off:off + r, :1], d), algorithms.Rows(share_rows=True))
        assert prep.layout.pack == pack


@pytest.mark.parametrize("dtype", DTYPES)
def test_short_rows_tiled_general_misaligned(dtype):
    """The remaining modes on misaligned views: values bit for bit (tiled keeps its
    whole-block rule and general moves single elements)."""
    pack = 16 // np.dtype(dtype).itemsize
    big = _values((80, 48), dtype, 6)
    div = _values((48, 80), dtype, 7, divisor=True)
    for off in range(1, pack):
        a = big[off:off + 64, off:off + 33]
        _check((a, div[off:off + 33, :64].T), algorithms.Tiled())
        _check((a, div[off:off + 33, :64].T), algorithms.General())
        flat = _values(64 * 6 + pack, dtype, 8)[off:off + 64 * 6].reshape(64, 6)
        prep = _check((flat, div[0, off:off + 6]), algorithms.ShortRows())
        assert prep.layout.pack == pack


@pytest.mark.parametrize("dtype", ["float16", "int32", "float64"])
def test_host_reads_a_shifted_input_with_the_aligned_layouts_kernel(dtype):
    """The host's loads take any address (capabilities.CPU alike): an input misaligned
    against its output is planned "shifted" but runs the kernel of the aligned layout, which
    gives the same bits."""
    n, x = 1003, _values(1003 + 16, dtype, 1)
    y = _values(n, dtype, 2, divisor=True)
    shifted = _check((x[1:1 + n], y), algorithms.Contiguous())
    aligned = _check((x[:n], y), algorithms.Contiguous())
    assert "shifted" in shifted.layout.kinds and "shifted" not in aligned.layout.kinds
    assert shifted.layout.pack == aligned.layout.pack
    assert shifted.source == aligned.source


def test_plan_marks_shifted_inputs_and_keeps_the_pack():
    # an input 4 bytes past its output's alignment: pack 4, the input shifted
    lay = plan((100,), [((100,), (1,), 4, 0), ((100,), (1,), 4, 4)]).layout("contiguous")
    assert (lay.pack, lay.aux, lay.kinds) == (4, 0, ("dense", "shifted"))
    # rows of an odd stride against an aligned output
    p = plan((8, 33), [((8, 33), (33, 1), 4, 0), ((8, 33), (40, 1), 4, 4)])
    lay = p.layout("rows")
    assert (lay.pack, lay.kinds) == (4, ("dense", "shifted"))
    # misaligned alike (an in-place view): dense, the kernel's peel aligns both
    p = plan((8, 33), [((8, 33), (33, 1), 4, 4), ((8, 33), (33, 1), 4, 4)])
    assert p.layout("rows").kinds == ("dense", "dense")
    # an element pointer off its own size still falls back to single elements
    assert plan((8,), [((8,), (1,), 4, 0), ((8,), (1,), 4, 2)]).layout("contiguous").pack == 1


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8])
def test_shared_rows_take_rows_that_peel_alike(itemsize):
    """A row vector shared beside output rows of any length: read shifted where it is off the
    output's packs, and a batch's rows spaced so that each starts at the same phase (the
    fewest rows whose elements fill whole packs); unshared, no spacing."""
    pack = 16 // itemsize
    for c in range(3 * pack, 4 * pack):
        for off in (0, 1):
            p = plan((40, c), [((40, c), (c, 1), itemsize, 0), ((40, c), (c, 1), itemsize, 0),
                               ((c,), (1,), itemsize, off * itemsize)])
            shared, alone = p.layout("rows", share_rows=True), p.layout("rows")
            # the fewest rows after which the output's rows start at the same phase again
            spacing = next(g for g in range(1, pack + 1) if g * c % pack == 0)
            assert shared.pack == alone.pack == pack
            assert shared.row_spacing == (spacing if c % pack else 1) and alone.row_spacing == 1
            aligned = c % pack == 0 and off == 0
            assert shared.kinds[-1] == ("repeated" if aligned else "repeated_shifted")
            assert alone.kinds[-1] == ("dense" if aligned else "shifted")
