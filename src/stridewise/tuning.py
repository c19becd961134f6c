"""Tunings: per-backend, per-device defaults for the algorithms' unset fields.

A tuning is a plain frozen value; it can never make an invalid algorithm run (capabilities
and `_check` decide that). `stridewise tune` writes measured ones.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ElementwiseTuning", "elementwise_tuning", "register_tuning"]


@dataclass(frozen=True)
class ElementwiseTuning:
    """Defaults for the elementwise algorithms.

    Attributes
    ----------
    block_size, waves, pack_bytes : OneFlow's launch defaults (256 threads, 32 waves of
        resident blocks, 16-byte packs).
    items_per_thread : packs in flight per thread per step.
    tile : tile edge for `Tiled`.
    source : where these numbers come from (device, date, command), or why they are defaults.
    """

    block_size: int = 256
    waves: int = 32
    pack_bytes: int = 16
    items_per_thread: int = 2
    tile: int = 32
    source: str = "OneFlow elementwise.cuh defaults (block 256, 32 waves, 16-byte packs); not measured here"


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
