"""Row-constant operands held across a shared batch's columns (kernels.cuh run_packs kHold).

In `rows` with a repeated row (an outer product's shared batch: one pack column in R rows),
a "bcast" operand has one value per row: a 3-d outer product's divisor column. Every pack
column of a unit reads the same R values, so the Op loads them, and prepares a divisor
among them (functors.h Prepared), once per unit (`load_row`), and each pack copies them in
(`load_held`, `reload_held`) instead of loading and preparing them again per pack.
"""
from __future__ import annotations

from stridewise.codegen import words

_REPEATED = ("repeated", "repeated_shifted")


def applies(spec) -> bool:
    """Rows.hold_rows in a rows kernel that shares a repeated row (R > 1) beside a
    row-constant operand. The 1-byte word form keeps its per-pack divisor words
    (codegen/words.py)."""
    return (spec.hold_rows and spec.mode == "rows" and any(k in _REPEATED for k in spec.kinds)
            and "bcast" in spec.kinds and not spec.reference and not words.applies(spec))


def held(spec, k: int) -> bool:
    """Whether operand k is loaded once per unit (its statements go to `load_row`)."""
    return applies(spec) and spec.kinds[k] == "bcast"


def fields(k: int, prepared: bool, pairs: bool) -> list[str]:
    """The In<P> fields operand k's row value fills: itself, its prepared divisor, its pair."""
    return [f"a{k}", *([f"d{k}"] if prepared else []), *([f"d2_{k}"] if prepared and pairs else [])]


def methods(row_loads: list[str], loads: list[str], reloads: list[str], names: list[str]) -> str:
    """load_row, hold, load_held and reload_held; `loads`/`reloads` without the held statements."""
    def lines(stmts):
        return "\n".join("    " + s for s in stmts).lstrip()
    return f"""
  // Held rows (codegen/held_rows.py): the row-constant operands of one row of a shared
  // batch, loaded and prepared once per unit (load_row), then copied into each of its packs
  // (hold), whose other operands load_held (the batch's first) and reload_held then read.
  enum {{ kHeldRows = 1 }};
  template <int P>
  SW_HOST_DEVICE SW_INLINE static void load_row(char* const* p, const Index* off, const Uniform& u, In<P>& in) {{
    {lines(row_loads)}
  }}
  template <int P>
  SW_HOST_DEVICE SW_INLINE static void hold(In<P>& in, const In<P>& row) {{
    {lines(f"in.{n} = row.{n};" for n in names)}
  }}
  template <int P>
  SW_HOST_DEVICE SW_INLINE static In<P> load_held(char* const* p, const Index* off, const Uniform& u,
                                                  const In<P>& row) {{
    In<P> in = row;
    {lines(loads)}
    return in;
  }}
  template <int P>
  SW_HOST_DEVICE SW_INLINE static In<P> reload_held(char* const* p, const Index* off, const Uniform& u,
                                                    const In<P>& held) {{
    In<P> in = held;
    {lines(reloads)}
    return in;
  }}"""
