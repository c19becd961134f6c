"""The word form of 1-byte packs: four int8, uint8 or bool lanes a 32-bit word (words.h Apply4).

`source.generate` asks `applies(spec)`; where it holds, the Op computes a pack word by word
through `sw::Apply4Pack<P, F, T>` when the functor has such a form, and element by element
otherwise (a branch on a constant, so only one form is compiled).
"""
from __future__ import annotations

from typing import Optional

_BYTES = ("int8", "uint8", "bool")


def applies(spec) -> bool:
    """A return form of a 1-byte dtype over whole arrays and scalars whose operands have that
    dtype and whose output has it too (KernelSpec.one_dtype) or is bool (a comparison)."""
    return (spec.compute.name in _BYTES and spec.index < 0
            and all(src in ("array", "param") for src, _ in spec.args)
            and spec.one_dtype_in and spec.arrays[0].name in (spec.compute.name, "bool"))


def prepared_fields(k: int) -> tuple[str, str]:
    """(field of In<P>, load statement): operand k's divisor words, prepared once per batch."""
    return (f"typename sw::Apply4Pack<P, F, T>::D dw{k}[(P + 3) / 4];",
            f"if constexpr (sw::Apply4Pack<P, F, T>::value)\n"
            f"      SW_UNROLL for (int w = 0; w < P / 4; ++w) "
            f"in.dw{k}[w] = sw::Apply4Pack<P, F, T>::prepare(sw::word4(in.a{k}, w));")


def _operand(raw: str, k: Optional[int], prepared: Optional[int]) -> str:
    if k is not None and k == prepared:
        return f"in.dw{k}[w]"
    if raw.endswith(".elem[e]"):            # a pack
        return f"sw::word4({raw[:-len('.elem[e]')]}, w)"
    if raw.endswith("[e]"):                 # a plain array (strided, periodic)
        return f"sw::word4({raw[:-len('[e]')]}, w)"
    return f"F4::splat({raw})"              # one value along the pack


def wrap(spec, compute: str, raws: list[str], prepared: Optional[int]) -> str:
    """`compute` (the element form) behind the word form's branch; raws[i] is the element
    expression of the i-th input of spec.args (arrays and parameters)."""
    ids = [i if src == "array" else None for src, i in spec.args if src != "out"]
    args = ", ".join(_operand(r, k, prepared) for r, k in zip(raws, ids))
    return (f"if constexpr (sw::Apply4Pack<P, F, T>::value) {{\n"
            f"      typedef sw::Apply4Pack<P, F, T> F4;   // dependent on P: compiled only if taken\n"
            f"      SW_UNROLL for (int w = 0; w < P / 4; ++w) sw::set_word4(r0, w, F4::run({args}));\n"
            f"    }} else {{\n      " + compute.replace("\n", "\n  ") + "\n    }")
