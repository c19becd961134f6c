"""Plan: merge a broadcast problem into the fewest dims and classify it into one mode.

Pure Python, no device. Dims are right-aligned, broadcast dims get stride 0, size-1 dims
go, the rest are ordered by the output's strides and merged wherever every operand is
contiguous across the pair. The plan also fixes the index width and the widest pack.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from stridewise import modes as _modes

__all__ = ["Plan", "Layout", "plan", "broadcast_shapes", "MODES", "MAX_DIMS", "TooManyDims"]

MAX_DIMS = 8


class TooManyDims(ValueError):
    """A layout with more than MAX_DIMS dims after merging: the kernels' records hold at most
    that many (built-in ops split such a call along its outermost dim: pipeline._split_call)."""


PACK_BYTES = 16
INT32_LIMIT = 2**31 - 1


def broadcast_shapes(shapes: list[tuple], names: list[str]) -> tuple:
    """NumPy's broadcast of `shapes`, with an error that names the clashing arguments."""
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    owner = [None] * nd
    for s, name in zip(shapes, names):
        for i, n in enumerate(s, nd - len(s)):
            if n == out[i] or n == 1:
                continue
            if out[i] == 1:
                out[i], owner[i] = n, name
                continue
            raise ValueError(
                f"shapes do not broadcast: {owner[i]} has extent {out[i]} and {name} has extent "
                f"{n} in dim {i - nd} (shapes {', '.join(str(tuple(x)) for x in shapes)})"
            )
    return tuple(out)


@dataclass(frozen=True)
class Layout:
    """How each array operand is read in one mode, and the pack that mode can use.

    kinds: per operand, one of "dense" (unit stride, packed), "repeated" (dense, and the
    same row for every index of the next-to-last dim: a row vector, which `rows` with
    share_rows reads once per column of rows; in `short_rows`, a periodic operand each
    thread reads at one phase of its period, once), "bcast" (stride 0 along the walk), "strided"
    (any stride, element by element), "periodic" (flat index mod period), "staged" (unit
    stride along the tile dim only; read as a dense pack from the tile or block the kernel
    first transposes, `tiled`), "shifted" (dense, but its packs are not aligned where the
    output's are: read as two aligned words shifted together, pack.h load_shifted),
    "repeated_shifted" (a repeated row off the output's packs: read shifted, once per column
    of rows that peel alike, `row_spacing`) and "uniform" (one element, read once).
    """

    mode: str
    kinds: tuple
    pack: int
    aux: int = 0
    periods: tuple = ()

    @property
    def row_heads(self) -> bool:
        """Rows peel their heads to output 0's alignment (the mode says aux holds that)."""
        return _modes.get(self.mode).row_heads and bool(self.aux)

    @property
    def wrapped(self) -> bool:
        """Its repeated operands are one period each, which the mode carries (short_rows):
        read at any phase of it, wrapping at its end (pack.h load_wrapped)."""
        return "repeated" in self.kinds and "repeated" in _modes.get(self.mode).periods

    @property
    def row_spacing(self) -> int:
        """How many rows apart the rows of one shared batch lie (rows with a repeated row):
        aux where rows peel heads, the fewest rows after which output 0's rows start at the
        same phase again; 1 where every row starts on a pack."""
        repeated = any(kind.startswith("repeated") for kind in self.kinds)
        return self.aux if self.row_heads and repeated else 1


@dataclass(frozen=True)
class Plan:
    """A merged, classified elementwise problem.

    Attributes
    ----------
    shape : merged extents, outermost first; the output's innermost dim is last.
    strides : per array operand (outputs first), merged strides in elements.
    mode : the mode `Auto()` runs.
    index_bits : 32 when every offset fits in int32, else 64.
    """

    shape: tuple
    strides: tuple
    itemsizes: tuple
    ptrs: tuple
    nout: int
    nparams: int
    n: int
    index_bits: int
    mode: str = field(default="general")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    # -- facts per operand -------------------------------------------------------------
    def _uniform(self, k: int) -> bool:
        return k >= self.nout and all(s == 0 for s in self.strides[k])

    def _flat(self, k: int) -> bool:
        """Operand k is C-contiguous over all merged dims."""
        acc = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides[k])):
            if n > 1 and s != acc:
                return False
            acc *= n
        return True

    def _period(self, k: int) -> int:
        """Gather period if operand k is 0-stride outside a C-contiguous suffix, else 0."""
        acc, t = 1, self.ndim
        while t > 0 and self.strides[k][t - 1] == acc:
            acc *= self.shape[t - 1]
            t -= 1
        if 0 < t < self.ndim and all(s == 0 for s in self.strides[k][:t]):
            return acc
        return 0

    def _transposed_dim(self, k: int) -> int:
        """An outer dim along which operand k is unit-stride, while its innermost is not."""
        st = self.strides[k]
        if self.ndim < 2 or st[-1] in (0, 1):
            return -1
        for d in range(self.ndim - 2, -1, -1):
            if st[d] == 1:
                return d
        return -1

    def _tile_dim(self) -> int:
        """The tiled mode's dim j: the first transposed input's unit-stride dim."""
        return next(d for k in range(self.nout, len(self.strides)) if (d := self._transposed_dim(k)) >= 0)

    def _row_vector(self, k: int) -> bool:
        """Operand k is one dense row, the same for every index of the next-to-last dim."""
        return k >= self.nout and self.ndim >= 2 and self.strides[k][-2:] == (0, 1)

    def repeats_rows(self) -> bool:
        """Some input is a row vector (what Rows(share_rows=True) reads once per column)."""
        return any(self._row_vector(k) for k in range(self.nout, len(self.strides)))

    def outer(self) -> bool:
        """An outer product: some input is a row vector and every other input is constant
        along the rows, so the output is nearly all the memory traffic."""
        return self.repeats_rows() and all(self._row_vector(k) or self.strides[k][-1] == 0
                                           for k in range(self.nout, len(self.strides)))

    def _outputs_inner_unit(self) -> bool:
        return all(self.strides[k][-1] == 1 for k in range(self.nout))

    def _inner_kind(self, k: int) -> str:
        """How operand k is read along the innermost dim."""
        s = self.strides[k][-1]
        return "dense" if s == 1 else "bcast" if s == 0 else "strided"

    def _dense(self, kinds) -> list:
        """The operands read as whole packs."""
        return [k for k, kind in enumerate(kinds) if kind in ("dense", "staged", "repeated")]

    # -- modes (each one's rules: its module in stridewise.modes) ----------------------
    def supports(self, mode: str) -> bool:
        """Whether `mode` can run this problem at all."""
        return _modes.get(mode).applies(self)

    def _base_pack(self, packed) -> int:
        sizes = [self.itemsizes[k] for k in packed] or [max(self.itemsizes)]
        return max(1, PACK_BYTES // max(sizes))

    def layout(self, mode: str, pack: int | None = None, share_rows: bool = False) -> Layout:
        """Operand kinds, pack (at most `pack`) and auxiliary values for `mode`; row vectors
        are "repeated" only with `share_rows` (Rows)."""
        m = _modes.get(mode)
        na = len(self.strides)
        kinds = ["uniform" if self._uniform(k) else m.kind(self, k, share_rows) for k in range(na)]
        cap = self._base_pack([k for k in range(na) if kinds[k] != "uniform"])
        if pack is not None:
            cap = min(cap, pack)
        cap, aux = m.pack(self, kinds, cap)
        periods = tuple(self._period(k) if kind in m.periods else 0 for k, kind in enumerate(kinds))
        return Layout(mode, tuple(kinds), cap, aux, periods if any(periods) else ())

    def _agrees(self, k: int, cap: int, dims) -> bool:
        """Operand k's packs of `cap` are aligned exactly where output 0's are, at every index
        of `dims` (its element misalignment mod cap is the output's, row by row)."""
        e0, ek = self.ptrs[0] // self.itemsizes[0], self.ptrs[k] // self.itemsizes[k]
        return (ek - e0) % cap == 0 and all((self.strides[k][d] - self.strides[0][d]) % cap == 0
                                            for d in dims if self.shape[d] > 1)

    def _align_to_output(self, kinds, dense, cap, dims) -> int:
        """The widest pack (at most cap) at which every output is misaligned as output 0 is,
        so the kernel's head peel (per run or per row) aligns them all; an input misaligned
        otherwise becomes "shifted" and keeps full packs."""
        if any(self.ptrs[k] % self.itemsizes[k] for k in dense):
            return 1
        outs = [k for k in dense if k < self.nout]
        while cap > 1 and not all(self._agrees(k, cap, dims) for k in outs):
            cap //= 2
        for k in dense:
            if k >= self.nout and cap > 1 and not self._agrees(k, cap, dims):
                # a repeated row stays one per column of rows (rows whose heads peel alike)
                kinds[k] = "repeated_shifted" if kinds[k] == "repeated" else "shifted"
        return cap

    def max_pack(self, mode: str) -> int:
        return self.layout(mode).pack


def plan(out_shape: tuple, operands: list[tuple], nout: int = 1, nparams: int = 0) -> Plan:
    """Plan a problem whose output has `out_shape`.

    Parameters
    ----------
    operands : (shape, strides, itemsize, ptr) per array operand, outputs first; strides in
        elements. Shapes must broadcast to `out_shape` (checked by the caller).
    """
    nd = len(out_shape)
    full = []
    for shape, strides, _, _ in operands:
        pad = nd - len(shape)
        full.append([0] * pad + [0 if n == 1 else s for n, s in zip(shape, strides)])
    dims = [d for d in range(nd) if out_shape[d] != 1]
    # Walk the first output in its own memory order; a stable sort keeps ties in place.
    dims.sort(key=lambda d: -abs(full[0][d]))
    merged_shape: list[int] = []
    merged: list[list[int]] = [[] for _ in operands]
    for d in reversed(dims):                      # innermost first
        n = out_shape[d]
        if merged_shape and all(st[d] == m[0] * merged_shape[0] for st, m in zip(full, merged)):
            merged_shape[0] *= n
            continue
        merged_shape.insert(0, n)
        for st, m in zip(full, merged):
            m.insert(0, st[d])
    if not merged_shape:                          # one element: a 1-long dense run
        merged_shape = [1]
        merged = [[1] for _ in operands]
    if len(merged_shape) > MAX_DIMS:
        raise TooManyDims(
            f"this layout still has {len(merged_shape)} dims after merging (at most {MAX_DIMS} a "
            "kernel): built-in ops split such a call along its outermost dim; for a user kernel "
            "make some inputs contiguous first"
        )
    n = 1
    for x in out_shape:
        n *= x
    reach = max([n] + [sum((e - 1) * abs(s) for e, s in zip(merged_shape, m)) + 1 for m in merged])
    p = Plan(
        shape=tuple(merged_shape),
        strides=tuple(tuple(m) for m in merged),
        itemsizes=tuple(o[2] for o in operands),
        ptrs=tuple(o[3] for o in operands),
        nout=nout,
        nparams=nparams,
        n=n,
        index_bits=32 if reach + PACK_BYTES <= INT32_LIMIT else 64,
    )
    object.__setattr__(p, "mode", _modes.auto(p))
    return p


def __getattr__(name: str):
    if name == "MODES":   # the registered modes' names, read live (a registered mode is in it)
        return _modes.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
