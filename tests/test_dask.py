"""Dask arrays in, lazy dask arrays out: every result against NumPy (or CuPy) bit for bit.

Fast tests run Dask's synchronous scheduler in this process; one module-scoped
dask.distributed.LocalCluster with 2 worker processes runs the same kind of calls the way a
cluster does (pickled graphs, chunks over the wire, kernels built once per worker).
"""
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import stridewise as sw
from stridewise.integrations import dask as _dask

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def same(got, want):
    """Bit-for-bit equality of values and dtype (NaNs in the same places, -0.0 kept)."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def sync(x):
    return dask.compute(*x, scheduler="sync") if isinstance(x, tuple) else x.compute(scheduler="sync")


def rand(shape, dtype, seed=0, nonzero=False):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        a = rng.uniform(-50, 50, shape).astype(dtype)
        if nonzero:
            a[a == 0] = 1.5
    else:
        a = rng.integers(-1000, 1000, shape).astype(dtype)
        if nonzero:
            a[a == 0] = 7
    return a


@pytest.fixture
def seen(monkeypatch):
    """The (shape, strides) of every chunk tuple the tasks hand to stridewise."""
    calls = []
    orig = _dask._Chunk.__call__

    def record(self, *blocks):
        if all(getattr(b, "size", 1) for b in blocks):    # not the 0-size meta call
            calls.append([(getattr(b, "shape", None), getattr(b, "strides", None))
                          for b in blocks])
        return orig(self, *blocks)

    monkeypatch.setattr(_dask._Chunk, "__call__", record)
    return calls


def test_import_stridewise_does_not_import_dask():
    code = "import sys, stridewise; assert 'dask' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_remainder_mismatched_chunks(dtype):
    x, y = rand((37, 29), dtype, 1), rand((37, 29), dtype, 2, nonzero=True)
    r = sw.remainder(da.from_array(x, chunks=(10, 7)), da.from_array(y, chunks=(6, 13)))
    assert isinstance(r, da.Array) and r.dtype == np.remainder(x, y).dtype
    assert type(r._meta) is np.ndarray and r._meta.dtype == r.dtype
    same(sync(r), np.remainder(x, y))


def test_row_divisor_stays_one_block(seen):
    x, row = rand((40, 30), "float64", 3), rand((1, 30), "float64", 4, nonzero=True)
    r = sw.remainder(da.from_array(x, chunks=(10, 10)), da.from_array(row, chunks=(1, 15)))
    same(sync(r), np.remainder(x, row))
    # Dask picks common column chunks for (10, 10, 10) and (15, 15); whatever they are, the
    # divisor is read as one-row blocks, never expanded to an output chunk's 10 rows
    assert r.numblocks[0] == 4 and len(seen) == r.numblocks[0] * r.numblocks[1]
    for (xshape, _), (dshape, _) in seen:
        assert xshape[0] == 10 and dshape == (1, xshape[1])


def test_plain_array_split_along_dask_chunks(seen):
    x, col = rand((30, 24), "float32", 5), rand((30, 1), "float32", 6, nonzero=True)
    r = sw.remainder(da.from_array(x, chunks=(7, 8)), col)
    same(sync(r), np.remainder(x, col))
    # each task gets its own 7-row slice of the plain column, not the whole column
    assert sorted({s[1][0] for s in seen}) == [(2, 1), (7, 1)]
    y = rand((24,), "int64", 7, nonzero=True)
    r = sw.remainder(da.from_array(x.astype(np.int64), chunks=(7, 8)), y)
    same(sync(r), np.remainder(x.astype(np.int64), y))
    assert {s[1][0] for s in seen[-12:]} == {(8,)}


@pytest.mark.parametrize("other", [
    3, -2.5, np.float32(1.75), np.array(3, np.int64), np.array(2.5, np.float16),
], ids=["int", "float", "np.float32", "0d-int64", "0d-float16"])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float16"])
def test_zero_dim_and_scalar_operands_promote_as_numpy(dtype, other):
    x = rand((13, 11), dtype, 8, nonzero=True)
    d = da.from_array(x, chunks=(5, 4))
    want = np.remainder(x, other)
    got = sw.remainder(d, other)
    assert got.dtype == want.dtype
    same(sync(got), want)
    same(sync(sw.remainder(other, d)), np.remainder(other, x))


def test_zero_dim_dask_operand():
    x = rand((9, 8), "float64", 9, nonzero=True)
    s = da.from_array(np.array(4.25))
    same(sync(sw.remainder(da.from_array(x, chunks=4), s)), np.remainder(x, np.array(4.25)))
    same(sync(sw.remainder(s, 3)), np.remainder(np.array(4.25), 3))


def test_non_contiguous_chunks(seen):
    base = rand((40, 60), "float64", 10)
    x = base[::2, ::3]              # a strided NumPy view: every chunk is strided too
    d = da.from_array(x, chunks=(8, 7))
    div = rand((20,), "float64", 11, nonzero=True)
    same(sync(sw.remainder(d.T, div)), np.remainder(x.T, div))
    same(sync(sw.remainder(d[:, ::-1], 1.5)), np.remainder(x[:, ::-1], 1.5))
    # every chunk the kernel read was strided (none was copied to C order first)
    assert seen and all(strides != (8 * shape[1], 8) for (shape, strides), *_ in seen)


OPS = ["add", "divide", "floor_divide", "maximum"]


@pytest.mark.parametrize("name", OPS)
def test_builtin_binary_ops(name):
    x, y = rand((21, 17), "float32", 12), rand((17,), "int32", 13, nonzero=True)
    got = getattr(sw, name)(da.from_array(x, chunks=(8, 5)), da.from_array(y, chunks=6))
    want = getattr(np, name)(x, y)
    same(sync(got), want)


def test_where_cast_and_unary():
    x = rand((20, 9), "float64", 14)
    d = da.from_array(x, chunks=(6, 4))
    same(sync(sw.where(d > 0, d, -1.0)), np.where(x > 0, x, -1.0))
    same(sync(sw.cast(d, "int32")), x.astype(np.int32))
    same(sync(sw.negative(d)), np.negative(x))
    same(sync(sw.sqrt(abs(d))), np.sqrt(abs(x)))
    same(sync(sw.where(d, d, 1.0)), np.where(x, x, 1.0))   # a float condition's truth, as NumPy
    with pytest.raises(TypeError, match="condition must be real"):
        sw.where(d.astype(np.complex128), d, 1.0)   # refused while building the graph


def test_user_kernel_fused_and_multi_output():
    k = sw.ElementwiseKernel("T x, T y, float64 s", "T r, float64 q",
                             "r = x - y * floor(x / y); q = r * s", name="fused_rem")
    x, y = rand((25, 19), "float64", 15), rand((1, 19), "float64", 16, nonzero=True)
    r, q = k(da.from_array(x, chunks=(9, 10)), da.from_array(y, chunks=(1, 7)), 0.5)
    assert isinstance(r, da.Array) and isinstance(q, da.Array)
    want_r = x - y * np.floor(x / y)
    got_r, got_q = sync((r, q))
    same(got_r, want_r)
    same(got_q, want_r * 0.5)
    # single output, a fixed type converting in registers, a plain operand
    k1 = sw.ElementwiseKernel("float32 a, T b", "T c", "c = a * b", name="scale")
    a, b = rand((12, 10), "float32", 17), rand((12, 10), "float64", 18)
    same(sync(k1(a, da.from_array(b, chunks=5))), (a.astype(np.float64) * b))


def test_sw_fuse_over_dask_arrays():
    """sw.fuse traces for the chunks' library and dtypes and maps its kernel over the blocks:
    the fused result equals the same ops called one by one on the whole arrays."""
    x, y = rand((25, 19), "float32", 25), rand((19,), "float32", 26, nonzero=True)
    f = sw.fuse(lambda a, b: sw.add(sw.remainder(a, b), 1))
    got = f(da.from_array(x, chunks=(9, 10)), da.from_array(y, chunks=7))
    assert isinstance(got, da.Array)
    same(sync(got), sw.add(sw.remainder(x, y), 1))
    same(sync(f(da.from_array(x, chunks=(9, 10)), 2.5)), sw.add(sw.remainder(x, 2.5), 1))
    twice, plus = sw.fuse(lambda a: (a * 2, a + 1))(da.from_array(x, chunks=8))
    same(sync(twice), x * 2)
    same(sync(plus), x + 1)


def test_errors_are_raised_when_the_graph_is_built():
    d = da.ones((4, 4), chunks=2)
    with pytest.raises(TypeError, match="out= cannot be used with dask arrays"):
        sw.remainder(d, 2.0, out=da.ones((4, 4), chunks=2))
    with pytest.raises(TypeError, match="out= cannot be used with dask arrays"):
        sw.remainder(d, 2.0, out=np.empty((4, 4)))
    with pytest.raises(TypeError, match="in place on a dask array"):
        sw.remainder_(d, 2.0)
    with pytest.raises(ValueError, match="do not broadcast"):
        sw.remainder(d, np.ones(3))
    with pytest.raises(TypeError, match="unsupported dtype for remainder"):
        sw.remainder(d.astype(np.complex64), d)
    assert sw.remainder(d > 0, d > 1).dtype == np.int8            # bool % bool: NumPy's int8
    k = sw.ElementwiseKernel("T x, T y", "T z", "z = x + y", broadcasting=False)
    with pytest.raises(ValueError, match="broadcasting=False"):
        k(d, da.ones((1, 4), chunks=2))
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="torch array"):
        sw.remainder(d, torch.ones(4, dtype=torch.float64))


def test_unknown_chunk_sizes_as_dask_elementwise():
    """A boolean mask's result has unknown extents: it meets itself, an extent-1 dim or a
    trailing row as Dask's own elementwise ops do (each chunk paired with its own), and a
    known extent along an unknown dim names the fix."""
    x = da.from_array(rand((8, 5), "float32", 23), chunks=(3, 2))
    row = rand((5,), "float32", 24, nonzero=True)
    m = x[x[:, 0] > 0]
    got = sw.remainder(m, row)
    assert math.isnan(got.shape[0]) and got.shape[1] == 5
    eager = m.compute()
    for result, want in ((got, np.remainder(eager, row)),
                         (sw.remainder(m, da.from_array(row, chunks=2)), np.remainder(eager, row)),
                         (sw.add(m, m * 2), eager + eager * 2),
                         (sw.multiply(x[x > 0], 2), x.compute()[x.compute() > 0] * 2)):
        same(sync(result), want)
    for other in (np.ones((3, 5), np.float32), x):
        with pytest.raises(ValueError, match=r"x1 has unknown chunk sizes.*x1.compute_chunk_sizes"):
            sw.add(m, other)


def test_explain_is_the_first_chunks_kernel():
    x, row = rand((40, 30), "float32", 19), rand((30,), "float32", 20, nonzero=True)
    e = sw.explain(sw.remainder, da.from_array(x, chunks=(16, 12)), row)
    want = sw.explain(sw.remainder, np.empty((16, 12), np.float32), row[:12])
    assert (e.mode, e.shape, e.strides, e.source) == (want.mode, want.shape, want.strides, want.source)
    k = sw.ElementwiseKernel("T x", "T y, T z", "y = x + 1; z = x * 2", name="two")
    e = sw.explain(k, da.from_array(x, chunks=(16, 12)))
    assert e.source == sw.explain(k, np.empty((16, 12), np.float32)).source


def test_threaded_scheduler():
    """Dask's default scheduler for arrays: tasks call stridewise from several threads at once,
    first calls (compiles, plans) included."""
    k = sw.ElementwiseKernel("T x, T y", "T z", "z = x * y + x", name="threads_kernel")
    x, y = rand((64, 48), "float32", 23), rand((48,), "float32", 24, nonzero=True)
    dx = da.from_array(x, chunks=(5, 7))
    got = dask.compute(sw.remainder(dx, y), k(dx, y), sw.fmod(dx.T, 2.5), scheduler="threads",
                       num_workers=4)
    for g, w in zip(got, (np.remainder(x, y), x * y + x, np.fmod(x.T, np.float32(2.5)))):
        same(g, w)


shapes = st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes, data=st.data())
def test_hypothesis_chunks_and_broadcasts(shape, data):
    """Random shapes, chunkings and broadcast patterns against NumPy."""
    def operand(seed):
        bshape = tuple(n if data.draw(st.booleans()) else 1 for n in shape)
        bshape = bshape[data.draw(st.integers(0, len(bshape))):]
        a = rand(bshape, "float64", seed, nonzero=True)
        if data.draw(st.booleans()):
            return a
        chunks = tuple(data.draw(st.integers(1, max(n, 1))) for n in bshape)
        return da.from_array(a, chunks=chunks)
    x, y = operand(21), operand(22)
    if not isinstance(x, da.Array) and not isinstance(y, da.Array):
        y = da.from_array(y, chunks=2)
    got = sw.remainder(x, y)
    want = np.remainder(np.asarray(x), np.asarray(y))
    same(sync(got), want)


# -- a real cluster: 2 worker processes ------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def _count_builds_and_tasks():
    """In a worker: count compiles-or-loads per kernel source, and chunk calls."""
    from stridewise.integrations import dask as _dask
    from stridewise.backends import cpu

    builds, tasks = {}, [0]
    compile_, call = cpu.compile, _dask._Chunk.__call__

    def counted_compile(source, *a):
        builds[source] = builds.get(source, 0) + 1
        return compile_(source, *a)

    def counted_call(self, *blocks):
        tasks[0] += 1
        return call(self, *blocks)

    cpu.compile, _dask._Chunk.__call__ = counted_compile, counted_call
    _dask._counts = builds, tasks


def _counts():
    from stridewise.integrations import dask as _dask
    builds, tasks = _dask._counts
    return sorted(builds.values()), tasks[0], len(_dask._INTERNED)


def test_local_cluster_matches_numpy(client):
    x = rand((120, 90), "float64", 30)
    y = rand((120, 90), "float64", 31, nonzero=True)
    row = rand((1, 90), "float64", 32, nonzero=True)
    dx = da.from_array(x, chunks=(40, 25))
    dy = da.from_array(y, chunks=(30, 45))              # mismatched chunking
    fused = sw.ElementwiseKernel("T x, T y, T d, float64 s", "T r, T m",
                                 "m = x - y * floor(x / y); r = m - d * floor(m / d) + s",
                                 name="fused2")
    r1 = sw.remainder(dx, dy)
    r2 = sw.remainder(dx.T, row.T)                      # non-contiguous chunks, plain operand
    r3 = sw.remainder(dx, np.array(2.5))                # a 0-d operand
    r4 = sw.add(da.from_array(x.astype(np.int32), chunks=50), 3)
    r5, m5 = fused(dx, dy, da.from_array(row, chunks=(1, 30)), 0.25)
    got = client.compute([r1, r2, r3, r4, r5, m5], sync=True)
    m = np.remainder(x, y)      # NumPy's remainder equals x - y * floor(x / y) only up to
    fused_m = x - y * np.floor(x / y)   # rounding, so the kernel's oracle is its own formula
    for g, w in zip(got, [m, np.remainder(x.T, row.T), np.remainder(x, np.array(2.5)),
                          np.add(x.astype(np.int32), 3),
                          fused_m - row * np.floor(fused_m / row) + 0.25, fused_m]):
        same(g, w)
    # Each worker builds (compiles, or loads from the shared disk cache) a kernel source once,
    # however many tasks run it, and rebuilds each op once (one interned chunk callable per op).
    client.run(_count_builds_and_tasks)
    x2 = rand((120, 90), "float64", 33)
    fresh = sw.ElementwiseKernel("T x, T y, T d, float64 s", "T r, T m",
                                 fused.operation.replace("r =", "r = 1 +"), name="fused3")
    r6, m6 = fresh(da.from_array(x2, chunks=(40, 25)), dy, row, 0.5)
    r7 = sw.remainder(da.from_array(x2, chunks=(40, 25)), dy)
    client.compute([r6, m6], sync=True)
    client.compute(r7, sync=True)
    counts = client.run(_counts)
    assert sum(tasks for _, tasks, _ in counts.values()) == np.prod(r6.numblocks) + np.prod(
        r7.numblocks)
    assert sum(len(builds) for builds, _, _ in counts.values()) >= 1   # fresh is new to all
    for builds, tasks, interned in counts.values():
        assert set(builds) <= {1}, builds
        assert interned <= 4        # remainder, add, fused, fresh


# -- CuPy chunks on one GPU -----------------------------------------------------------------

@pytest.mark.gpu
def test_cupy_chunks_match_cupy():
    cp = pytest.importorskip("cupy")
    x = cp.asarray(rand((300, 257), "float32", 40))
    y = cp.asarray(rand((257,), "float32", 41, nonzero=True))
    dx = da.from_array(x, chunks=(128, 100), asarray=False)
    dy = da.from_array(y, chunks=60, asarray=False)
    r = sw.remainder(dx, dy)
    assert type(r._meta) is cp.ndarray and r.dtype == cp.remainder(x, y).dtype
    got = sync(r)
    assert type(got) is cp.ndarray
    same(cp.asnumpy(got), cp.asnumpy(cp.remainder(x, y)))
    same(cp.asnumpy(sync(sw.remainder(dx.T, 2.5))), cp.asnumpy(cp.remainder(x.T, 2.5)))
    three = cp.asarray(3.0, dtype=cp.float32)      # a 0-d operand of the chunks' own dtype
    same(cp.asnumpy(sync(sw.remainder(dx, three))), cp.asnumpy(cp.remainder(x, three)))
    # a 0-d float64: whatever CuPy's promotion, each chunk computes as the eager call does
    same(cp.asnumpy(sync(sw.remainder(dx, cp.asarray(3.0)))),
         cp.asnumpy(sw.remainder(x, cp.asarray(3.0))))
    k = sw.ElementwiseKernel("T x, T y", "T a, T b", "a = x + y; b = x * y", name="ab_gpu")
    a, b = sync(k(dx, y))
    same(cp.asnumpy(a), cp.asnumpy(x + y))
    same(cp.asnumpy(b), cp.asnumpy(x * y))
