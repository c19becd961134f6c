"""The bench and the command line, end to end on the CPU at tiny sizes (a few seconds)."""
import json

import numpy as np
import pytest

import stridewise
from stridewise import cli
from stridewise.bench import matrix as bench
from stridewise.bench import values as bench_values

TINY = dict(device="cpu", log2=10, extras=False, progress=False)


def test_quick_bench_verifies_and_times_every_cell():
    doc = bench.run(quick=True, **TINY)
    # narrow data in every case; the quick distributions on the contiguous case
    want = {(c, d, "narrow") for c in bench.QUICK_CASES for d in bench.QUICK_DTYPES}
    want |= {("contiguous", d, v) for d in bench.QUICK_DTYPES for v in bench_values.QUICK_VALUES
             if bench_values.applies(v, d)}
    assert {(c["case"], c["dtype"], c["values"]) for c in doc["cells"]} == want
    assert len(doc["cells"]) == len(want)
    for cell in doc["cells"]:
        assert cell["verified"], cell
        assert cell["impls"]["stridewise"]["time_s"] > 0
        assert "numpy" in cell["speedup"]
    header, rows = bench.table_rows(doc)
    assert len(rows) == len(doc["cells"]) and "vs numpy" in header


def test_wrong_kernel_posts_no_number(monkeypatch):
    def wrong(a, b, out=None):
        out[...] = 1
        return out
    monkeypatch.setattr(stridewise, "remainder", wrong)
    doc = bench.run(cases=["contiguous"], dtypes=["float32"], **TINY)
    cell = doc["cells"][0]
    assert cell["verified"] is False
    assert "time_s" not in cell["impls"]["stridewise"]
    assert "time_s" in cell["impls"]["numpy"]


def test_interleaved_rounds_take_each_callable_once_and_record_failures():
    calls = []
    fns = {"a": lambda: calls.append("a"),
           "b": [lambda: calls.append("b0"), lambda: calls.append("b1")],   # buffer sets cycled
           "bad": lambda: 1 / 0}
    res = bench.time_interleaved(fns, "cpu")
    assert res["bad"]["error"].startswith("ZeroDivisionError")
    assert res["a"]["time_s"] > 0 and res["b"]["time_s"] > 0
    timed = calls[2:]                                  # after one warm-up call of each
    rounds = [timed[i:i + 2] for i in range(0, len(timed), 2)]
    assert 5 <= len(rounds) <= 15 and len(timed) == 2 * len(rounds)
    assert all(sorted(c[0] for c in r) == ["a", "b"] for r in rounds)
    assert [r[0][0] for r in rounds[:4]] == ["a", "b", "a", "b"]      # the order rotates
    assert [c for c in calls if c[0] == "b"][:4] == ["b0", "b1", "b0", "b1"]
    res = bench.time_interleaved({"bad": lambda: 1 / 0, "worse": lambda: [][0]}, "cpu")
    assert {k: r["error"].split(":")[0] for k, r in res.items()} == {
        "bad": "ZeroDivisionError", "worse": "IndexError"}               # none left to time


@pytest.mark.gpu
def test_interleaved_rounds_time_cuda_batches():
    import torch
    x = torch.ones(1 << 20, device="cuda")
    res = bench.time_interleaved({"fill": lambda: x.fill_(2.0), "add": lambda: x.add_(1.0)}, "cuda")
    # a 4 MiB write takes microseconds, not the host's milliseconds
    assert all(0 < r["time_s"] < 1e-3 for r in res.values()), res


def test_cli_bench_writes_valid_json(tmp_path):
    path = tmp_path / "bench.json"
    rc = cli.main(["bench", "--device", "cpu", "--log2", "10", "--cases", "contiguous,permuted",
                   "--dtypes", "float32,int64", "--no-extras", "--no-progress", "--json", str(path)])
    assert rc == 0
    doc = json.loads(path.read_text())
    assert {c["case"] for c in doc["cells"]} == {"contiguous", "permuted"}
    assert all(c["verified"] for c in doc["cells"])
    assert doc["meta"]["device"] == "cpu" and doc["meta"]["commit"]


def test_cli_bench_values_selects_distributions(tmp_path):
    """--values picks the distributions; each cell is verified, and the table names them."""
    path = tmp_path / "bench.json"
    rc = cli.main(["bench", "--device", "cpu", "--log2", "10", "--cases", "contiguous,outer",
                   "--dtypes", "float32,int64", "--values", "subnormal_divisors,specials,large_divisors",
                   "--no-extras", "--no-progress", "--json", str(path)])
    assert rc == 0
    doc = json.loads(path.read_text())
    got = {(c["case"], c["dtype"], c["values"]) for c in doc["cells"]}
    assert got == {(case, d, v) for case in ("contiguous", "outer")
                   for d, v in [("float32", "subnormal_divisors"), ("float32", "specials"),
                                ("int64", "specials"), ("int64", "large_divisors")]}
    assert all(c["verified"] for c in doc["cells"])
    header, rows = bench.table_rows(doc)
    assert header[:3] == ["case", "dtype", "values"] and {r[2] for r in rows} == {v for _, _, v in got}
    with pytest.raises(ValueError, match="choose from"):
        bench.run(values=["gaussian"], **TINY)


def test_default_run_puts_distributions_on_the_value_cases():
    doc = bench.run(dtypes=["int32"], log2=8, device="cpu", extras=False, progress=False)
    cells = {(c["case"], c["values"]) for c in doc["cells"]}
    assert {("permuted", "narrow"), ("contiguous", "large_divisors"), ("outer", "negative_divisors")} <= cells
    assert ("permuted", "large_divisors") not in cells and ("contiguous", "wide") not in cells


def test_cli_bench_plots_the_matrix_and_the_size_sweep(tmp_path):
    png = tmp_path / "bench.png"
    rc = cli.main(["bench", "--device", "cpu", "--log2", "10", "--cases", "row", "--dtypes", "float32",
                   "--no-extras", "--no-progress", "--sweep", "--sweep-max", "12", "--plot", str(png)])
    assert rc == 0
    for path in (png, tmp_path / "bench-sweep.png"):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path


def test_cli_rejects_unknown_case():
    with pytest.raises(ValueError, match="unknown case"):
        bench.run(cases=["nope"], **TINY)


def test_same_bits_sees_signed_zeros_and_matches_nans():
    x = np.array([0.0, np.nan, 1.0], np.float32)
    assert bench.same_bits(x, np.array([0.0, -np.nan, 1.0], np.float32))
    assert not bench.same_bits(x, np.array([-0.0, np.nan, 1.0], np.float32))


def test_cli_explain_and_info(capsys):
    assert cli.main(["explain", "64x32", "32", "--dtype", "float16", "--no-source"]) == 0
    out = capsys.readouterr().out
    assert "rows" in out and "float16" in out
    assert cli.main(["explain", "256x128.T", "128x256", "--no-source"]) == 0   # a 512-byte step
    assert "tiled" in capsys.readouterr().out
    assert cli.main(["info"]) == 0
    assert "cache dir" in capsys.readouterr().out


def test_gpu_table_shows_how_many_torch_compile_results_differ_from_eager():
    """The bench counts torch.compile's results that differ from eager bit for bit (a NaN
    matches any NaN) and the table shows that count beside the times, so a faster inexact
    anchor is visible as such."""
    torch = pytest.importorskip("torch")
    eager = torch.tensor([1.0, -0.0, float("nan"), 3.0, 2.5])
    other = torch.tensor([1.0, 0.0, float("nan"), 3.0000002, 2.5])
    assert bench.differing(other, eager) == 2 and bench.differing(eager, eager) == 0
    cell = {"case": "contiguous", "dtype": "float32", "values": "wide", "verified": True, "ceiling": "copy",
            "impls": {"stridewise": {"time_s": 3.7e-4, "gbps": 4350.0, "pct_ceiling": 101.0},
                      "torch eager": {"time_s": 3.8e-4}, "torch.compile": {"time_s": 2.0e-4}},
            "speedup": {"torch eager": 1.03, "torch.compile": 0.54},
            "differs_from_eager": {"torch.compile": bench.differing(other, eager)}}
    header, rows = bench.table_rows({"meta": {"device": "cuda"}, "cells": [cell]})
    assert header[-1] == "torch.compile ≠ eager" and rows[0][-1] == "2"


def test_small_dtypes_are_selectable_and_verified():
    """--dtypes int8,uint8,bool: cells outside the default matrix, each verified against the
    library (remainder; bool: bitwise_xor, which both libraries define on bool), with every
    anchor timed (no zero divisor in 8-bit data: torch would raise on the CPU)."""
    doc = bench.run(cases=["contiguous", "row", "outer", "python_scalar"],
                    dtypes=["int8", "uint8", "bool"], values=["narrow", "specials"], **TINY)
    cells = doc["cells"]
    assert {(c["dtype"], c["op"]) for c in cells} == {
        ("int8", "remainder"), ("uint8", "remainder"), ("bool", "bitwise_xor")}
    assert len(cells) == 4 * (2 + 2 + 1)     # bool: the narrow draw only
    for c in cells:
        assert c["verified"], c
        assert {"stridewise", "numpy", "torch"} <= set(c["impls"]), c
        assert all("time_s" in r for r in c["impls"].values()), c
    assert set(bench.DTYPES).isdisjoint(bench.EXTRA_DTYPES)
