"""Explain: what a call would do, from plan to generated source, without running it."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Explanation"]


@dataclass(frozen=True)
class Explanation:
    """The resolved pipeline of one call.

    Attributes
    ----------
    op, backend, mode : what runs where, in which mode.
    shape, strides : merged extents and per-operand strides (elements, outputs first).
    kinds, pack, index_bits : how each operand is read, elements per access, index width.
    algorithm : the fully resolved algorithm.
    origins : (field, value, origin) per algorithm field: "caller", "tuning for <device>" or
        "default", with the measurement that chose the value.
    bytes : compulsory bytes (each operand's own elements once).
    out_layout : the output's strides and the library rule that chose them (or out=).
    source : the generated C++.
    hoisted : user kernels: each subexpression computed once per element of its operands'
        broadcast shape by a pre-pass (_hoist.Hoisted: text, temporary, dtype, shape).
    hoist_note : user kernels: who decided the hoisting and, for Auto, the rule's figures
        (operations saved against bytes moved per output element; tuning.py).
    """

    op: str
    backend: str
    mode: str
    shape: tuple
    strides: tuple
    kinds: tuple
    pack: int
    index_bits: int
    algorithm: object
    dtypes: tuple
    bytes: int
    source: str
    origins: tuple = ()
    out_layout: str = ""
    hoisted: tuple = ()
    hoist_note: str = ""

    @classmethod
    def from_prepared(cls, op: str, prepared) -> "Explanation":
        p, lay = prepared.plan, prepared.layout
        nbytes = 0
        for k, (st, isz) in enumerate(zip(p.strides, p.itemsizes)):
            if k == prepared.spec.index:   # a user kernel's flat index: computed, never read
                continue
            own = 1
            for n, s in zip(p.shape, st):
                own *= n if s else 1
            nbytes += own * isz
        return cls(op, prepared.backend, lay.mode, p.shape, p.strides, lay.kinds, lay.pack,
                   p.index_bits, prepared.algorithm, tuple(d.name for d in prepared.spec.arrays),
                   nbytes, prepared.source, getattr(prepared, "origins", ()),
                   prepared.out_layout, getattr(prepared, "hoisted", ()),
                   getattr(prepared, "hoist_note", ""))

    def __str__(self) -> str:
        rows = [
            ("op", f"{self.op} on {self.backend}"),
            ("mode", self.mode),
            ("merged shape", str(self.shape)),
            ("strides", "  ".join(f"{k}:{s}" for k, s in zip(self._names(), self.strides))),
            ("operands", "  ".join(f"{k}:{d}/{kind}" for k, d, kind in zip(self._names(), self.dtypes, self.kinds))),
            ("output layout", self.out_layout),
            ("access", f"pack {self.pack}, int{self.index_bits} index"),
            ("algorithm", repr(self.algorithm)),
            *((f"  {name}", f"{value!r}  {origin}") for name, value, origin in self.origins),
            ("bytes", f"{self.bytes:,} compulsory"),
            ("warm calls", _warm_path()),
        ] + [("hoisting", self.hoist_note)] * bool(self.hoist_note) + \
            [("hoisted", str(h)) for h in self.hoisted]
        width = max(len(k) for k, _ in rows)
        lines = [f"{k:>{width}}  {v}" for k, v in rows]
        return "\n".join(lines) + "\n\n" + self.source

    def _names(self):
        return ["out"] + [f"in{k}" for k in range(1, len(self.strides))]


def _warm_path() -> str:
    import sys

    from stridewise.launch.compiled import torch_ext, warm

    if warm is None:
        return ("Python (stridewise.launch._warm not built, built from older sources, or "
                "STRIDEWISE_PURE_PYTHON=1)")
    if "torch" in sys.modules:    # never import torch for this line
        if torch_ext() is not None:
            return "compiled (stridewise.launch._warm; torch tensors through stridewise.launch._torch)"
        return "compiled (stridewise.launch._warm; stridewise.launch._torch not built, or built for another torch)"
    return "compiled (stridewise.launch._warm)"
