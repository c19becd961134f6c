"""scalar: as contiguous, with device scalars read once and host scalars as parameters."""
from __future__ import annotations

from stridewise.algorithms import Scalar
from stridewise.modes import _flat
from stridewise.modes._mode import Mode, in_headers, register

MODE = register(Mode(
    "scalar", Scalar, rank=20,
    applies=lambda plan: _flat.one_run(plan, scalar=True),
    kind=_flat.dense, pack=_flat.pack,
    example=lambda new: (new((64, 256)), new(())),
    kernels=in_headers("scalar", grid=_flat.grid)))
