"""Tunings: per-backend, per-device defaults for the algorithms' unset fields.

A tuning is a plain frozen value; it can never make an invalid algorithm run (capabilities
and `_check` decide that). tools/tune_gpu.py measures the numbers behind the CUDA ones.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["ElementwiseTuning", "elementwise_tuning", "register_tuning"]


@dataclass(frozen=True)
class ElementwiseTuning:
    """Defaults for the elementwise algorithms.

    Attributes
    ----------
    block_size, waves, pack_bytes : OneFlow's launch defaults (256 threads, 32 waves of
        resident blocks, 16-byte packs).
    items_per_thread : packs in flight per thread per step.
    tile, tile_group : tile edge and tiles per group along j for `Tiled`.
    share_rows : `Rows` reads a repeated row operand once per column of rows; applied to
        outer products (`Plan.outer`), where it measured faster.
    share_all_rows : with share_rows, also where a dense operand is read beside the row
        (a row broadcast, crossed 3-d).
    keep_loads : dense operands read with an L2 evict_last policy (`Algorithm.keep_loads`).
    stage : `Tiled` copies its transposed operands' tiles into shared memory first.
    modes : (mode, field, value) overrides for one mode's algorithm (see `for_mode`).
    source : where these numbers come from (device, date, command), or why they are defaults.
    """

    block_size: int = 256
    waves: int = 32
    pack_bytes: int = 16
    items_per_thread: int = 2
    tile: int = 32
    tile_group: int = 1
    share_rows: bool = False
    share_all_rows: bool = False
    keep_loads: bool = False
    stage: bool = False
    modes: tuple = ()
    source: str = "OneFlow elementwise.cuh defaults (block 256, 32 waves, 16-byte packs); not measured here"

    def for_mode(self, mode: str) -> "ElementwiseTuning":
        """This tuning as `mode`'s algorithm sees it: its overrides in `modes` applied."""
        fields = {f: v for m, f, v in self.modes if m == mode}
        return replace(self, **fields) if fields else self


_DEFAULT = ElementwiseTuning()
_REGISTRY: dict[tuple, ElementwiseTuning] = {}


def register_tuning(backend: str, device: str | None, tuning: ElementwiseTuning,
                    dtype: str | None = None) -> None:
    """Install `tuning` for a backend, device name (None: any) and dtype (None: any)."""
    _REGISTRY[(backend, device, dtype)] = tuning


def elementwise_tuning(backend: str, device: str | None = None, dtype: str | None = None) -> ElementwiseTuning:
    """The tuning for (backend, device, dtype), most specific registration first."""
    for key in ((backend, device, dtype), (backend, device, None), (backend, None, dtype),
                (backend, None, None)):
        if key in _REGISTRY:
            return _REGISTRY[key]
    return _DEFAULT


# The CUDA values, from one H200 (2026-11-30; remainder at 2^27 outputs, tools/tune_gpu.py and
# tools/auto_ab.py; docs/decisions.md has the figures):
# - block 128: fastest or within 2% in 22 of 24 cells (the register-heavy kernels fit more
#   threads per SM in small blocks);
# - 4 packs per thread, 2 in the flat streams (contiguous, scalar: +0.5-2.5% in 34 of 36 cells);
# - 1024 waves, a block per unit of work: a grid-stride loop over 32 waves lost 1-12% at 2^30.
#   short_rows keeps 32, since a block builds its period tables once for all of its steps;
# - tiles of 32 (16 and 64 lost 3-12%);
# - share_rows: outer products read their divisor row once per column of rows (+11-21%); with
#   a dense dividend it lost, so only outer products share (int64 beside a dense one too);
# - keep_loads (dense loads at L2 evict_last) in contiguous kernels (+1.0-1.3%); it lost in
#   float32 python scalars (-8%) and int64 rows (-12%), so it is per mode and dtype.
_CUDA = ElementwiseTuning(
    block_size=128, items_per_thread=4, waves=1024, tile=32, share_rows=True,
    modes=(("contiguous", "items_per_thread", 2), ("scalar", "items_per_thread", 2),
           ("short_rows", "waves", 32), ("contiguous", "keep_loads", True)),
    source="H200 2026-11-30, tools/tune_gpu.py: block 128 and 4 packs per thread, "
           "2 in flat streams, 1024 waves, tile 32, share_rows in outer products, "
           "keep_loads in contiguous (docs/decisions.md)")
register_tuning("cuda", None, _CUDA)
# Per dtype (same device and tools). Permuted views run in tiles 8 packs wide and taller
# than square (rows from backends/cuda.py _TILE_ROWS: +1-3%), in groups along j that let
# neighbouring blocks read one run of each staged column: 16-bit in groups of 4 (+9%), float32,
# float64 and int32 in groups of 2 (+1.5-3%), float32 at block 256 (+3-4%). int32 keeps square
# tiles and stages them in shared memory (+2-5%; every other dtype lost with staging). float16
# scalar kernels keep 4 packs per thread (+1.5% over 2); short rows take 8 packs and fewer
# blocks in 16-bit and int32 (+2-4.5%: each block builds its period tables once for more packs);
# int64 shares a repeated row beside a dense dividend (crossed 3-d +4%); keep_loads also pays
# in float16 scalar kernels (+4.5%) and float32 rows and short rows (+2-4%).
_TILED_256, _SCALAR_4 = ("tiled", "block_size", 256), ("scalar", "items_per_thread", 4)
_SHORT_8 = ("short_rows", "items_per_thread", 8)
_SHORT_16BIT, _SHORT_INT32 = (_SHORT_8, ("short_rows", "waves", 4)), (_SHORT_8, ("short_rows", "waves", 8))
_KEEP_SCALAR, _KEEP_ROWS = ("scalar", "keep_loads", True), ("rows", "keep_loads", True)
_KEEP_SHORT = ("short_rows", "keep_loads", True)
_CUDA_DTYPES = {
    "float16": dict(tile=8, tile_group=4, modes=(*_SHORT_16BIT, _SCALAR_4, _KEEP_SCALAR)),
    "bfloat16": dict(tile=8, tile_group=4, modes=_SHORT_16BIT),
    "float32": dict(tile=8, tile_group=2, modes=(_TILED_256, _KEEP_ROWS, _KEEP_SHORT)),
    "int32": dict(tile_group=2, stage=True, modes=_SHORT_INT32),
    "float64": dict(tile=8, tile_group=2),
    "int64": dict(tile=8, share_all_rows=True),
}
for _dtype, _fields in _CUDA_DTYPES.items():   # a dtype's mode overrides follow the base's
    register_tuning("cuda", None, replace(
        _CUDA, **dict(_fields, modes=_CUDA.modes + _fields.get("modes", ())),
        source=_CUDA.source + "; per dtype: " + ", ".join(
            f"{k}={v}" for k, v in _fields.items())), _dtype)
