"""Command line: `stridewise bench`, `stridewise explain` and `stridewise info`."""
from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


# ---------------------------------------------------------------- bench

def _bench(args) -> int:
    from . import bench

    if args.layouts:
        from . import bench_layouts

        doc = bench_layouts.run(device=args.device, cases=args.cases, dtypes=args.dtypes,
                                log2=args.log2, progress=not args.no_progress)
    else:
        doc = bench.run(device=args.device, cases=args.cases, dtypes=args.dtypes, quick=args.quick,
                        log2=args.log2, extras=not args.no_extras, do_sweep=args.sweep,
                        sweep_max=args.sweep_max, progress=not args.no_progress)
    bench.print_report(doc)
    if args.json:
        bench.write_json(doc, args.json)
        print(f"wrote {args.json}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(bench.markdown_report(doc))
        print(f"wrote {args.markdown}")
    if args.plot:
        for path in bench.plot(doc, args.plot):
            print(f"wrote {path}")
    return 0 if all(c.get("verified") for c in doc["cells"]) else 1


# ---------------------------------------------------------------- explain

def parse_operand(spec: str, dtype: str, device: str):
    """An operand from text: "8192x16384", "16384", "()" (0-d), "=2.5" (Python scalar).

    Suffix ".T" transposes the array (reverses its dims); suffix ":K" keeps every K-th
    element of the last dim, e.g. "8192x32768:2" is an 8192x16384 strided view. Arrays are
    allocated but never touched (explain launches nothing).
    """
    spec = spec.strip()
    if spec.startswith("="):
        text = spec[1:]
        return float(text) if any(c in text for c in ".eEn") else int(text)
    step = 1
    if ":" in spec:
        spec, k = spec.rsplit(":", 1)
        step = int(k)
    transpose = spec.endswith(".T")
    spec = spec[:-2] if transpose else spec
    shape = () if spec in ("()", "", "0d", "0-d") else tuple(int(x) for x in spec.lower().split("x"))
    if device == "cpu":
        import numpy as np
        from .bench import _np_dtype
        x = np.empty(shape, _np_dtype(dtype))
    else:
        import torch
        x = torch.empty(shape, dtype=getattr(torch, dtype), device=device)
    if step != 1:
        x = x[..., ::step]
    return x.T if transpose else x


def _explain(args) -> int:
    import stridewise as sw

    dtypes = [args.dtype, args.dtype2 or args.dtype]
    ops = [parse_operand(s, d, args.device) for s, d in zip(args.operands, dtypes)]
    kw = {}
    if args.convention:
        kw["convention"] = args.convention
    e = sw.explain(sw.remainder, *ops, **kw)
    text = str(e)
    if not args.source:
        text = text.split("\n\n", 1)[0]
    print(text)
    return 0


# ---------------------------------------------------------------- info

def info() -> dict:
    """What this machine offers stridewise: backends, devices, compiler, cache, versions."""
    import numpy as np

    from . import __version__, _cache
    from .bench import _cpu_model

    d = {"stridewise": __version__, "python": sys.version.split()[0], "numpy": np.__version__,
         "cpu": f"{_cpu_model()} ({os.cpu_count()} cores)", "cache dir": str(_cache.cache_dir()),
         "disk cache": "on" if _cache.enabled() else "off (STRIDEWISE_DISABLE_CACHE)"}
    try:
        from .backends import cpu
        path, version = cpu.compiler()
        d["cpu backend"] = f"{path} {version} ({' '.join(cpu.FLAGS)})"
    except Exception as e:  # noqa: BLE001
        d["cpu backend"] = f"unavailable: {e}"
    try:
        import torch
        d["torch"] = f"{torch.__version__} ({torch.get_num_threads()} threads)"
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            d["cuda device"] = f"{p.name}, sm_{p.major}{p.minor}, {p.multi_processor_count} SMs, " \
                               f"{p.total_memory / 2**30:.0f} GiB ({torch.cuda.device_count()} visible)"
        else:
            d["cuda device"] = "none visible to torch"
    except ImportError:
        d["torch"] = "not installed"
    try:
        import cupy
        d["cupy"] = cupy.__version__
    except Exception:  # noqa: BLE001
        d["cupy"] = "not installed"
    try:
        from cuda.bindings import nvrtc
        err, major, minor = nvrtc.nvrtcVersion()
        d["nvrtc"] = f"{major}.{minor}"
    except Exception:  # noqa: BLE001
        d["nvrtc"] = "not installed (pip install 'stridewise[cuda]')"
    try:
        import importlib
        cuda = importlib.import_module(".backends.cuda", "stridewise")
        d["cuda backend"] = "present" if hasattr(cuda, "compile") else "incomplete"
    except Exception as e:  # noqa: BLE001
        d["cuda backend"] = f"unavailable: {type(e).__name__}: {e}"[:160]
    return d


def _info(args) -> int:
    d = info()
    width = max(len(k) for k in d)
    for k, v in d.items():
        print(f"{k:>{width}}  {v}")
    return 0


# ---------------------------------------------------------------- main

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="stridewise", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser("bench", help="remainder over the BASELINE.md case matrix against the anchors")
    b.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    b.add_argument("--quick", action="store_true", help="a few cases and dtypes at a small size")
    b.add_argument("--layouts", action="store_true",
                   help="the second matrix: layouts users bring (bench_layouts.LAYOUTS), allocating calls")
    b.add_argument("--cases", type=_csv, help="comma-separated subset of the cases")
    b.add_argument("--dtypes", type=_csv, help="comma-separated subset of the dtypes")
    b.add_argument("--log2", type=int, help="output elements per case, as a power of two")
    b.add_argument("--sweep", action="store_true", help="also the float32 size sweep from 2^10")
    b.add_argument("--sweep-max", type=int, help="largest sweep size as a power of two")
    b.add_argument("--no-extras", action="store_true", help="skip host overhead and first-call timing")
    b.add_argument("--no-progress", action="store_true")
    b.add_argument("--json", metavar="PATH", help="write every measurement as JSON")
    b.add_argument("--plot", metavar="PNG", help="write a bar chart per case and dtype")
    b.add_argument("--markdown", metavar="PATH", help="write the run as Markdown (for BENCHMARKS.md)")
    b.set_defaults(func=_bench)

    e = sub.add_parser("explain", help="how stridewise would run remainder on these operands")
    e.add_argument("operands", nargs=2, help='e.g. "8192x16384" "16384"; "()" 0-d, "=2.5" scalar, '
                                             '".T" transposed, ":2" every 2nd of the last dim')
    e.add_argument("--dtype", default="float32")
    e.add_argument("--dtype2", help="dtype of the second operand (default: --dtype)")
    e.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    e.add_argument("--convention", choices=("torch", "numpy"))
    e.add_argument("--source", action=argparse.BooleanOptionalAction, default=True,
                   help="print the generated source")
    e.set_defaults(func=_explain)

    i = sub.add_parser("info", help="backends, devices, compiler and cache directory")
    i.set_defaults(func=_info)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
