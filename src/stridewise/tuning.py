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


# H200, 2026-11-30, tools/tune_gpu.py (remainder, 2^27 outputs, items {1,2,4,8} x block
# {128,256,512}): 128-thread blocks were fastest or within 2% in 22 of 24 cells (the register-
# heavy rows kernels fit more threads per SM in small blocks: row float32 3778 GB/s at 128
# against 3516 at 256 and 2500 at 512), and 4 packs per thread beat 2 in the flat modes
# (contiguous float16 4058 against 3753 GB/s, short_rows float64 3594 against 3105).
# The tiled kernel (permuted view): tiles of 32 rows by 32 packs at block 128 beat tiles of 16
# and blocks of 256 and 512 in all six dtypes (bench/NOTES.md G10), and, with the register
# blocks of G15, tiles of 16 and 64 (3-12% slower) and blocks of 256 in four dtypes (with
# the tile groups of G22, 16-bit and float32 run faster at 256: below).
# Sharing a repeated row's divisor work paid in every dtype's outer products, where that work
# is most of the element's (float64 +11%, int32 +18%, int64 +21%; with the divisor prepared
# once per batch (G26), float16 +16% and bfloat16 +11% over not sharing, int32 another +14%;
# float32 -3% until its work units shrank to 2 batches (G30: +2.6%)); with a dense dividend,
# row or crossed, it measured slower, so Auto() shares in outer products (G13, G26, G30), and
# in int64 wherever a row repeats: crossed 3-d +4% (3749-3774 -> 3907-3933 GB/s), a row
# broadcast flat (4069-4085 -> 4076-4090); int32 lost 2% there, the others moved under 0.5%
# (session 16, G41).
# The flat streams (contiguous, scalar) at 2 packs per thread: against 4, +0.5-2.5% in 34 of
# 36 (case, dtype, run) cells of two tune_gpu runs at block 128 (session 11, G32; float16
# scalars excepted, below), where they run at the copy roofline beside torch eager.
# A block per unit of work up to 2^31 elements (1024 waves): a grid-stride loop over 32
# waves lost 1-12% at 2^30 outputs in every mode (permuted float16 3647 against 4150 GB/s,
# row float32 3976 against 4139, contiguous float32 4202 against 4391; G35). Not in
# short_rows, where a block builds its period tables once for all its steps: 1024 waves
# lost 2-6% there in float64 and int64 at 2^27 (float32 flat), so it keeps 32 or fewer.
# Dense loads with an L2 evict_last policy (keep_loads, G44; one H200, tools/auto_ab.py
# --anchor, four calls on three machines): contiguous +1.0-1.3% in float32, float16, int32
# and int64 (int32 4270-4275 -> 4318-4325 GB/s, 0.995x -> 1.007x torch eager); below, the
# dtypes where it also paid in other modes. It lost elsewhere: python scalars in float32 8%,
# int64 row and crossed 3-d 12%, int64 short rows 4%.
_CUDA = ElementwiseTuning(
    block_size=128, items_per_thread=4, waves=1024, tile=32, share_rows=True,
    modes=(("contiguous", "items_per_thread", 2), ("scalar", "items_per_thread", 2),
           ("short_rows", "waves", 32), ("contiguous", "keep_loads", True)),
    source="H200 2026-11-30, tools/tune_gpu.py: block 128 and 4 packs per thread "
           "(bench/NOTES.md G3), 2 in flat streams (G32), 1024 waves (G35), tile 32 "
           "(G10, G15), share_rows (G13, G26, G30), keep_loads in contiguous (G44)")
register_tuning("cuda", None, _CUDA)
# Per dtype (one H200, tools/tune_gpu.py, bench/NOTES.md G22, G23, G25, G36, G39). Permuted
# views, before G39: 16-bit tiles in groups of 4 along j at block 256 (+9%: 3650 -> 3990 GB/s;
# half of such a block's threads find no P x P block of a 16-bit tile, and the fewer tiles in
# flight per SM measured faster than block 128's +4%), float64 in groups of 2 (+3%), float32
# at block 256 (+3-4% in four A/B calls; int32 equal there, so it keeps 128). Float16 scalar
# kernels keep 4 packs per thread (+1.5% over 2 in G32's runs: 3936 against 3874 GB/s), short
# rows at 8 in 16-bit and int32 (+2-4%: float16 3581 -> 3738; int64 and the others flat), and
# there with fewer blocks (4 waves in 16-bit, 8 in int32: +2.5-4.5%), each building its period
# tables once for more packs. int32 and float32 permuted views in groups of 2 too (session 12,
# G36, two rounds: int32 3992-4004 -> 4051-4067 GB/s, float32 4093-4148 -> 4145-4172; groups
# of 4 in between).
# Session 14 (G39): permuted views in tiles 8 packs wide and taller than square (rows from
# backends/cuda.py _TILE_ROWS): 16-bit at 128 rows and block 128, every thread a P x P
# block's, in groups of 4 (+2-3% over the above); float32, float64 and int64 at 64 rows
# (+1-2%); int32 stays at square tiles of 32.
# Session 17 (G44): keep_loads also in float16 scalar kernels (python scalar and 0-d tensor
# +4.4-4.6%: 3982 -> 4164 GB/s) and in float32 rows and short rows (row +4%, crossed 3-d
# +3.5%, short rows +2-4%).
# Session 18 (G45): int32 permuted views stage their transposed tiles in shared memory
# (tools/auto_ab.py, one H200, two calls of three rounds: 3865-4060 -> 4063-4135 GB/s); the
# other dtypes lost with it (float16 2-4%, int64 5%, float32 28%).
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
            f"{k}={v}" for k, v in _fields.items()) + " (G22, G23, G25, G36, G39, G41, G44, G45)"), _dtype)
