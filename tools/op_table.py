"""The README's table of built-in ops, generated from the op table (stridewise._builtins).

    python tools/op_table.py           print the section
    python tools/op_table.py --write   replace the section in README.md

tests/test_builtin_ops.py fails while README.md's section differs from the generated one.
"""
from __future__ import annotations

import sys
from pathlib import Path

from stridewise import _builtins

README = Path(__file__).resolve().parents[1] / "README.md"


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
    print(f"wrote the ops table into {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
