"""general: any strides, at most 8 merged dims; offsets by precomputed division."""
from __future__ import annotations

from stridewise.algorithms import General
from stridewise.modes._mode import Mode, in_headers, register


def _slots(spec, tables) -> int:
    return 2 * spec.ndim


def _grid(spec, plan, alg, tables) -> tuple:
    """Elements over block x items; each dim's division as a multiply-high (magic, shift)."""
    from stridewise.backends.cuda import _magic

    items = alg.items_per_thread
    facts = [x for d in plan.shape for x in _magic(d, spec.index_bits)]
    return -(-plan.n // (alg.block_size * items)), items, 0, facts


MODE = register(Mode(
    "general", General, rank=1000,      # last: it runs every plan
    applies=lambda plan: True,
    kind=lambda plan, k, share_rows: "strided",
    pack=lambda plan, kinds, cap: (1, 0),
    example=lambda new: (new((64, 512))[:, ::2], new((64, 1))),
    kernels=in_headers("general", slots=_slots, grid=_grid)))
