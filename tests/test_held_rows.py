"""Rows.hold_rows: a row-constant operand (a 3-d outer product's divisor column) read, and a
divisor prepared, once per work unit and held across its pack columns (codegen/held_rows.py,
kernels.cuh run_packs kHold).

The generated source is checked without a GPU (marked `nvrtc`: every dtype, pack and index
width compiles); results are checked on the GPU (marked `gpu`) bit for bit, dtype and strides
included, against torch.remainder on CUDA, np.remainder on the host and the independent fmodf
kernel of test_cuda.py (every 16-bit pair), held and not held.
"""
import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stridewise as sw
from conftest import DTYPES
from oracle import random_values, same_bits
from stridewise.codegen import source as _codegen
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise.operands.dtypes import DTYPES as SW_DTYPES

torch = pytest.importorskip("torch")
from test_cuda import host, reference_kernel, torch_oracle, tt  # noqa: E402,F401 (a fixture)

HELD = sw.Rows(share_rows=True, hold_rows=True)
UNHELD = sw.Rows(share_rows=True, hold_rows=False)


def _cuda_spec(a, b, alg):
    """The spec the CUDA backend builds for `alg`: a dry call on NumPy arrays plans for the
    host, whose plan is the same but which never holds (test_the_host_never_holds)."""
    host_spec = _ops._call(_builtins.OPS["remainder"], (a, b), algorithm=alg, dry=True).spec
    return dataclasses.replace(host_spec, hold_rows=bool(alg.hold_rows))


def _outer_3d(dt, k=64):
    return np.ones((k, 1, k), dt), np.ones((1, k, 1), dt)


# -- generated source (no GPU) -----------------------------------------------------------------
def test_only_a_shared_batch_beside_a_row_constant_operand_holds_it():
    """load_row exists only with hold_rows, a repeated row and a bcast operand; the divisor
    column is then prepared (functors.h Prepared) in load_row, kept as computed, and no
    longer loaded or prepared by load_held/reload_held."""
    from stridewise.backends import cuda
    f = np.float32
    a, b = _outer_3d(f)
    held = _cuda_spec(a, b, HELD)
    assert held.kinds == ("dense", "repeated", "bcast") and held.hold_rows
    src = _codegen.generate(held, cuda.entry_point)
    row = src[src.index("load_row"):src.index("static void hold")]
    assert "in.a2 = sw::load_one<float>(p[2], off[2]);" in row
    assert "in.d2 = sw::prepare<F>(" in row and "sw::keep_computed(in.d2);" in row
    rest = src[src.index("static In<P> load_held"):src.index("template <int P> struct Out")]
    assert "in.a2 =" not in rest and "in.d2 =" not in rest and "in.a1 = sw::load_pack" in rest
    assert "kHeldRows = 1" in src
    # not held: the same Op as before (no held methods, the column not prepared in float32)
    for alg in (UNHELD, sw.Rows(share_rows=False, hold_rows=True)):
        spec = _cuda_spec(a, b, alg)
        src = _codegen.generate(spec, cuda.entry_point)
        assert "load_row" not in src and "kHeldRows" not in src and "in.d2" not in src
    # a dense row beside the column, a row vector without one: nothing to hold
    for x, y in ((np.ones((64, 256), f), np.ones((64, 1), f)), (np.ones((64, 256), f), np.ones(256, f))):
        assert "load_row" not in _codegen.generate(_cuda_spec(x, y, HELD), cuda.entry_point)


def test_the_host_never_holds():
    """hold_rows is a GPU knob: the host's spec keeps it off even when it is set."""
    a, b = _outer_3d(np.float32)
    spec = _ops._call(_builtins.OPS["remainder"], (a, b), algorithm=HELD, dry=True).spec
    assert spec.kinds == ("dense", "repeated", "bcast") and not spec.hold_rows
    out = sw.remainder(a * 7.5, b * 2.0, algorithm=HELD)
    assert same_bits(out, np.remainder(a * 7.5, b * 2.0))


@pytest.mark.nvrtc
def test_held_kernels_compile_for_every_dtype_pack_and_index_width(monkeypatch):
    """The divisor column held (and the dividend column held beside a shared divisor row, a
    2-d outer product), odd rows (kRowSpacing) too, in every dtype: the widest pack and
    packs of 1 at both index widths, the others at the widest pack."""
    pytest.importorskip("cuda.bindings")
    from nvrtc_batch import compile_batched
    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    f = np.float32
    bases = [_cuda_spec(*_outer_3d(f), HELD),
             _cuda_spec(np.ones((64, 1), f), np.ones((1, 256), f), HELD),
             _cuda_spec(np.ones((8, 1, 255), f), np.ones((1, 64, 1), f), HELD)]
    assert bases[2].row_heads and all(s.hold_rows for s in bases)
    specs = []
    for i, base in enumerate(bases):   # every pack and index width on the first (CI's time)
        for name in DTYPES:
            dt = SW_DTYPES[name]
            wide = 16 // dt.itemsize
            for pack, bits in ((wide, 32), (1, 32), (wide, 64), (1, 64))[:4 if i == 0 else 1]:
                specs.append(dataclasses.replace(
                    base, arrays=(dt,) * len(base.arrays), params=(dt,) * len(base.params),
                    compute=dt, functor=_builtins.OPS["remainder"].functor_for(dt, "torch"),
                    pack=pack, index_bits=bits))
    assert all("load_row" in _codegen.generate(s, lambda s: "") for s in specs)
    assert compile_batched(specs, chunks=4) == len(specs)


# -- on the GPU --------------------------------------------------------------------------------
def _check(a, b, convention="torch"):
    """Held and unheld against torch (or NumPy): values, dtype, shape and strides."""
    e = sw.explain(sw.remainder, a, b, algorithm=HELD)
    assert e.mode == "rows" and "repeated" in "".join(e.kinds) and "bcast" in e.kinds, e.kinds
    want = torch_oracle(a, b) if convention == "torch" else None
    got = {h: sw.remainder(a, b, algorithm=alg, convention=convention) for h, alg in (("held", HELD), ("unheld", UNHELD))}
    for h, g in got.items():
        if convention == "torch":
            assert g.dtype == want.dtype and g.shape == want.shape and g.stride() == want.stride(), h
            assert same_bits(host(g), host(want)), (h, a.dtype, tuple(a.shape), tuple(b.shape))
        else:
            with np.errstate(all="ignore"):
                ref = np.remainder(host(a), host(b))
            assert same_bits(host(g), ref), (h, a.dtype, tuple(a.shape), tuple(b.shape))


# Shapes: slabs of rows not a multiple of the batch's 4 (the last batch short), rows of odd
# length (each peels a head; the batch's rows G apart), several slabs, a 2-d product with the
# dividend column held beside the divisor row.
SHAPES = [((64, 1, 64), (1, 64, 1)), ((3, 1, 130), (1, 7, 1)), ((2, 1, 1031), (1, 9, 1)),
          ((5, 1, 8195), (1, 5, 1)), ((1, 1, 33), (1, 3, 1)), ((4, 1, 255), (1, 13, 1)),
          ((1, 1031), (301, 1)), ((301, 1), (1, 1030))]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_held_rows_against_torch(dtype):
    rng = np.random.default_rng(35)
    for sa, sb in SHAPES:
        a, b = tt(random_values(rng, dtype, sa)), tt(random_values(rng, dtype, sb))
        _check(a, b)
        _check(a, b, "numpy")
    # a misaligned dividend row and divisor column (views one element in)
    a = tt(random_values(rng, dtype, (3, 1, 1032)))[:, :, 1:]
    b = tt(random_values(rng, dtype, (1, 12, 1)))[:, 1:, :]
    _check(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_held_divisors_at_the_fast_path_limits(dtype):
    """test_cuda_fastpaths' hard cases with the divisors as a held column: each column of the
    dividend row is built for one divisor (quotients at the fast path's limits, exact
    multiples and one ulp either side; full-range integers with 0, -1 and the extremes as
    divisors), and every other divisor meets it too."""
    from test_cuda_fastpaths import _float_cases, _int_cases
    if dtype.startswith("float"):
        a, b = _float_cases(dtype, n=1 << 14, width=256)
    else:
        a, b = _int_cases(dtype, n=1 << 14, width=256)
    row, col = a.reshape(1, 1, -1), b.reshape(1, -1, 1)
    ta, tb = torch.from_numpy(np.ascontiguousarray(row)).cuda(), torch.from_numpy(np.ascontiguousarray(col)).cuda()
    e = sw.explain(sw.remainder, ta, tb, algorithm=HELD)
    assert e.kinds[1:] == ("repeated", "bcast"), e.kinds
    for alg in (HELD, UNHELD):
        got = sw.remainder(ta, tb, algorithm=alg).cpu().numpy()
        with np.errstate(all="ignore"):
            want = np.remainder(row, col)
        if dtype.startswith("float"):
            assert same_bits(got, torch.remainder(ta, tb).cpu().numpy())
            got = sw.remainder(ta, tb, algorithm=alg, convention="numpy").cpu().numpy()
            assert same_bits(got, want)
        else:
            np.testing.assert_array_equal(got, np.where(col == 0, 0, want))


@pytest.mark.gpu
@pytest.mark.parametrize("convention", ["torch", "numpy"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_16bit_pair_with_the_divisor_column_held(dtype, convention, reference_kernel):
    """Every (dividend, divisor) pair: all dividends as the shared row, the divisors down a
    held column, against test_cuda.py's fmodf kernel (independent of stridewise)."""
    from cuda.core import LaunchConfig, launch
    dev, kernel = reference_kernel
    stream = dev.create_stream(torch.cuda.current_stream())
    tdt = getattr(torch, dtype)
    bits = torch.arange(-32768, 32768, dtype=torch.int32, device="cuda").to(torch.int16)
    row = bits.view(tdt)[None, :]
    chunk = 4096
    out = torch.empty((chunk, 65536), dtype=tdt, device="cuda")
    ref = torch.empty((chunk, 65536), dtype=torch.int16, device="cuda")
    n = chunk * 65536
    cfg = LaunchConfig(grid=n // 256, block=256)
    bad = torch.zeros((), dtype=torch.int64, device="cuda")
    for start in range(0, 65536, chunk):
        col = bits[start:start + chunk].view(tdt)[:, None]
        sw.remainder(row, col, out=out, convention=convention, algorithm=HELD)
        launch(stream, cfg, kernel, row.data_ptr(), col.data_ptr(), ref.data_ptr(), np.int64(65536), np.int64(n),
               np.int32(dtype == "bfloat16"), np.int32(convention == "numpy"), np.int32(0))
        nan = torch.isnan(out) & torch.isnan(ref.view(tdt))
        bad += ((out.view(torch.int16) != ref) & ~nan).sum()
    e = sw.explain(sw.remainder, row, col, out=out, algorithm=HELD)
    assert e.mode == "rows" and e.kinds[1:] == ("repeated", "bcast")
    assert int(bad) == 0


@st.composite
def _outer_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    slabs, height = draw(st.integers(1, 4)), draw(st.integers(1, 11))
    length = draw(st.sampled_from([1, 7, 8, 31, 64, 129, 257, 1030]))
    head = draw(st.integers(0, 3))   # the row starts this many elements into its allocation
    seed = draw(st.integers(0, 2**16))
    return dtype, slabs, height, length, head, seed


@pytest.mark.gpu
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(_outer_case())
def test_held_rows_hypothesis(case):
    dtype, slabs, height, length, head, seed = case
    rng = np.random.default_rng(seed)
    a = tt(random_values(rng, dtype, (slabs, 1, length + head)))[:, :, head:]
    b = tt(random_values(rng, dtype, (1, height + head, 1)))[:, head:, :]
    kinds = sw.explain(sw.remainder, a, b, algorithm=HELD).kinds
    if "repeated" not in "".join(kinds) or "bcast" not in kinds:
        return   # one element along a dim merges it away: no longer an outer product
    _check(a, b)
