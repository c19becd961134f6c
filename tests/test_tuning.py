"""One tuning home, keyed by device: lookup order, the measurement behind every value, the
kernel tables the CUDA backend builds with, and `stridewise tune`'s file. All CPU-runnable:
a made-up device key stands in for a GPU."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stridewise as sw
from stridewise import _tune, tuning
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise import resolve as _resolve
from stridewise.plan import MODES, plan
from stridewise.backends import cpu, cuda
from stridewise.capabilities import CUDA
from stridewise.tuning import ElementwiseTuning, KernelTables, elementwise_tuning, register_tuning

FAKE = ("Fake CPU 9000", "fake0")
SRC = Path(sw.__file__).parent.parent


@pytest.fixture
def fake_device(tmp_path, monkeypatch):
    """The CPU backend seen as device FAKE, with its own tuning directory; every trace of the
    fake device's tunings and the calls prepared with them is dropped afterwards."""
    monkeypatch.setenv("STRIDEWISE_TUNING_DIR", str(tmp_path))
    monkeypatch.setattr(cpu, "device_key", lambda device: FAKE)
    _forget()
    yield tmp_path
    _forget()


def _forget():
    for k in [k for k in tuning._REGISTRY if k[1] in FAKE or k[0] == "fakegpu"]:
        del tuning._REGISTRY[k]
    tuning._LOADED.discard(("cpu", FAKE))
    _ops._MEMO.clear()
    _ops._CALLS.clear()


def _write(entries, date="2026-12-01"):
    path = tuning.tuning_path("cpu", FAKE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"backend": "cpu", "device": FAKE[0], "arch": FAKE[1], "date": date,
                   "command": "test", "entries": entries}, f)
    _forget()   # as a new process would: the file is read on the device's first call
    return path


def _origins(*args, **kw):
    return {name: (value, origin) for name, value, origin in sw.explain(sw.remainder, *args, **kw).origins}


# -- lookup -----------------------------------------------------------------------------
def test_a_device_name_wins_over_its_arch_over_the_backend_default():
    base, by_arch, by_name = ElementwiseTuning(block_size=64), ElementwiseTuning(block_size=128), \
        ElementwiseTuning(block_size=512)
    register_tuning("fakegpu", None, base)
    register_tuning("fakegpu", "sm_99", by_arch)
    register_tuning("fakegpu", "Fake GPU", by_name)
    register_tuning("fakegpu", "Fake GPU", dataclasses.replace(by_name, tile=16), "int64")
    try:
        assert elementwise_tuning("fakegpu", ("Fake GPU", "sm_99"), "float32") is by_name
        assert elementwise_tuning("fakegpu", ("Fake GPU", "sm_99"), "int64").tile == 16
        assert elementwise_tuning("fakegpu", ("Other GPU", "sm_99"), "int64") is by_arch
        assert elementwise_tuning("fakegpu", ("Other GPU", "sm_80")) is base
        assert tuning.tuning_device("fakegpu", ("Other GPU", "sm_99")) == "sm_99"
        assert tuning.tuning_device("fakegpu", ("Other GPU", "sm_80")) is None
    finally:
        _forget()


# -- every value carries its measurement -------------------------------------------------
@pytest.mark.parametrize("dtype", [None, "float16", "bfloat16", "float32", "float64", "int32", "int64"])
def test_every_cuda_value_off_the_oneflow_defaults_carries_its_measurement(dtype):
    t, plain = elementwise_tuning("cuda", None, dtype), ElementwiseTuning()
    for mode in MODES:
        tm = t.for_mode(mode)
        for f in tuning._TUNABLE:
            if getattr(tm, f) != getattr(plain, f):
                m = tm.measurement(mode, f)
                assert m is not None, (dtype, mode, f)
                assert m.device and m.date and m.command and m.figure, (dtype, mode, f, m)
    evidence = dict(t.evidence)
    for table in ("max_registers", "batched", "tile_rows", "loads", "fast_div"):
        assert getattr(t.kernels, table) and f"kernels.{table}" in evidence
    assert "kernels.row_units" in evidence


def test_the_cuda_backend_builds_with_the_tunings_kernel_tables():
    """backends/cuda.py keeps no table of its own: the register cap and template arguments
    of a generated entry point come from the KernelTables it is given, else the default's."""
    assert not any(hasattr(cuda, n) for n in ("_MAX_REGISTERS", "_BATCHED", "_TILE_ROWS",
                                                 "_FLAT_LOADS", "_ROW_UNIT_PACKS"))
    a = np.ones((4096, 6), np.int64)
    spec = _ops._call(_builtins.OPS["remainder"], (a, a[0]), None, None, None, dry=True).spec
    assert spec.mode == "short_rows"
    default = cuda.entry_point(spec)
    assert "__maxnreg__(64)" in default and "short_rows_kernel<Op, true>" in default
    mine = KernelTables(max_registers={"short_rows": 40})
    custom = cuda.entry_point(spec, mine)
    assert "__maxnreg__(40)" in custom and "short_rows_kernel<Op>" in custom



def test_rows_packs_in_flight_come_from_the_loads_table():
    """The rows kernel is compiled for the loads table's packs in flight (a repeated or
    broadcast operand's entry before its dtype's), and an outer product's work units cover as many rows as it
    has packs in flight (kernels.cuh rows_kernel R = L)."""
    from stridewise.modes import rows

    def prepared(a, b, share=False):
        return _ops._call(_builtins.OPS["remainder"], (a, b), algorithm=sw.Rows(share_rows=share), dry=True)

    f16 = prepared(np.ones((64, 256), np.float16), np.ones(256, np.float16)).spec
    outer = prepared(np.ones((64, 1), np.float32), np.ones((1, 256), np.float32), share=True)
    assert f16.mode == outer.spec.mode == "rows" and outer.spec.kinds[-1] == "repeated"
    assert "rows_kernel<Op>(" in cuda.entry_point(f16, KernelTables())
    mine = KernelTables(loads={("rows", "float16"): 2, "rows": 2, ("rows", "float32", "repeated"): 4},
                        batched={("rows", "float16"): True})
    assert "rows_kernel<Op, true, 2>(" in cuda.entry_point(f16, mine)
    assert "rows_kernel<Op>(" in cuda.entry_point(outer.spec, mine)
    assert "rows_kernel<Op, false, 2>(" in cuda.entry_point(outer.spec, KernelTables(loads={"rows": 2}))
    column = prepared(np.ones((64, 256), np.float16), np.ones((64, 1), np.float16)).spec
    assert "bcast" in column.kinds
    assert "rows_kernel<Op>(" in cuda.entry_point(column, KernelTables(
        loads={("rows", "float16"): 2, ("rows", "float16", "bcast"): 4}))
    alg = sw.Rows(block_size=128, items_per_thread=2)
    *_, facts4 = rows._grid(outer.spec, outer.plan, alg, KernelTables())
    *_, facts2 = rows._grid(outer.spec, outer.plan, alg, KernelTables(loads={"rows": 2}))
    assert facts4[2] == 16 and facts2[2] == 32     # units in all: row sets of 4 rows, then 2


# -- explain names each field's origin ---------------------------------------------------
def test_explain_names_caller_tuning_and_default(fake_device):
    a = np.arange(4096, dtype=np.float32).reshape(64, 64)
    assert _origins(a, a)["pack"] == (4, "default")
    _write([{"dtype": "float32", "mode": "contiguous", "field": "pack_bytes", "value": 8,
             "figure": "contiguous at 2^12: 9 GB/s against 8"}])
    value, origin = _origins(a, a)["pack"]
    assert value == 2 and origin.startswith(f"tuning for {FAKE[0]}") and "9 GB/s against 8" in origin
    assert _origins(a, a, algorithm=sw.Contiguous(pack=1))["pack"] == (1, "caller")
    text = str(sw.explain(sw.remainder, a, a))
    assert f"tuning for {FAKE[0]}" in text


# -- explicit fields win; no tuning makes an invalid algorithm run -----------------------
def test_explicit_fields_win_over_a_device_tuning(fake_device):
    _write([{"dtype": "float32", "mode": "contiguous", "field": "pack_bytes", "value": 8,
             "figure": "f"}])
    a = np.linspace(-50, 50, 4096, dtype=np.float32).reshape(64, 64)
    b = np.full((64, 64), 7.25, np.float32)
    want = np.remainder(a, b)
    assert sw.explain(sw.remainder, a, b).algorithm.pack == 2
    assert sw.explain(sw.remainder, a, b, algorithm=sw.Contiguous(pack=4)).algorithm.pack == 4
    for alg in (None, sw.Contiguous(pack=4), sw.Contiguous(pack=1)):
        got = sw.remainder(a, b, algorithm=alg)
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_a_tuning_cannot_push_a_cpu_algorithm_past_what_the_operands_allow(fake_device):
    """A pack of 256 bytes from a tuning resolves to the widest pack the plan allows (16
    bytes), and an unknown field in the file is skipped, never guessed."""
    path = _write([{"dtype": "float32", "mode": "contiguous", "field": "pack_bytes", "value": 256,
                    "figure": "f"},
                   {"dtype": "float32", "mode": "contiguous", "field": "no_such_field", "value": 1,
                    "figure": "skipped"}])
    assert tuning.load_tuning_file("cpu", FAKE, path) == 1
    a = np.linspace(-30, 30, 4096, dtype=np.float32).reshape(64, 64)
    assert sw.explain(sw.remainder, a, a[::-1] + 40).algorithm.pack == 4
    got = sw.remainder(a, a[::-1] + 40)
    assert np.array_equal(got.view(np.uint32), np.remainder(a, a[::-1] + 40).view(np.uint32))


def test_no_cuda_tuning_makes_an_invalid_algorithm_run():
    """Pure resolve with the CUDA capabilities: a device tuning's block of 2048 (and tile of
    7) is refused with an error naming the tuning, and an explicit field beside it wins."""
    rows = plan((64, 1024), [((64, 1024), (1024, 1), 4, 0), ((64, 1024), (1024, 1), 4, 0),
                             ((1024,), (1,), 4, 0)])
    from stridewise.operands.dtypes import DTYPES
    register_tuning("fakegpu", "Fake GPU", ElementwiseTuning(block_size=2048, tile=7))
    try:
        t = elementwise_tuning("fakegpu", ("Fake GPU", "sm_99"))
        with pytest.raises(ValueError, match="exceeds the cuda limit of 1024"):
            _resolve._resolve_elementwise(sw.Auto(), rows, t, CUDA, [DTYPES["float32"]])
        alg = _resolve._resolve_elementwise(sw.Rows(block_size=256), rows, t, CUDA, [DTYPES["float32"]])
        assert alg.block_size == 256
        tiled = plan((64, 64), [((64, 64), (64, 1), 4, 0), ((64, 64), (1, 64), 4, 0)])
        with pytest.raises(ValueError, match="registered tuning"):
            _resolve._resolve_elementwise(sw.Tiled(block_size=128), tiled, t, CUDA, [DTYPES["float32"]])
        alg = _resolve._resolve_elementwise(sw.Tiled(block_size=128, tile=16), tiled, t, CUDA,
                                            [DTYPES["float32"]])
        assert (alg.block_size, alg.tile) == (128, 16)
    finally:
        _forget()


# -- stridewise tune ---------------------------------------------------------------------
def test_tune_writes_a_file_that_a_later_process_loads(fake_device):
    doc = _tune.run("cpu", key=FAKE, cases=["contiguous"], dtypes=["float32"], log2=12,
                    candidates={"contiguous": [{"pack": 2}]}, progress=False)
    path = Path(doc["path"])
    assert path.parent == fake_device and path.is_file()
    entry, = json.loads(path.read_text())["entries"]
    assert (entry["dtype"], entry["mode"], entry["field"]) == ("float32", "contiguous", "pack_bytes")
    assert entry["value"] in (8, 16) and entry["figure"]
    cell, = doc["cells"]
    assert set(cell["gbps"]) == {"pack=2"} and cell["default"] == {"pack": 4}
    assert "geometric mean gain" in _tune.summary(doc)
    code = ("import numpy as np, stridewise as sw\n"
            "from stridewise.backends import cpu\n"
            f"cpu.device_key = lambda device: {FAKE!r}\n"
            "a = np.linspace(-9, 9, 4096, dtype=np.float32).reshape(64, 64)\n"
            "e = sw.explain(sw.remainder, a, a + 20)\n"
            "print(e.algorithm.pack, [o for n, v, o in e.origins if n == 'pack'][0])\n"
            "r = sw.remainder(a, a + 20)\n"
            "assert np.array_equal(r.view(np.uint32), np.remainder(a, a + 20).view(np.uint32))\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    pack, origin = out.stdout.strip().split(" ", 1)
    assert int(pack) == entry["value"] // 4 and origin.startswith(f"tuning for {FAKE[0]}")


def test_tune_refuses_the_cpu_without_a_device_key(capsys):
    from stridewise import cli
    with pytest.raises(ValueError, match="CUDA device"):
        _tune.run("cpu")
    assert cli.main(["tune", "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "CUDA device" in err
