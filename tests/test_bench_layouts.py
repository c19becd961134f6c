"""The layouts matrix (stridewise bench --layouts): every cell builds the layout it names,
and stridewise matches the owning library's own op in values and strides before timing."""
import numpy as np
import pytest

from stridewise.bench import layouts as bench_layouts


@pytest.mark.parametrize("case", list(bench_layouts.LAYOUTS))
def test_cpu_cells_verify_values_and_strides(case, monkeypatch):
    monkeypatch.setitem(bench_layouts.bench._ROUNDS, "cpu", (0.01, 1, 1))
    cell = bench_layouts.run_cell(case, "float32", "cpu", 12, {})
    assert cell["verified"] and cell["strides_match"], cell
    assert cell["strides"] == cell["ref_strides"]
    assert "time_s" in cell["impls"]["stridewise"] and "time_s" in cell["impls"]["numpy"]


def test_cells_build_the_layouts_they_name():
    new = bench_layouts._new("numpy", "float32", "cpu", 0)
    R, C = 64, 128
    layouts = {k: v[1](new, R, C) for k, v in bench_layouts.LAYOUTS.items()}
    a, _ = layouts["bias_channels_last"]
    assert a.strides[1] == 4 and a.shape[1] == 64                    # C innermost
    a, b = layouts["rgb_channels_last"]
    assert a.strides[1] == 4 and a.shape[1] == 3 and b.shape == (1, 3, 1, 1)
    a, b = layouts["beside_channels_last"]
    assert a.flags.c_contiguous and a.shape == b.shape and a.shape[1] == 16
    assert b.strides[1] == 4 and not b.flags.c_contiguous               # C innermost in b alone
    a, b = layouts["misaligned"]
    assert a.ctypes.data % 16 and b.ctypes.data % 16                   # 4 bytes off
    assert layouts["odd_rows"][0].shape[1] % 2 == 1
    assert layouts["negative_steps"][0].strides[1] < 0
    assert layouts["inner_step3"][0].strides[1] == 12
    assert layouts["both_transposed"][0].flags.f_contiguous
    assert [x.dtype for x in layouts["f16_with_f32"]] == [np.float16, np.float32]
    assert bench_layouts._lib_for("numpy-views", "cuda") == "cupy"
    assert bench_layouts._lib_for("cpu", "cuda") is None
    # a step-3 float32 read moves 12 of every 12 bytes it spans: the sector model charges it
    assert bench_layouts._moved_bytes(layouts["inner_step3"][0]) == R * C * 12


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_gpu_cells_count_where_torch_compile_differs_from_eager(dtype, monkeypatch):
    """A layouts cell on the GPU counts torch.compile's results that differ from torch eager
    (bfloat16's compiled remainder is inexact on some of them), as the first matrix does, so
    its table shows when a faster anchor is an inexact one."""
    import torch
    monkeypatch.setitem(bench_layouts.bench._ROUNDS, "cuda", (0.01, 1, 1))
    cell = bench_layouts.run_cell("bias_channels_last", dtype, "cuda", 16, {"copy": 1.0})
    assert cell["verified"], cell
    a, b = bench_layouts.LAYOUTS["bias_channels_last"][1](
        bench_layouts._new("torch", dtype, "cuda", __import__("zlib").crc32(f"bias_channels_last/{dtype}".encode())),
        *bench_layouts.bench._shape_rc(16))
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, y: torch.remainder(x, y), dynamic=False)(a, b)
    eager = torch.remainder(a, b)
    ints = {2: torch.int16, 4: torch.int32}[eager.element_size()]
    compiled, eager = compiled.contiguous(), eager.contiguous()
    expected = int(((compiled.view(ints) != eager.view(ints)) & ~(compiled.isnan() & eager.isnan())).sum())
    counts = dict(cell["differs_from_eager"])
    assert counts.pop("torch.compile") == expected
    if dtype != "bfloat16":   # CuPy has no bfloat16 remainder: no anchor there, no count
        cupy = pytest.importorskip("cupy")
        c = torch.from_dlpack(cupy.remainder(cupy.from_dlpack(a), cupy.from_dlpack(b))).contiguous()
        assert counts.pop("cupy") == int(((c.view(ints) != eager.view(ints)) & ~(c.isnan() & eager.isnan())).sum())
    assert not counts
    header, rows = bench_layouts.bench.table_rows({"meta": {"device": "cuda"}, "cells": [cell]})
    assert header[-1] == "torch.compile ≠ eager" and rows[0][-1] == str(expected)
