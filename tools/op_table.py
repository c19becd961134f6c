"""What the op table (stridewise.ops.builtins) generates into files: README.md's table of
built-in ops and src/stridewise/ops/builtins.pyi, the stub that names each op's function to
type checkers.

    python tools/op_table.py           print the README section
    python tools/op_table.py --write   rewrite the README section and the stub

tests/test_builtin_ops.py fails while either file differs from what the table generates.
"""
from __future__ import annotations

import sys
from pathlib import Path

from stridewise.ops import builtins as _builtins

README = Path(__file__).resolve().parents[1] / "README.md"
STUB = Path(_builtins.__file__).with_suffix(".pyi")


def main(argv: list[str]) -> int:
    if not argv:
        print(_builtins.readme_section())
        return 0
    if argv != ["--write"]:
        print(__doc__, file=sys.stderr)
        return 2
    text = README.read_text()
    begin, end = text.find(_builtins.README_BEGIN), text.find(_builtins.README_END)
    if begin < 0 or end < begin:
        print(f"{README} has no ops table markers ({_builtins.README_BEGIN!r} ... "
              f"{_builtins.README_END!r}); add them where the table goes", file=sys.stderr)
        return 1
    README.write_text(text[:begin] + _builtins.readme_section()
                      + text[end + len(_builtins.README_END):])
    STUB.write_text(_builtins.stub())
    print(f"wrote the ops table into {README} and the stub {STUB}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
