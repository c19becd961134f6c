"""Tune: measure this device's launch fields and write the tuning file later runs load.

`stridewise tune` times `remainder` in one case per mode (contiguous, a row broadcast, short
rows, a permuted view) and dtype, with the current tuning (`Auto()`) and with each candidate
setting of the mode's fields, all in the same interleaved rounds (bench.time_interleaved).
A candidate replaces the default only when it is faster by more than `threshold`; either way
the field is recorded with its figure, so `explain` shows it as this device's tuning. The
file goes where tuning.tuning_path says, keyed by the device's name and arch; a later
process loads it on its first call on that device. Explicit algorithm fields still win, and
`_resolve._check` still rejects any value an algorithm cannot take.
"""
from __future__ import annotations

import datetime
import json
import math
import os
import sys

from stridewise import tuning
from stridewise.launch import pipeline as _ops
from stridewise.bench import matrix as bench

__all__ = ["run", "CASES", "CUDA_CANDIDATES"]

# case of the bench matrix -> the mode it runs in (one case per mode: a tuning's mode entry
# applies to every case of that mode)
CASES = {"contiguous": "contiguous", "row": "rows", "short_rows": "short_rows", "permuted": "tiled"}
_GRID = [{"items_per_thread": i, "block_size": b} for i in (2, 4, 8) for b in (128, 256)]
CUDA_CANDIDATES = {
    "contiguous": _GRID, "rows": _GRID, "short_rows": _GRID,
    "tiled": [{"tile": t, "block_size": b} for t in (8, 16, 32) for b in (128, 256)],
}
QUICK_DTYPES = ("float32", "float16", "int64")
DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def run(device: str = "cuda", *, quick: bool = False, dtypes=None, cases=None, log2: int | None = None,
        candidates: dict | None = None, key: tuple | None = None, path: str | None = None,
        threshold: float = 0.015, progress: bool = True, command: str = "stridewise tune") -> dict:
    """Measure, write the tuning file, load it here, and return the document written.

    `key` overrides the device's (name, arch) (a GPU-less test tunes the CPU under a made-up
    key); `candidates` maps a mode to a list of field settings to try.
    """
    backend = "cuda" if device.startswith("cuda") else "cpu"
    index = int(device.split(":")[1]) if ":" in device else 0
    if key is None:
        if backend != "cuda":
            raise ValueError("stridewise tune measures a CUDA device; the CPU backend has no "
                             "launch fields to tune (run it on a machine with a GPU)")
        from stridewise.backends import cuda
        key = cuda.device_key(("cuda", index))
    candidates = CUDA_CANDIDATES if candidates is None else candidates
    dtypes = list(dtypes or (QUICK_DTYPES if quick else DTYPES))
    cases = list(cases or CASES)
    log2 = log2 or (bench.GPU_LOG2 - 1 if quick else bench.GPU_LOG2)
    _forget(backend, key)   # measure against the built-in tunings, not an older file
    lib, cells, entries = ("torch" if backend == "cuda" else "numpy"), [], []
    bar = _Bar(len(cases) * len(dtypes), progress)
    for case in cases:
        mode = CASES[case]
        for dtype in dtypes:
            bar.step(f"{case}/{dtype}")
            cell = _measure(case, mode, dtype, log2, lib, device, candidates.get(mode, ()), threshold)
            cells.append(cell)
            entries += _entries(cell, log2)
    bar.done()
    doc = {"backend": backend, "device": key[0], "arch": key[1],
           "date": datetime.date.today().isoformat(), "command": command,
           "log2": log2, "entries": entries, "cells": cells}
    path = path or tuning.tuning_path(backend, key)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)
    _forget(backend, key)
    tuning.load_tuning_file(backend, key, path)
    doc["path"] = path
    return doc


def _measure(case, mode, dtype, log2, lib, device, settings, threshold) -> dict:
    """One cell: GB/s of Auto() and of each candidate, in the same interleaved rounds."""
    import stridewise as sw

    a, b, out = bench._make_case(case, dtype, log2, lib, device)
    nbytes = bench.compulsory_bytes(a, b, out)
    default = sw.explain(sw.remainder, a, b, out=out).algorithm
    cls = type(default)
    fns, tried = {"default": lambda: sw.remainder(a, b, out=out)}, {}
    for fields in settings:
        fields = {k: v for k, v in fields.items() if hasattr(default, k)}
        if not fields or all(getattr(default, k) == v for k, v in fields.items()):
            continue
        alg = cls(**fields)
        name = " ".join(f"{k}={v}" for k, v in fields.items())
        tried[name] = fields
        fns[name] = lambda alg=alg: sw.remainder(a, b, out=out, algorithm=alg)
    res = bench.time_interleaved(fns, "cuda" if device.startswith("cuda") else "cpu", nbytes)
    base = res["default"].get("gbps", 0.0)
    ok = {n: r["gbps"] for n, r in res.items() if n != "default" and "gbps" in r}
    best = max(ok, key=ok.get, default=None)
    chosen = best if best is not None and ok[best] > base * (1 + threshold) else None
    return {"case": case, "mode": mode, "dtype": dtype, "default": _fields(default, settings),
            "default_gbps": base, "gbps": ok, "errors": {n: r["error"] for n, r in res.items()
                                                          if "error" in r},
            "chosen": tried.get(chosen, {}), "chosen_gbps": ok[chosen] if chosen else base,
            "itemsize": max(getattr(out, "itemsize", 0) or out.element_size(), 1)}


def _fields(alg, settings) -> dict:
    names = {k for s in settings for k in s if hasattr(alg, k)}
    return {k: getattr(alg, k) for k in sorted(names)}


def _entries(cell: dict, log2: int) -> list:
    """The cell's tuning entries: every measured field, the chosen value or the default."""
    out = []
    gain = cell["chosen_gbps"] / cell["default_gbps"] - 1 if cell["default_gbps"] else 0.0
    for name, default in cell["default"].items():
        value = cell["chosen"].get(name, default)
        if cell["chosen"]:
            figure = (f"{cell['case']} at 2^{log2}: {cell['chosen_gbps']:.0f} GB/s against "
                      f"{cell['default_gbps']:.0f} with the defaults ({gain:+.1%})")
        else:
            others = max(cell["gbps"].values(), default=0.0)
            figure = (f"{cell['case']} at 2^{log2}: the default kept, {cell['default_gbps']:.0f} "
                      f"GB/s (best other setting {others:.0f})")
        field = name
        if name == "pack":   # tunings hold bytes per pack; the pack follows from the dtype
            field, value = "pack_bytes", value * cell["itemsize"]
        out.append({"dtype": cell["dtype"], "mode": cell["mode"], "field": field,
                    "value": value, "figure": figure})
    return out


def _forget(backend: str, key: tuple) -> None:
    """Drop this device's registrations and the calls prepared with them."""
    for k in [k for k in tuning._REGISTRY if k[0] == backend and k[1] == key[0]]:
        del tuning._REGISTRY[k]
    tuning._LOADED.add((backend, tuple(key)))
    _ops._MEMO.clear()
    _ops._CALLS.clear()


def summary(doc: dict) -> str:
    """The gains over the defaults, a line per cell, and where the file went."""
    lines = [f"{doc['device']} ({doc['arch']}), remainder at 2^{doc['log2']} outputs:",
             f"{'case':<12}{'dtype':<10}{'default GB/s':>13}{'tuned GB/s':>12}{'gain':>8}  setting"]
    ratios = []
    for c in doc["cells"]:
        ratio = c["chosen_gbps"] / c["default_gbps"] if c["default_gbps"] else 1.0
        ratios.append(ratio)
        setting = " ".join(f"{k}={v}" for k, v in c["chosen"].items()) or "defaults kept"
        lines.append(f"{c['case']:<12}{c['dtype']:<10}{c['default_gbps']:>13.0f}"
                     f"{c['chosen_gbps']:>12.0f}{ratio - 1:>+8.1%}  {setting}")
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else 1.0
    changed = sum(1 for c in doc["cells"] if c["chosen"])
    lines.append(f"{changed} of {len(ratios)} cells changed; geometric mean gain {geo - 1:+.1%}")
    lines.append(f"wrote {doc['path']} ({len(doc['entries'])} values); later runs on this device "
                 "load it, and `stridewise explain` names each value's origin")
    return "\n".join(lines)


class _Bar:
    """A text progress bar on stderr (one line per step where stderr is not a terminal)."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.n, self.enabled = total, 0, enabled
        self.tty = sys.stderr.isatty()

    def step(self, label: str) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * self.n // max(self.total, 1)
        text = f"[{'#' * filled}{'.' * (width - filled)}] {self.n}/{self.total} {label}"
        print(("\r" + text.ljust(70)) if self.tty else text, end="" if self.tty else "\n",
              file=sys.stderr, flush=True)
        self.n += 1

    def done(self) -> None:
        if self.enabled:
            text = f"[{'#' * 30}] {self.total}/{self.total} done"
            print(("\r" + text.ljust(70) + "\n") if self.tty else text, end="" if self.tty else "\n",
                  file=sys.stderr, flush=True)

