"""Algorithms: `Auto()` and one concrete algorithm per mode, each with optional knobs.

Each concrete algorithm names its mode; the mode's registration (stridewise.modes) ties it
to the plan, the kernels and Auto's choice.

An explicit algorithm is honoured field by field or rejected with a ValueError that names
the value and the remedy; it is never silently replaced.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["Algorithm", "Auto", "Contiguous", "Scalar", "Rows", "ShortRows", "Tiled", "General",
           "ALGORITHMS"]


@dataclass(frozen=True, repr=False)
class Algorithm:
    """Base of every elementwise algorithm. Unset fields (None) come from the tuning.

    Parameters
    ----------
    block_size : threads per block on the GPU (a power of two, at most 1024).
    pack : elements per vector access (a power of two); capped by the plan's alignment.
    items_per_thread : packs each thread keeps in flight per step.
    keep_loads : on the GPU, read the dense operands' packs with an L2 evict_last policy
        (output lines are evicted first); no effect on operands read element by element.
    hoist : user kernels: compute each subexpression of operands much smaller than the
        output once per distinct element, in a pre-pass (see stridewise.codegen.hoist). None: where
        the backend's tuning says it pays (operations saved per byte moved, a large output:
        tuning.py hoist_work_per_byte; explain shows the figures); True: every such
        subexpression; False: never. No effect on the built-in ops.
    """

    block_size: int | None = None
    pack: int | None = None
    items_per_thread: int | None = None
    keep_loads: bool | None = None
    hoist: bool | None = None

    mode = None  # the plan mode this algorithm runs

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:   # the set fields only: a resolved CPU algorithm has no blocks
        fields = (f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                  if getattr(self, f.name) is not None)
        return f"{self.name}({', '.join(fields)})"


@dataclass(frozen=True)
class Auto:
    """Let stridewise pick the algorithm from the plan, the tuning and the capabilities.

    Parameters
    ----------
    block_size : threads per block on the GPU for whichever algorithm is picked (CuPy's
        block_size=); None: the tuning's.
    hoist : as Algorithm.hoist.
    """

    block_size: int | None = None
    hoist: bool | None = None


@dataclass(frozen=True, repr=False)
class Contiguous(Algorithm):
    """Every operand is one dense run: flat 16-byte packs with a head and tail peel."""

    mode = "contiguous"


@dataclass(frozen=True, repr=False)
class Scalar(Algorithm):
    """As Contiguous, with device scalars read once and host scalars as parameters."""

    mode = "scalar"


@dataclass(frozen=True, repr=False)
class Rows(Algorithm):
    """Unit-stride output rows; each operand's row offset is computed once per row.

    Parameters
    ----------
    share_rows : where an operand is the same row for every index of the next-to-last dim
        (a row vector; the divisor of an outer product), each thread takes one pack column
        over several rows, so that operand is read once and what the operation derives from
        it alone (a reciprocal) is computed once. No effect without such an operand.
    """

    share_rows: bool | None = None
    mode = "rows"


@dataclass(frozen=True, repr=False)
class ShortRows(Algorithm):
    """Flat packs over a dense output; periodic operands gathered by index mod period.

    Parameters
    ----------
    share_rows : where the periodic operands share one period (a per-channel operand in
        channels_last, 3 channels or 64) and the output starts on a pack, each thread walks
        packs at one phase of it, so it is read, and what the operation derives from it alone
        (a reciprocal) is computed, once per thread; explain shows it "repeated". Operands of
        different periods, and periods whose phases repeat only after more than 1024 packs,
        are gathered as without it.
    """

    share_rows: bool | None = None
    mode = "short_rows"


@dataclass(frozen=True, repr=False)
class Tiled(Algorithm):
    """Tiles keep transposed reads coalesced (on the GPU, P x P blocks transposed in registers).

    Parameters
    ----------
    tile : on the GPU, the tile's width in packs along the output's rows (a power of two,
        8 to 64), with rows along j per dtype (tuning.py KernelTables.tile_rows; `tile` rows where
        a dtype has none). The CPU loop picks its tiles from the shape (cpu/loops.h).
    tile_group : on the GPU, consecutive tiles along the staged operand's unit stride that
        neighbouring blocks take (a power of two, 1 to 64), so they read one longer run of
        each of its columns.
    stage : on the GPU, copy each transposed operand's tile into shared memory first
        (cp.async), where its packs are 16 bytes and the block's tiles fit 48 KiB; the others
        are transposed from global memory. The tile's width is then compiled in.
    """

    tile: int | None = None
    tile_group: int | None = None
    stage: bool | None = None
    mode = "tiled"


@dataclass(frozen=True, repr=False)
class General(Algorithm):
    """Any strides, at most 8 merged dims; offsets by precomputed division."""

    mode = "general"


def __getattr__(name: str):
    if name == "ALGORITHMS":   # mode -> algorithm class, read from the registry
        from stridewise import modes
        return {m.name: m.algorithm for m in modes.registered()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
