"""What `import stridewise` adds to NumPy's import, in interleaved rounds.

    python tools/import_cost.py [--rounds 9] [SRC_DIR ...]

Per round and per SRC_DIR (default: this checkout's src; .pyc files written first), fresh
processes run
`python -X importtime -c "import numpy"` and `... -c "import stridewise"`; a third runs
`import numpy` then `import stridewise` timing each with process CPU time, which a busy
shared machine distorts far less than wall time. Prints medians (and minima) in ms.
"""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

CPU = ("import time; c = time.process_time(); import numpy; n = time.process_time();"
       " import stridewise; print(n - c, time.process_time() - n)")


def _cumulative(stderr: str, name: str) -> float:
    """The cumulative -X importtime figure of top-level module `name`, in ms."""
    m = re.search(rf"^import time:\s+\d+ \|\s+(\d+) \| {re.escape(name)}$", stderr, re.M)
    return int(m.group(1)) / 1e3


def _run(src: str, code: str, importtime: bool) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": src}
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # time imports from .pyc, as users have them
    args = [sys.executable, *(["-X", "importtime"] if importtime else []), "-c", code]
    return subprocess.run(args, env=env, capture_output=True, text=True, check=True)


def main(argv: list[str]) -> None:
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 9
    srcs = [a for a in argv if not a.startswith("--") and not a.isdigit()] or \
        [str(Path(__file__).resolve().parents[1] / "src")]
    got: dict = {s: {"numpy": [], "stridewise": [], "cpu numpy": [], "cpu added": []} for s in srcs}
    for s in srcs:                                # write the .pyc files first
        _run(s, "import stridewise", False)
    for _ in range(rounds):
        for s in srcs:
            got[s]["numpy"].append(_cumulative(_run(s, "import numpy", True).stderr, "numpy"))
            got[s]["stridewise"].append(
                _cumulative(_run(s, "import stridewise", True).stderr, "stridewise"))
            cpu_np, cpu_sw = map(float, _run(s, CPU, False).stdout.split())
            got[s]["cpu numpy"].append(cpu_np * 1e3)
            got[s]["cpu added"].append(cpu_sw * 1e3)
    for s, v in got.items():
        med = {k: statistics.median(x) for k, x in v.items()}
        print(f"{s}: import numpy {med['numpy']:.1f} ms, import stridewise {med['stridewise']:.1f} ms"
              f" (added {med['stridewise'] - med['numpy']:.1f}; minima {min(v['numpy']):.1f} and"
              f" {min(v['stridewise']):.1f}); process CPU: numpy {med['cpu numpy']:.1f} ms,"
              f" stridewise adds {med['cpu added']:.1f} ms (min {min(v['cpu added']):.1f})")


if __name__ == "__main__":
    main(sys.argv[1:])
