"""The call-style fuzz of tests/test_fuzz.py run for a while, every failure kept.

    python tools/fuzz_calls.py [--lib numpy|torch|cupy] [--device cpu|cuda] [--seconds S] [--seed N]
                               [--fake]

The test stops at its first failure and shrinks it; this draws the same calls (every op,
dtype, layout, number, 0-d operand, out= and alias) for --seconds, records each distinct
failure once (by op and the first line of its message) and goes on, so one run sorts many.
--fake calls torch's ops under FakeTensorMode (what torch.compile traces) against the eager
call's shape, dtype, strides and errors. Start one process per core with different seeds
(they share the kernel cache). A progress line
goes to stderr every 30 s; the failures, each with its drawn call and traceback, to stdout.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import test_fuzz  # noqa: E402  (the strategies and the comparison)


def describe(call) -> str:
    """The drawn call as it can be typed again: the op, then each argument's library, dtype,
    shape, strides and first values (a Python number as itself), the out= and the alias."""
    row, args, out, alias = call

    def one(a):
        if not (hasattr(a, "shape") and hasattr(a, "dtype")):
            return repr(a)
        strides = a.stride() if callable(getattr(a, "stride", None)) else a.strides
        values = np.asarray(test_fuzz.host(a)).ravel()[:24].tolist()
        return f"{type(a).__module__.split('.')[0]} {a.dtype} {tuple(a.shape)} strides {strides} {values}"
    return "\n".join([f"{row.name}(", *(f"  {one(a)}," for a in args), f") out={out} alias={alias}"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", choices=("numpy", "torch", "cupy"), default="torch")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fake", action="store_true", help="fake tensors against eager (torch)")
    args = ap.parse_args()
    if args.lib == "numpy" and args.device == "cuda":
        ap.error("--device cuda fuzzes torch's CUDA tensors: pass --lib torch (or --lib cupy)")
    if args.lib == "cupy":
        args.device = "cuda"
    if args.fake and args.lib != "torch":
        ap.error("--fake fuzzes torch's fake tensors: pass --lib torch")
    failures: dict = {}
    start, shown, count = time.monotonic(), [time.monotonic()], [0]

    def one(data):
        call = data.draw(test_fuzz.call(args.lib, args.device))
        count[0] += 1
        try:
            with np.errstate(all="ignore"):
                if args.fake:
                    test_fuzz.run_fake(*call[:2], device=args.device)
                else:
                    test_fuzz.run(args.lib, *call, device=args.device)
        except Exception as e:  # noqa: BLE001 -- every failure is a finding
            key = (call[0].name, str(e).split("\n")[0][:80])
            if key not in failures:
                failures[key] = (describe(call), traceback.format_exc()[-2500:])

    chunk = 0
    while time.monotonic() - start < args.seconds:   # chunks of draws, each its own seed
        @given(st.data())
        @settings(max_examples=100, deadline=None, phases=[Phase.generate], database=None,
                  suppress_health_check=list(HealthCheck))
        @seed(args.seed * 1_000_003 + chunk)
        def hundred(data):
            one(data)
        hundred()
        chunk += 1
        if time.monotonic() - shown[0] > 30:
            shown[0] = time.monotonic()
            print(f"{count[0]} calls, {len(failures)} distinct failures, "
                  f"{shown[0] - start:.0f} s", file=sys.stderr, flush=True)
    print(f"{count[0]} calls in {time.monotonic() - start:.0f} s ({args.lib}, {args.device}, "
          f"seed {args.seed}): {len(failures)} distinct failures")
    for (op, message), (call, tb) in failures.items():
        print("=" * 100, f"\n{op}: {message}\n{call}\n{tb}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
