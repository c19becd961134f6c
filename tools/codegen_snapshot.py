"""Dump what the pipeline generates for many problems, as JSON: a refactor that must not
change any kernel compares two dumps byte for byte.

Per problem (every mode, its operand kinds and knobs, seven dtypes, two built-in ops and two
user kernels): the generated source, the static slots, the layout, the resolved algorithm
and its origins, and on CUDA the launch configuration (grid, block, launch facts). The CUDA
dump needs no GPU: the device is an H200 stand-in (132 SMs, 2048 threads each).

    PYTHONPATH=src python tools/codegen_snapshot.py cpu before-cpu.json
    PYTHONPATH=src python tools/codegen_snapshot.py cuda before-cuda.json
    (change the code, dump again to after-*.json)
    cmp before-cpu.json after-cpu.json && cmp before-cuda.json after-cuda.json
"""
import json
import sys

import numpy as np

import stridewise as sw
from stridewise.launch import pipeline as _ops
from stridewise.backends import cuda

backend, path = sys.argv[1], sys.argv[2]
built = []
orig_build = _ops._build


def rec(*a, **k):
    p = orig_build(*a, **k)
    built.append(p)
    return p


_ops._build = rec
if backend == "cuda":
    _ops._arrays.resolve_backend = lambda views, names: (views[0].lib, ("cuda", 0))
    cuda.device_key = lambda device: ("NVIDIA H200", "sm_90")
    cuda._device_facts = lambda index: (132, 2048, 0)

DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "int8"]
rng = np.random.default_rng(0)


def arr(shape, dt):
    import ml_dtypes
    d = {"bfloat16": ml_dtypes.bfloat16}.get(dt, dt)
    return (rng.standard_normal(shape) * 10 + 1).astype(d)


def cases(dt):
    a = lambda *s: arr(s, dt)  # noqa: E731
    big = a(64, 520)
    yield "contiguous", (a(4096), a(4096)), None
    yield "contiguous/shifted", (a(1025)[1:], a(1024)), None
    yield "contiguous/misaligned", (a(1025)[1:], a(1025)[1:]), None
    yield "contiguous/knobs", (a(4096), a(4096)), sw.Contiguous(block_size=256, items_per_thread=2, pack=2)
    yield "scalar/device", (a(64, 256), a()), None
    yield "scalar/host", (a(64, 256), 3), None
    yield "rows", (a(64, 256), a(256)), None
    yield "rows/share", (a(64, 256), a(256)), sw.Rows(share_rows=True)
    yield "rows/outer", (a(64, 1), a(1, 256)), None
    yield "rows/outer3d", (a(4, 64, 1), a(1, 1, 256)), None
    yield "rows/column", (a(64, 256), a(64, 1)), None
    yield "rows/strided", (big[:, ::2], a(64, 1)), sw.Rows()
    yield "rows/heads", (a(64, 255), a(255)), sw.Rows()
    yield "rows/offsets", (big[1:, 3:259], a(256)), None
    yield "short_rows", (a(1000, 6), a(1, 6)), None
    yield "short_rows/3d", (a(701, 3, 5), a(3, 5)), None
    yield "short_rows/long", (a(33, 1030), a(1030)), sw.ShortRows()
    yield "tiled", (a(256, 64).T, a(64, 256)), None
    yield "tiled/3d", (a(4, 64, 32).transpose(0, 2, 1), a(4, 32, 64)), None
    yield "tiled/stage", (a(256, 64).T, a(64, 256)), sw.Tiled(stage=True)
    yield "tiled/knobs", (a(256, 64).T, a(64, 256)), sw.Tiled(tile=16, tile_group=2, block_size=256)
    yield "general", (big[:, ::2], a(64, 260).T.copy().T), None
    yield "general/forced", (a(64, 256), a(64, 256)), sw.General()
    yield "general/rows", (a(64, 256), a(256)), sw.General(items_per_thread=2)


def kcases():
    f = np.float32
    r = lambda *s: rng.standard_normal(s).astype(f)  # noqa: E731
    k = sw.ElementwiseKernel("T x, T y", "T s, T p", "s = x + y; p = x * y")
    ki = sw.ElementwiseKernel("T x, T y", "T z", "z = x * y + i")
    for kern in (k, ki):
        for name, args, alg in [("contiguous", (r(64, 256), r(64, 256)), None),
                                ("scalar", (r(64, 256), np.ones((), f) * 3), None),
                                ("rows", (r(64, 256), r(256)), None),
                                ("short_rows", (r(1000, 6), r(1, 6)), None),
                                ("tiled", (r(256, 64).T, r(64, 256)), None),
                                ("general", (r(64, 512)[:, ::2], r(64, 256)), sw.General())]:
            yield kern, name, args, alg


out = {}


def dump(label, prepared):
    cfg = prepared.config
    out[label] = {
        "source": prepared.source, "static": list(prepared.static), "mode": prepared.layout.mode,
        "kinds": list(prepared.layout.kinds), "pack": prepared.layout.pack, "aux": prepared.layout.aux,
        "periods": list(prepared.layout.periods), "alg": repr(prepared.algorithm),
        "origins": repr(prepared.origins), "plan_mode": prepared.plan.mode,
        "config": None if cfg is None else [cfg.grid, cfg.block, cfg.extra.hex(), list(cfg.geometry)],
    }


for dt in DTYPES:
    for name, args, alg in cases(dt):
        for op in ("remainder", "add"):
            built.clear()
            fn = getattr(sw, op)
            try:
                sw.explain(fn, *args, algorithm=alg)
            except Exception as e:   # noqa: BLE001
                out[f"{op}/{dt}/{name}"] = {"error": f"{type(e).__name__}: {e}"}
                continue
            dump(f"{op}/{dt}/{name}", built[-1])
for n, (kern, name, args, alg) in enumerate(kcases()):
    built.clear()
    sw.explain(kern, *args, algorithm=alg)
    dump(f"kernel{n // 6}/{name}", built[-1])
json.dump(out, open(path, "w"), indent=1, sort_keys=True)
print(backend, len(out), "cases;", sum("error" in v for v in out.values()), "errors;",
      "modes", sorted({v.get("mode") for v in out.values() if "mode" in v}))
