"""Resolution with fake backends and devices, in AcceleratedKernels' style: nothing launches."""
import dataclasses

import numpy as np
import pytest

import stridewise as sw
from oracle import numpy_remainder
from stridewise import resolve as _resolve
from stridewise.plan import plan
from stridewise.capabilities import Capabilities
from stridewise.tuning import ElementwiseTuning, elementwise_tuning, register_tuning

FAKE = Capabilities("fake", ("float32", "int32"), max_block_size=512, max_pack_bytes=16,
                    modes=("contiguous", "scalar", "rows", "general"))
TUNING = ElementwiseTuning(block_size=128, waves=4, items_per_thread=4, tile=16, source="fake device, test")
F32 = sw.launch.pipeline._arrays.dtype_of("float32") if hasattr(sw.launch.pipeline, "_arrays") else None


def _dtype(name):
    from stridewise.operands.dtypes import DTYPES
    return DTYPES[name]


ROWS = plan((64, 1024), [((64, 1024), (1024, 1), 4, 0), ((64, 1024), (1024, 1), 4, 0), ((1024,), (1,), 4, 0)])
FLAT = plan((4096,), [((4096,), (1,), 4, 0), ((4096,), (1,), 4, 0)])
COLUMN = plan((64, 1024), [((64, 1024), (1024, 1), 4, 0), ((64, 1024), (1024, 1), 4, 0), ((64, 1), (1, 0), 4, 0)])
TILED = plan((64, 64), [((64, 64), (64, 1), 4, 0), ((64, 64), (1, 64), 4, 0)])


def resolve(alg, p=ROWS, caps=FAKE, tuning=TUNING, dtypes=("float32",)):
    return _resolve._resolve_elementwise(alg, p, tuning, caps, [_dtype(d) for d in dtypes])


def test_auto_selects_the_plan_mode_and_fills_from_the_tuning():
    assert resolve(sw.Auto()) == sw.Rows(block_size=128, pack=4, items_per_thread=4, keep_loads=False,
                                         share_rows=False)
    assert resolve(sw.Auto(), FLAT) == sw.Contiguous(block_size=128, pack=4, items_per_thread=4,
                                                     keep_loads=False)


def test_explicit_fields_win_field_by_field():
    assert resolve(sw.Rows(block_size=512)) == sw.Rows(block_size=512, pack=4, items_per_thread=4,
                                                       keep_loads=False, share_rows=False)
    assert resolve(sw.Rows(pack=2, share_rows=True)) == sw.Rows(block_size=128, pack=2, items_per_thread=4,
                                                                keep_loads=False, share_rows=True)
    assert resolve(sw.General(), ROWS).mode == "general"          # General runs anything


def test_a_tunings_mode_overrides_apply_to_that_mode_only():
    """A (mode, field, value) override fills that mode's algorithm; others keep the field."""
    caps = dataclasses.replace(FAKE, modes=FAKE.modes + ("tiled",))
    tuning = dataclasses.replace(TUNING, tile_group=4, modes=(("tiled", "block_size", 256),
                                                              ("scalar", "items_per_thread", 2)))
    assert resolve(sw.Auto(), TILED, caps, tuning) == sw.Tiled(block_size=256, pack=4, items_per_thread=4,
                                                               keep_loads=False, tile=16, tile_group=4,
                                                               stage=False)
    assert resolve(sw.Tiled(block_size=64, tile_group=1), TILED, caps, tuning).block_size == 64
    assert resolve(sw.Auto(), TILED, caps, TUNING).block_size == 128
    assert resolve(sw.Auto(), ROWS, caps, tuning) == sw.Rows(block_size=128, pack=4, items_per_thread=4,
                                                             keep_loads=False, share_rows=False)
    scalar = plan((4096,), [((4096,), (1,), 4, 0), ((4096,), (1,), 4, 0), ((4096,), (0,), 4, 0)])
    assert resolve(sw.Auto(), scalar, caps, tuning) == sw.Scalar(block_size=128, pack=4, items_per_thread=2,
                                                                 keep_loads=False)
    assert resolve(sw.Contiguous(), FLAT, caps, tuning).items_per_thread == 4


def test_fields_a_backend_does_not_read_stay_unset():
    """The host has no blocks and picks its own tiles: a resolved CPU algorithm holds what it
    reads (and explain shows that), while explicit fields are still kept."""
    from stridewise.capabilities import CPU
    assert resolve(sw.Auto(), TILED, CPU, TUNING) == sw.Tiled(pack=4)
    assert resolve(sw.Auto(), ROWS, CPU, TUNING) == sw.Rows(pack=4, share_rows=False)
    assert resolve(sw.Tiled(block_size=64), TILED, CPU, TUNING) == sw.Tiled(block_size=64, pack=4)
    assert repr(sw.Tiled(pack=4, tile=8)) == "Tiled(pack=4, tile=8)"
    # a transposed step of 512 bytes (the host tiles steps that alias in its caches)
    a, b = np.ones((256, 128), np.float32).T, np.ones((128, 256), np.float32)
    assert "Tiled(pack=4)\n" in str(sw.explain(sw.remainder, a, b))


def test_capability_decides_what_auto_may_pick():
    # the fake device has no tiled mode: Auto falls back to general, explicit Tiled is rejected
    assert resolve(sw.Auto(), TILED) == sw.General(block_size=128, pack=1, items_per_thread=4,
                                                   keep_loads=False)
    with pytest.raises(ValueError, match=r"Tiled\(\) cannot run"):
        resolve(sw.Tiled(), TILED)


@pytest.mark.parametrize("alg, match", [
    (sw.Rows(block_size=100), "power of two"),
    (sw.Rows(block_size=2048), "from 32 to 1024"),
    (sw.Rows(pack=0), "power of two"),
    (sw.Rows(items_per_thread=True), "power of two"),
    (sw.Tiled(tile=4), "tile"),
    (sw.Tiled(tile_group=3), "tile_group must be a power of two from 1 to 64"),
    (sw.Tiled(tile_group=128), "tile_group"),
    (sw.Rows(share_rows=1), "True or False"),
    (sw.Contiguous(keep_loads="yes"), "keep_loads must be True or False"),
    (sw.Tiled(stage=1), "stage must be True or False"),
])
def test_check_domain(alg, match):
    with pytest.raises(ValueError, match=match):
        resolve(alg)


def test_check_rejects_what_cannot_run_and_names_the_remedy():
    with pytest.raises(ValueError, match=r"Contiguous\(\) cannot run .* use Auto\(\) or Rows\(\)"):
        resolve(sw.Contiguous())
    with pytest.raises(ValueError, match="exceeds the fake limit of 512"):
        resolve(sw.Rows(block_size=1024))
    with pytest.raises(ValueError, match=r"at most pack=4"):
        resolve(sw.Rows(pack=8))
    with pytest.raises(ValueError, match="does not compute in float64"):
        resolve(sw.Auto(), dtypes=("float64",))
    with pytest.raises(TypeError, match="algorithm must be"):
        resolve("rows")


def test_a_tuning_never_makes_an_invalid_algorithm_run():
    greedy = dataclasses.replace(TUNING, block_size=4096, pack_bytes=64)
    with pytest.raises(ValueError, match="exceeds"):
        resolve(sw.Auto(), tuning=greedy)
    # the pack from the tuning is still capped by the plan
    assert resolve(sw.Rows(block_size=256), tuning=greedy).pack == 4
    # out-of-domain values from a tuning (tile_group 0 would divide by zero in the kernel)
    caps = dataclasses.replace(FAKE, modes=FAKE.modes + ("tiled",))
    for bad in (dataclasses.replace(TUNING, tile_group=0),
                dataclasses.replace(TUNING, modes=(("tiled", "items_per_thread", 3),))):
        with pytest.raises(ValueError, match="registered tuning"):
            resolve(sw.Auto(), TILED, caps, bad)
    assert resolve(sw.Tiled(tile_group=2), TILED, caps, dataclasses.replace(TUNING, tile_group=0)).tile_group == 2


def test_tuning_registry_most_specific_first():
    register_tuning("fake", "dev0", TUNING)
    special = dataclasses.replace(TUNING, block_size=64)
    register_tuning("fake", "dev0", special, dtype="float32")
    assert elementwise_tuning("fake", "dev0", "float32") is special
    assert elementwise_tuning("fake", "dev0", "int32") is TUNING
    assert elementwise_tuning("fake", "other") == ElementwiseTuning()
    assert "OneFlow" in ElementwiseTuning().source


def test_an_explicit_algorithm_that_cannot_run_writes_nothing():
    a, b = np.ones((64, 1024), np.float32), np.ones(1024, np.float32)
    out = np.full((64, 1024), 42, np.float32)
    with pytest.raises(ValueError, match="cannot run"):
        sw.remainder(a, b, out=out, algorithm=sw.Contiguous())
    assert np.all(out == 42)
    r = sw.remainder(a * 7, b * 2, algorithm=sw.General(block_size=64))
    assert np.all(r == 1)
    assert sw.explain(sw.remainder, a, b, algorithm=sw.General()).algorithm.mode == "general"


def test_share_rows_marks_row_vectors_repeated_only_when_asked():
    """A row vector (the divisor of a row broadcast or an outer product) is "repeated" in rows
    with share_rows, "dense" without; the CUDA tuning turns it on where it measured faster."""
    outer = plan((64, 1024), [((64, 1024), (1024, 1), 8, 0), ((64, 1), (1, 0), 8, 0),
                              ((1, 1024), (0, 1), 8, 0)])
    assert outer.layout("rows", share_rows=True).kinds == ("dense", "bcast", "repeated")
    assert outer.layout("rows").kinds == ("dense", "bcast", "dense")
    assert ROWS.layout("rows", share_rows=True).kinds == ("dense", "dense", "repeated")
    dtypes = ("float64", "int64", "int32", "float16", "bfloat16", "float32", "int8", "uint8", "bool")
    assert all(elementwise_tuning("cuda", None, d).share_rows for d in dtypes)
    # Auto() shares in outer products (where it measured faster), not beside a dense dividend
    sharing = dataclasses.replace(TUNING, share_rows=True)
    assert outer.outer() and not ROWS.outer()
    assert resolve(sw.Auto(), outer, tuning=sharing).share_rows is True
    assert resolve(sw.Auto(), ROWS, tuning=sharing).share_rows is False
    assert resolve(sw.Rows(share_rows=True), ROWS, tuning=TUNING).share_rows is True
    # share_all_rows: also beside a dense dividend (ROWS: a row vector and a dense operand)
    everywhere = dataclasses.replace(sharing, share_all_rows=True)
    assert resolve(sw.Auto(), ROWS, tuning=everywhere).share_rows is True
    assert resolve(sw.Auto(), COLUMN, tuning=everywhere).share_rows is False   # no row vector
    assert resolve(sw.Auto(), ROWS, tuning=dataclasses.replace(TUNING, share_all_rows=True)).share_rows is False
    assert [d for d in dtypes if elementwise_tuning("cuda", None, d).share_all_rows] == [
        "int64", "float16", "bfloat16", "int8", "uint8"]


def test_share_rows_on_the_host_reads_repeated_rows_as_dense():
    rng = np.random.default_rng(3)
    # rows of odd length start off the pack, each peels its own head: the row vector is then
    # read shifted, still once per batch of rows that peel alike (P apart: row_spacing)
    for cols, kind in ((204, "repeated"), (203, "repeated_shifted")):
        a, b = rng.uniform(-50, 50, (37, 1)), rng.uniform(1, 9, (1, cols))
        got = sw.remainder(a, b, algorithm=sw.Rows(share_rows=True))
        kinds = sw.explain(sw.remainder, a, b, algorithm=sw.Rows(share_rows=True)).kinds
        assert kinds == ("dense", "bcast", kind)
        np.testing.assert_array_equal(got, np.remainder(a, b))


def test_keep_loads_where_it_measured_faster():
    """The CUDA tuning reads dense operands under an L2 evict_last policy in contiguous
    and scalar kernels of every dtype, and float32 rows and short rows, where it measured
    faster; the host never reads the field,
    and an explicit value wins."""
    from stridewise.plan import MODES
    from stridewise.capabilities import CPU
    dtypes = ("float64", "int64", "int32", "float16", "bfloat16", "float32")
    on = {(m, d) for d in dtypes for m in MODES if elementwise_tuning("cuda", None, d).for_mode(m).keep_loads}
    assert on == {("contiguous", d) for d in dtypes} | {("scalar", d) for d in dtypes} \
        | {("rows", "float32"), ("short_rows", "float32")}
    keeping = dataclasses.replace(TUNING, keep_loads=True)
    assert resolve(sw.Auto(), FLAT, tuning=keeping).keep_loads is True
    assert resolve(sw.Contiguous(keep_loads=False), FLAT, tuning=keeping).keep_loads is False
    assert resolve(sw.Auto(), FLAT, CPU, keeping).keep_loads is None
    a, b = np.arange(-500, 500, dtype=np.float32) / 3, np.full(1000, -1.75, np.float32)
    got = sw.remainder(a, b, algorithm=sw.Contiguous(keep_loads=True))   # the host reads plainly
    assert np.array_equal(got, np.remainder(a, b))


def test_stage_where_it_measured_faster():
    """The CUDA tuning stages permuted views' tiles in shared memory in int32 only (the one
    dtype it sped up); the host never reads the field, an explicit value wins, and the tile
    width is compiled into the CUDA kernel only when it stages."""
    from stridewise.launch import pipeline as _ops
    from stridewise.ops import builtins as _builtins
    from stridewise.capabilities import CPU
    dtypes = ("float64", "int64", "int32", "float16", "bfloat16", "float32")
    assert [d for d in dtypes if elementwise_tuning("cuda", None, d).for_mode("tiled").stage] == ["int32"]
    caps = dataclasses.replace(FAKE, modes=FAKE.modes + ("tiled",))
    staging = dataclasses.replace(TUNING, stage=True)
    assert resolve(sw.Auto(), TILED, caps, staging).stage is True
    assert resolve(sw.Tiled(stage=False), TILED, caps, staging).stage is False
    assert resolve(sw.Auto(), TILED, CPU, staging).stage is None
    a = np.arange(-2048, 2048, dtype=np.int32).reshape(64, 64).T
    b = np.arange(1, 4097, dtype=np.int32).reshape(64, 64) % 13 - 6
    prepared = _ops._call(_builtins.OPS["remainder"], (a, b), None, algorithm=sw.Tiled(stage=True), dry=True)
    assert prepared.algorithm.stage is True and prepared.spec.tile == 0   # the host reads plainly
    assert np.array_equal(sw.remainder(a, b, algorithm=sw.Tiled(stage=True)), numpy_remainder(a, b))


def test_auto_shares_a_shifted_row_only_where_it_measured_faster():
    """A row vector off the output's packs (odd row lengths, a misaligned row) is shared by
    Auto only with share_shifted_rows (the CUDA float16 and bfloat16 tunings); an aligned one
    as before."""
    everywhere = dataclasses.replace(TUNING, share_rows=True, share_all_rows=True)
    odd = plan((64, 1021), [((64, 1021), (1021, 1), 4, 0), ((64, 1021), (1021, 1), 4, 0),
                            ((1021,), (1,), 4, 0)])
    moved = plan((64, 1024), [((64, 1024), (1024, 1), 4, 0), ((64, 1024), (1025, 1), 4, 4),
                              ((1024,), (1,), 4, 4)])
    for p in (odd, moved):
        assert p.layout("rows", 4, True).kinds[-1] == "repeated_shifted"
        assert resolve(sw.Auto(), p, tuning=everywhere).share_rows is False
        shifted = dataclasses.replace(everywhere, share_shifted_rows=True)
        assert resolve(sw.Auto(), p, tuning=shifted).share_rows is True
        assert resolve(sw.Rows(share_rows=True), p, tuning=everywhere).share_rows is True
    assert resolve(sw.Auto(), ROWS, tuning=everywhere).share_rows is True
    shares = [d for d in ("float16", "bfloat16", "float32", "float64", "int32", "int64")
              if elementwise_tuning("cuda", None, d).share_shifted_rows]
    assert shares == ["float16", "bfloat16"]


# -- Auto on the GPU's tuning: short rows and emptier tiles leave `rows` and `tiled` --
def _plan_of(a, b):
    """The plan of remainder on torch CPU stand-ins of a GPU call (a plan needs only shapes
    and strides; the output as torch lays it out)."""
    import torch
    out = torch.remainder(a, b)
    return plan(tuple(out.shape), [(tuple(x.shape), tuple(x.stride()), x.element_size(), 0)
                                   for x in (out, a, b)])


def cliff_layouts(torch, make=None):
    """Layouts user code makes whose rows or tiles are short (tools/cliffs.py found each one
    at 0.04-0.6x torch eager in `rows` or `tiled`), and what Auto must run them in on the GPU:
    (dtype, a, b, mode), each array from make(shape, dtype) (default ones on the CPU)."""
    make = make or (lambda shape, dt: torch.ones(shape, dtype=dt))
    t = lambda *s, dt=torch.float32: make(s, dt)   # noqa: E731
    return [
        # 4-element rows: a permuted view beside a stepped one
        ("float16", t(4, 64, 8, 4, dt=torch.float16).permute(2, 1, 0, 3),
         t(8, 64, 12, 4, dt=torch.float16)[:, :, ::3], "general"),
        # 17-element bfloat16 rows beside a broadcast (1, C, 1, W) operand; 61-element int32
        # rows keep `rows` (244 bytes)
        ("bfloat16", t(4, 35, 64, 17, dt=torch.bfloat16), t(1, 35, 1, 17, dt=torch.bfloat16), "general"),
        ("int32", t(4, 35, 64, 61, dt=torch.int32), t(1, 35, 1, 61, dt=torch.int32), "rows"),
        # a transpose whose tile dim has 4 elements (its rows read 528 bytes apart)
        ("float32", t(4, 33, 4096), t(4096, 33, 4).permute(2, 1, 0), "general"),
        # channels_last beside an NCHW copy: long rows read 32 bytes apart, the next row
        # (channel) one element on, but each row a block of its own, so no block shares a
        # sector: general (H100, x torch eager, General / Rows: 4 float64 channels 1.05 /
        # 1.03); an int64 transpose of that form 1.21 / 1.20. From 8 channels (16 for 8-byte
        # types) tiles fitted to the channels (tiled_min_rows): 16 float16 channels 1.47
        # against General 1.03 and Rows 0.48; 8 float16 channels, broadcast, 1.78 / 1.10 / 0.83
        ("float64", t(64, 4, 8, 2045, dt=torch.float64),
         t(64, 4, 8, 2045, dt=torch.float64).contiguous(memory_format=torch.channels_last), "general"),
        ("float16", t(35, 16, 29, 1024, dt=torch.float16),
         t(35, 16, 29, 1024, dt=torch.float16).contiguous(memory_format=torch.channels_last), "tiled"),
        ("float16", t(70, 8, 29, 1024, dt=torch.float16),
         t(1, 8, 29, 1024, dt=torch.float16).contiguous(memory_format=torch.channels_last), "tiled"),
        ("float64", t(35, 16, 29, 1024, dt=torch.float64),
         t(35, 16, 29, 1024, dt=torch.float64).contiguous(memory_format=torch.channels_last), "tiled"),
        ("int64", t(70, 8, 29, 1024, dt=torch.int64),
         t(1, 8, 29, 1024, dt=torch.int64).contiguous(memory_format=torch.channels_last), "general"),
        ("int64", t(16, 4, 1023, dt=torch.int64), t(16, 1023, 4, dt=torch.int64).permute(0, 2, 1), "general"),
        # ... unless the transposed operand is a broadcast that stays in cache: rows (a
        # 4 x 1023 int64 one over 16376 rows 2.00x torch eager against General's 1.05x)
        ("int64", t(64, 4, 1023, dt=torch.int64), t(1023, 4, dt=torch.int64).t(), "rows"),
        # 16-element int32 rows (64 bytes) beside a permuted operand: general (1.11x against
        # 0.65x); 32-element bfloat16 rows keep rows (1.25x against 1.02x)
        ("int32", t(13, 64, 16, dt=torch.int32), t(64, 13, 16, dt=torch.int32).permute(1, 0, 2), "general"),
        ("bfloat16", t(13, 64, 32, dt=torch.bfloat16), t(64, 13, 32, dt=torch.bfloat16).permute(1, 0, 2), "rows"),
        # ... 16 bytes apart: rows
        ("float32", t(64, 4, 8, 2045),
         t(64, 4, 8, 2045).contiguous(memory_format=torch.channels_last), "rows"),
        # rows of 4096 read from an F-ordered operand 8 KB apart
        ("bfloat16", t(4096, 64, 8, dt=torch.bfloat16)[:, :, ::2].permute(2, 1, 0),
         t(4, 64, 4096, dt=torch.bfloat16), "general"),
        # ... and with 19-element rows, general
        ("float64", t(64, 16, 19, dt=torch.float64),
         t(19, 16, 64, dt=torch.float64).permute(2, 1, 0)[:, :1].expand(64, 16, 19), "general"),
        # full tiles: the bench's permuted view, and long rows
        ("float32", t(2048, 1024).t(), t(1024, 2048), "tiled"),
        ("float16", t(1024, 2048, dt=torch.float16).t(), t(2048, 1024, dt=torch.float16), "tiled"),
        ("float32", t(64, 2048)[:, 1:], t(2047), "rows"),
        # transposes with odd rows take 1-element packs, and their tiles count as such: rows
        # of 127 uint8 fill 32-wide tiles (tiled 1.47x torch eager, Rows 0.63x, General
        # 1.06x at (127, 1024, 509)), rows of 63 int32 too (2.50x against General's 0.91x);
        # rows of 31 float32 are under rows_min_elements (tiled 0.93x, General 1.23x)
        ("uint8", t(33, 64, 127, dt=torch.uint8).permute(2, 1, 0),
         t(33, 127, 64, dt=torch.uint8).permute(1, 2, 0), "tiled"),
        ("int32", t(127, 65, 63, dt=torch.int32).permute(2, 0, 1),
         t(63, 65, 127, dt=torch.int32).permute(0, 2, 1), "tiled"),
        ("float32", t(32, 4096, 31).permute(1, 2, 0), t(31, 32, 4096).permute(2, 0, 1), "general"),
        # an outer product keeps `rows` at any row length (a unit is a column of rows)
        ("int8", t(64, 1, 64, dt=torch.int8), t(1, 64, 1, dt=torch.int8), "rows"),
    ]


def test_cuda_auto_leaves_short_rows_and_empty_tiles():
    from stridewise import modes
    torch = pytest.importorskip("torch")
    for dtype, a, b, want in cliff_layouts(torch):
        got = modes.auto(_plan_of(a, b), elementwise_tuning("cuda", None, dtype))
        assert got == want, (dtype, a.shape, a.stride(), b.shape, b.stride())


def test_the_cpu_keeps_its_modes_for_those_layouts():
    """The host's rows and tiles loops pay per row or tile differently; its tuning keeps
    them (rows_min_bytes 0: not measured there), but for transposes that its caches serve
    row by row (tiled_alias_bytes) or whose tiles would be under 75% full: those run rows."""
    from stridewise import modes
    torch = pytest.importorskip("torch")
    seen = set()
    for dtype, a, b, _ in cliff_layouts(torch):
        p = _plan_of(a, b)
        default, cpu = modes.auto(p), modes.auto(p, elementwise_tuning("cpu", None, dtype))
        assert cpu == default or (default, cpu) == ("tiled", "rows"), (dtype, a.shape, b.stride())
        seen.add((default, cpu))
    assert ("tiled", "rows") in seen and ("tiled", "tiled") in seen   # both sides of the rule


def test_the_cpu_runs_short_int64_rows_general():
    """On the host, int64 rows of up to 8 elements beside a sliced or transposed operand run
    general (rows' per-row set-up outweighs their arithmetic: 0.37-0.96x torch CPU against
    general's 0.60-2.22x); longer rows, and short rows of the other dtypes, keep rows. Results
    match NumPy either way."""
    rng = np.random.default_rng(8)
    for dt, length, want in ((np.int64, 2, "general"), (np.int64, 8, "general"),
                             (np.int64, 9, "rows"), (np.float32, 2, "rows"), (np.int32, 4, "rows")):
        a = rng.integers(-1000, 1000, (4096, length + 1)).astype(dt)[:, 1:]
        b = rng.integers(1, 100, (length, 4096)).astype(dt).T
        assert sw.explain(sw.remainder, a, b).mode == want, (dt, length)
        np.testing.assert_array_equal(sw.remainder(a, b), np.remainder(a, b))


def test_the_cpu_tiles_transposes_whose_steps_alias_in_its_caches():
    """On the host, a plain transpose runs tiled where the transposed step is a multiple of
    512 bytes (a power-of-two stride: a row's reads fall in a few cache sets) and rows
    elsewhere (the caches keep a row's lines for the next rows), and both are exact; rows of
    16 elements run rows at any step (their tiles would be mostly empty)."""
    for (r, c, dt) in ((2048, 2048, np.float32), (512, 8192, np.int32), (64, 256, np.float64),
                       (1023, 1025, np.float64), (2047, 2049, np.float32), (253, 4104, np.float16),
                       (4096, 16, np.float32)):
        rng = np.random.default_rng(r)
        a = rng.integers(1, 100, (r, c)).astype(dt)
        b = rng.integers(1, 100, (c, r)).astype(dt).T
        want = "tiled" if r * np.dtype(dt).itemsize % 512 == 0 and c > 16 else "rows"
        assert sw.explain(sw.remainder, a, b).mode == want, (r, c, dt)
        got = sw.remainder(a, b)
        assert got.dtype == dt and np.array_equal(got, np.remainder(a, b))
