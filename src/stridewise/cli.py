"""Command line: `stridewise bench`, `stridewise explain`, `stridewise tune` and `stridewise info`.

Errors print one line that names the fix; `--debug` (or STRIDEWISE_DEBUG=1) shows the traceback.
"""
from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


# ---------------------------------------------------------------- bench

class UsageError(Exception):
    """A problem the user fixes (a missing extra, a bad argument): printed as one line."""


def _require(module: str, extra: str, why: str) -> None:
    import importlib.util
    if importlib.util.find_spec(module) is None:
        raise UsageError(f"{why} needs {module!r}, which is not installed: "
                         f"pip install 'stridewise[{extra}]'")


def _bench(args) -> int:
    _require("rich", "bench", "stridewise bench")
    if args.plot:
        _require("matplotlib", "bench", "stridewise bench --plot")
    from stridewise.bench import matrix as bench

    if args.layouts:
        from stridewise.bench import layouts as bench_layouts

        doc = bench_layouts.run(device=args.device, cases=args.cases, dtypes=args.dtypes,
                                log2=args.log2, progress=not args.no_progress)
    else:
        doc = bench.run(device=args.device, cases=args.cases, dtypes=args.dtypes, quick=args.quick,
                        log2=args.log2, extras=not args.no_extras, do_sweep=args.sweep,
                        sweep_max=args.sweep_max, progress=not args.no_progress,
                        values=args.values)
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
        from stridewise.bench.matrix import _np_dtype
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


# ---------------------------------------------------------------- tune

def _tune(args) -> int:
    from stridewise import _tune

    command = "stridewise tune" + (" --quick" if args.quick else "")
    doc = _tune.run(args.device, quick=args.quick, dtypes=args.dtypes, path=args.out,
                    progress=not args.no_progress, command=command)
    print(_tune.summary(doc))
    return 0


# ---------------------------------------------------------------- info

def info() -> dict:
    """What this machine offers stridewise: backends, devices, compiler, cache, versions."""
    import numpy as np

    from stridewise import __version__
    from stridewise import cache as _cache
    from stridewise.bench.matrix import _cpu_model

    d = {"stridewise": __version__, "python": sys.version.split()[0], "numpy": np.__version__,
         "cpu": f"{_cpu_model()} ({os.cpu_count()} cores)", "cache dir": str(_cache.cache_dir()),
         "disk cache": "on" if _cache.enabled() else "off (STRIDEWISE_DISABLE_CACHE)"}
    try:
        from stridewise.backends import cpu
        path, _ = cpu.compiler()
        d["cpu backend"] = f"{compiler_version(path)} ({' '.join(cpu.FLAGS)})"
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


def compiler_version(path: str) -> str:
    """The compiler as "name version" (g++ 12.2.0), from its own --version line."""
    import subprocess
    name = os.path.basename(path)
    try:
        first = subprocess.run([path, "--version"], capture_output=True, text=True,
                               timeout=10).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return f"{name} (version unknown)"
    version = next((w for w in reversed(first.split()) if w[:1].isdigit()), "")
    return f"{name} {version}".strip()


def _info(args) -> int:
    d = info()
    width = max(len(k) for k in d)
    for k, v in d.items():
        print(f"{k:>{width}}  {v}")
    return 0


# ---------------------------------------------------------------- main

_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="stridewise", description=__doc__)
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser("bench", help="remainder over the case matrix of docs/baselines.md against the anchors")
    b.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    b.add_argument("--quick", action="store_true", help="a few cases and dtypes at a small size")
    b.add_argument("--layouts", action="store_true",
                   help="the second matrix: layouts users bring (bench_layouts.LAYOUTS), allocating calls")
    b.add_argument("--cases", type=_csv, help="comma-separated subset of the cases")
    b.add_argument("--dtypes", type=_csv, help="comma-separated subset of the dtypes")
    b.add_argument("--log2", type=int, help="output elements per case, as a power of two")
    b.add_argument("--values", type=_csv, help="comma-separated value distributions (default all: "
                   "narrow on every case, the others on contiguous and outer); see bench_values")
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
    e.add_argument("--dtype", default="float32", choices=_DTYPES)
    e.add_argument("--dtype2", choices=_DTYPES, help="dtype of the second operand (default: --dtype)")
    e.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    e.add_argument("--convention", choices=("torch", "numpy"))
    e.add_argument("--source", action=argparse.BooleanOptionalAction, default=True,
                   help="print the generated source")
    e.set_defaults(func=_explain)

    t = sub.add_parser("tune", help="measure this GPU's launch fields and write its tuning file")
    t.add_argument("--device", default="cuda", help="cuda or cuda:N")
    t.add_argument("--quick", action="store_true", help="three dtypes at 2^26 outputs: 12 cells instead of 24")
    t.add_argument("--dtypes", type=_csv, help="comma-separated subset of the dtypes")
    t.add_argument("--out", metavar="PATH", help="write the tuning here instead of the tuning "
                   "directory (a file elsewhere is not loaded by later runs)")
    t.add_argument("--no-progress", action="store_true")
    t.set_defaults(func=_tune)

    i = sub.add_parser("info", help="backends, devices, compiler and cache directory")
    i.set_defaults(func=_info)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv     # accepted before or after the command
    args = parser().parse_args([a for a in argv if a != "--debug"])
    if debug or os.environ.get("STRIDEWISE_DEBUG"):
        return args.func(args)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("stridewise: interrupted", file=sys.stderr)
        return 130
    except UsageError as e:
        print(f"stridewise {args.command}: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 -- one line, not a traceback; --debug shows it
        lines = str(e).strip().splitlines() or [type(e).__name__]
        print(f"stridewise {args.command}: {type(e).__name__}: {lines[0]} "
              "(--debug shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
