"""Registers, spills and memory instructions of generated CUDA kernels, without a GPU.

    python tools/sass.py [mode ...] [--dtypes float32,float16] [--op remainder] [--keep] [--stage TILE] [--sass]

Builds each mode's float32 base spec (as tests/test_nvrtc.py does), swaps in each dtype,
compiles with NVRTC for sm_90 and reads the cubin with cuobjdump (on the PATH, from the
`nvidia-cuda-cuobjdump` wheel: `pip install -e .[sass]`, or triton's copy; cuobjdump runs
nvdisasm for the SASS, from the same place): registers, stack, and the counts of global
loads/stores by width.
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("STRIDEWISE_DISABLE_CACHE", "1")

from stridewise.codegen import source as _codegen  # noqa: E402
from stridewise.launch import pipeline as _ops  # noqa: E402
from stridewise.ops import builtins as _builtins
from stridewise.operands.dtypes import ALL_DTYPES as DTYPES  # noqa: E402
from stridewise.backends import cuda  # noqa: E402


def _cuobjdump() -> str:
    found = shutil.which("cuobjdump") if shutil.which("nvdisasm") else None
    if found:
        return found
    wheel = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
        "site-packages" / "nvidia" / "cu13" / "bin" / "cuobjdump"
    if wheel.exists():
        return str(wheel)
    try:
        import triton
        path = Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    sys.exit("cuobjdump not found: pip install -e .[sass] (or the CUDA toolkit, or triton)")


def _preamble(op) -> str:
    """The op's own header and code, as the pipeline puts them before the Op."""
    return "\n".join(filter(None, (op.header and f"#include <{op.header}>", op.code)))


def main(argv=None):
    from test_nvrtc import _base_specs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modes", nargs="*", help="base spec names (default: all), e.g. rows/dense")
    ap.add_argument("--dtypes", default="float32,float16,float64")
    ap.add_argument("--op", default="remainder", help="the built-in op (bool: bitwise_xor, as the bench)")
    ap.add_argument("--bits", type=int, default=32)
    ap.add_argument("--pack-bytes", type=int, default=16, help="bytes per pack (at most 16)")
    ap.add_argument("--keep", action="store_true", help="dense loads under the L2 policy (keep_loads)")
    ap.add_argument("--stage", type=int, default=0, metavar="TILE",
                    help="tiled: staged tiles of TILE packs in shared memory (Tiled(stage=True))")
    ap.add_argument("--max-registers", type=int, default=0, metavar="N",
                    help="cap every kernel at N registers (as the tuning's max_registers does)")
    ap.add_argument("--sass", action="store_true", help="print the SASS too")
    args = ap.parse_args(argv)
    tool = _cuobjdump()
    # cuobjdump looks for nvdisasm on the PATH; the wheels put it beside cuobjdump
    os.environ["PATH"] = os.pathsep.join((str(Path(tool).parent), os.environ.get("PATH", "")))
    bases = _base_specs()
    for name, base in bases.items():
        if args.modes and not any(name.startswith(m) for m in args.modes):
            continue
        for dname in args.dtypes.split(","):
            dt = DTYPES[dname]
            pack = 1 if base.mode == "general" else max(1, args.pack_bytes // dt.itemsize)
            spec = dataclasses.replace(
                base, arrays=(dt,) * len(base.arrays), params=(dt,) * len(base.params),
                compute=dt, functor=_builtins.OPS[args.op].functor_for(dt, "torch"), pack=pack,
                op=args.op, preamble=_preamble(_builtins.OPS[args.op]),
                index_bits=args.bits, keep_loads=args.keep, max_registers=args.max_registers or base.max_registers,
                tile=args.stage if base.mode == "tiled" else 0)
            cubin = cuda.compile(_codegen.generate(spec, cuda.entry_point), spec.entry, "sm_90")
            with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
                f.write(cubin)
                f.flush()
                res = subprocess.run([tool, "-res-usage", f.name], capture_output=True, text=True).stdout
                out = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True)
            sass = out.stdout
            if not re.search(r"/\*[0-9a-f]{4,}\*/", sass):   # cuobjdump prints the header alone
                sys.exit(f"cuobjdump gave no SASS: {out.stderr.strip()}\n"
                         "nvdisasm must be beside cuobjdump or on the PATH: pip install -e .[sass]")
            regs = re.search(r"REG:(\d+)", res).group(1)
            stack = re.search(r"STACK:(\d+)", res).group(1)
            shared = re.search(r"SHARED:(\d+)", res).group(1)
            ops = collections.Counter(re.findall(r"\b((?:LDG|STG|LDL|STL|LDS|STS)[.\w]*)", sass))
            n = len(re.findall(r"/\*[0-9a-f]{4,}\*/", sass))
            print(f"{name:20s} {dname:9s} regs {regs:>3s} stack {stack:>3s} shared {shared:>5s} instr {n:5d}  "
                  + " ".join(f"{k}:{v}" for k, v in sorted(ops.items())))
            if args.sass:
                print(sass)


if __name__ == "__main__":
    main()
