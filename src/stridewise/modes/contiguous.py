"""contiguous: every operand is one dense run (1-d after merging), no scalars."""
from __future__ import annotations

from stridewise.algorithms import Contiguous
from stridewise.modes import _flat
from stridewise.modes._mode import Mode, in_headers, register


def _args(spec, tables) -> str:
    """Packs in flight per thread, where a tuning compiles them in (kernels.cuh kLoads)."""
    n = tables.lookup("loads", spec)
    return f", {n}" if n else ""


MODE = register(Mode(
    "contiguous", Contiguous, rank=10,
    applies=lambda plan: _flat.one_run(plan, scalar=False),
    kind=_flat.dense, pack=_flat.pack,
    example=lambda new: (new((64, 256)), new((64, 256))),
    kernels=in_headers("contiguous", args=_args, grid=_flat.grid)))
