"""Plan: merging, classification, index width and pack, with no compiler and no device."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stridewise.plan import MODES, broadcast_shapes, plan


def _operand(a: np.ndarray):
    return (a.shape, tuple(s // a.itemsize for s in a.strides), a.itemsize, a.ctypes.data)


def _plan_of(out, *inputs):
    return plan(out.shape, [_operand(out)] + [_operand(x) for x in inputs])


# OneFlow's pinned simplification cases (oneflow/core/ep/common/primitive/broadcast_simplify test).
@pytest.mark.parametrize("sa, sb, shape, strides", [
    ((2, 5, 10, 5), (5, 1, 5, 10, 1), (5, 2, 50, 5),
     ((500, 250, 5, 1), (0, 250, 5, 1), (50, 0, 1, 0))),
    ((10, 5, 1, 5), (5,), (50, 5), ((5, 1), (5, 1), (0, 1))),
    ((2, 5, 10, 5), (1,), (500,), ((1,), (1,), (0,))),
])
def test_oneflow_simplification_cases(sa, sb, shape, strides):
    a, b = np.empty(sa, np.float32), np.empty(sb, np.float32)
    out = np.empty(np.broadcast_shapes(sa, sb), np.float32)
    p = _plan_of(out, a, b)
    assert p.shape == shape and p.strides == strides


def test_modes_are_classified():
    f = np.float32
    cases = [
        ((np.empty((64, 64), f), np.empty((64, 64), f)), "contiguous"),
        ((np.empty((64, 64), f), np.empty((), f)), "scalar"),
        ((np.empty((64, 1024), f), np.empty((1024,), f)), "rows"),
        ((np.empty((64, 1024), f), np.empty((64, 1), f)), "rows"),
        ((np.empty((64, 6), f), np.empty((1, 6), f)), "short_rows"),
        ((np.empty((64, 128), f).T, np.empty((128, 64), f)), "tiled"),
        ((np.empty((64, 256), f)[:, ::2], np.empty((64, 128), f)), "rows"),
    ]
    for (a, b), mode in cases:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape), f)
        assert _plan_of(out, a, b).mode == mode, (a.shape, b.shape)
    out = np.empty((128, 64), f).T                     # strided out with no unit-stride inner dim
    out = np.empty((64, 128, 2), f)[:, :, 0]
    assert _plan_of(out, np.empty((64, 128), f), np.empty((128,), f)).mode == "general"


def test_index_width_and_pack():
    p = plan((2**31,), [((2**31,), (1,), 2, 0), ((2**31,), (1,), 2, 0)])
    assert p.index_bits == 64
    p = plan((2**20,), [((2**20,), (1,), 4, 0), ((2**20,), (1,), 4, 0)])
    assert p.index_bits == 32 and p.layout("contiguous").pack == 4
    # a pointer 4 bytes past 16-byte alignment on both sides: the head peel keeps pack 4
    lay = plan((100,), [((100,), (1,), 4, 4), ((100,), (1,), 4, 68)]).layout("contiguous")
    assert (lay.pack, lay.aux) == (4, 3)
    # different misalignment: the output's head aligns it, the input loads shifted
    lay = plan((100,), [((100,), (1,), 4, 4), ((100,), (1,), 4, 8)]).layout("contiguous")
    assert (lay.pack, lay.aux, lay.kinds) == (4, 3, ("dense", "shifted"))
    # rows: a row stride off the pack keeps it; the row vector is misaligned row by row,
    # alike in rows 2 apart (6-element rows of 4-element packs), which a shared batch takes
    p = plan((10, 6), [((10, 6), (6, 1), 4, 0), ((6,), (1,), 4, 0)])
    assert p.layout("rows").pack == 4 and p.layout("short_rows").pack == 4
    assert p.layout("rows").kinds == ("dense", "shifted")
    shared = p.layout("rows", share_rows=True)
    assert (shared.kinds, shared.row_spacing) == (("dense", "repeated_shifted"), 2)
    # mixed sizes: 16 bytes over the widest dtype
    p = plan((64,), [((64,), (1,), 8, 0), ((64,), (1,), 4, 0)])
    assert p.layout("contiguous").pack == 2


def test_broadcast_error_names_the_arguments():
    with pytest.raises(ValueError, match="x1 has extent 3 and x2 has extent 4"):
        broadcast_shapes([(2, 3), (4,)], ["x1", "x2"])
    assert broadcast_shapes([(5, 1, 3), (4, 1), ()], ["a", "b", "c"]) == (5, 4, 3)


# -- hypothesis: planned offsets equal NumPy's broadcast indexing ----------------------------
def _offsets(view: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Each element's offset from the view's first element, read through NumPy indexing."""
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
    return view - start


@st.composite
def problem(draw):
    nd = draw(st.integers(0, 8))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd)))
    n_in = draw(st.integers(1, 3))
    views, bases = [], []
    for k in range(n_in + 1):
        if k == 0:
            s = shape
        else:
            s = tuple(n if draw(st.booleans()) else 1 for n in shape)
            s = s[draw(st.integers(0, len(s))):]
        steps = [draw(st.sampled_from([1, 1, 2, 3, -1])) for _ in s]
        base = np.arange(int(np.prod([n * abs(t) for n, t in zip(s, steps)], dtype=np.int64)) or 1,
                         dtype=np.int64)
        v = base.reshape([n * abs(t) for n, t in zip(s, steps)])[(*(slice(None, None, t) for t in steps), ...)]
        if v.ndim >= 2 and draw(st.booleans()):
            perm = draw(st.permutations(range(v.ndim)))
            b2 = np.arange(v.size, dtype=np.int64)
            v = b2.reshape([v.shape[i] for i in perm]).transpose(np.argsort(perm))
            base = b2
        views.append(v)
        bases.append(base)
    return shape, views, bases


@settings(max_examples=300, deadline=None)
@given(problem())
def test_planned_offsets_match_numpy_broadcasting(prob):
    shape, views, bases = prob
    p = plan(shape, [_operand(v) for v in views])
    assert p.mode in MODES and len(p.shape) <= 8
    # planned walk: every merged multi-index -> per-operand offsets
    grids = np.indices(p.shape).reshape(len(p.shape), -1) if p.shape else np.zeros((0, 1), int)
    planned = [np.asarray(st) @ grids for st in p.strides]
    # NumPy: each operand's offset at every output element
    expected = [np.broadcast_to(_offsets(v, b), shape).ravel() for v, b in zip(views, bases)]
    assert planned[0].size == expected[0].size == int(np.prod(shape, dtype=np.int64))
    pos = {int(o): i for i, o in enumerate(expected[0])}       # out offsets are unique
    order = np.array([pos[int(o)] for o in planned[0]])
    for k in range(1, len(views)):
        assert np.array_equal(planned[k], expected[k][order]), k
    for mode in MODES:                                           # every layout is self-consistent
        if p.supports(mode):
            lay = p.layout(mode)
            assert lay.pack >= 1 and len(lay.kinds) == len(views)
