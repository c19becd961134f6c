"""ASan + UBSan over the CPU test suite (or any pytest selection), with error counts.

    python tools/sanitize_cpu.py [--out DIR] [--no-control] [pytest args ...]

Every kernel is built with STRIDEWISE_CXXFLAGS="-fsanitize=address,undefined ..." into a
cache of its own (the flags are part of the key), and Python runs with libasan preloaded (an
instrumented library must find the ASan runtime first). Reports go to DIR/asan.* and
DIR/ubsan.*; they are counted after the run. A positive control first builds a kernel with
a deliberate heap overflow and a deliberate bad shift, and checks that both are reported:
a clean count means something only when the sanitizers are shown to fire.
Default selection: tests/ without the gpu and nvrtc marks. Exit status 1 on any report
(outside the control), a failed test, or a control that did not fire.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ("-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer "
         "-fsanitize-recover=address,undefined,float-cast-overflow")

CONTROL = r"""
import numpy as np, stridewise as sw
k = sw.ElementwiseKernel("int32 x, int32 s", "int32 y",
    "int* p = new int[2]; p[x + 2] = 1; y = p[0] + (x << s); delete[] p;",
    name="sanitizer_control")
k(np.zeros(4, np.int32), np.full(4, 40, np.int32))
"""


def sanitizer_env(logs: Path, cache: Path) -> dict:
    asan = subprocess.run(["g++", "-print-file-name=libasan.so"], capture_output=True,
                          text=True, check=True).stdout.strip()
    env = dict(os.environ, STRIDEWISE_CXXFLAGS=FLAGS, STRIDEWISE_CACHE_DIR=str(cache),
               LD_PRELOAD=asan, PYTHONPATH=str(ROOT / "src"))
    # leaks: the interpreter's own allocations at exit are not the kernels' doing
    env["ASAN_OPTIONS"] = f"detect_leaks=0:halt_on_error=0:log_path={logs}/asan"
    env["UBSAN_OPTIONS"] = f"print_stacktrace=1:halt_on_error=0:log_path={logs}/ubsan"
    return env


def count(logs: Path, stderr: str) -> dict:
    """Reports per sanitizer in the logs under `logs` and in `stderr` (where the UBSan
    runtime writes when the ASan runtime is loaded too, whatever its log_path says)."""
    text = stderr + "".join(f.read_text(errors="replace") for f in logs.glob("*san.*"))
    return {"asan": text.count("ERROR: AddressSanitizer"), "ubsan": text.count("runtime error:")}


def run(pytest_args: list[str], out: Path, control: bool = True) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(tempfile.mkdtemp(prefix="stridewise-sanitize-cache-"))
    result = {"flags": FLAGS, "selection": pytest_args}
    if control:
        clogs = out / "control"
        clogs.mkdir(exist_ok=True)
        proc = subprocess.run([sys.executable, "-c", CONTROL], env=sanitizer_env(clogs, cache),
                              capture_output=True, text=True, cwd=ROOT)
        c = count(clogs, proc.stderr)
        result["control"] = dict(c, fired=c["asan"] > 0 and c["ubsan"] > 0)
    logs = out / "suite"
    logs.mkdir(exist_ok=True)
    # -s: reports written to the process's stderr are not swallowed by pytest's capture
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                           *pytest_args], env=sanitizer_env(logs, cache), capture_output=True,
                          text=True, cwd=ROOT)
    (out / "pytest.log").write_text(proc.stdout + proc.stderr)
    tail = [ln for ln in proc.stdout.splitlines() if " passed" in ln or " failed" in ln]
    result.update(count(logs, proc.stderr), pytest_rc=proc.returncode, pytest=tail[-1] if tail else "")
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("sanitize-logs"))
    ap.add_argument("--no-control", action="store_true")
    args, rest = ap.parse_known_args()
    rest = rest or ["-m", "not gpu and not nvrtc", "tests/"]
    r = run(rest, args.out, control=not args.no_control)
    print(json.dumps(r, indent=1))
    bad = r["asan"] or r["ubsan"] or r["pytest_rc"] or not r.get("control", {"fired": 1})["fired"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
