"""Capabilities: correctness facts per backend and device that no setting changes."""
from __future__ import annotations

from dataclasses import dataclass

from stridewise.operands.dtypes import supported_names

__all__ = ["Capabilities", "capabilities"]


@dataclass(frozen=True)
class Capabilities:
    """What a backend on one device can run.

    Attributes
    ----------
    backend : "cpu" or "cuda".
    dtypes : dtype names the backend computes in.
    max_block_size : most threads per block (None: the backend has no blocks).
    max_pack_bytes : widest single vector access.
    modes : the modes it runs (None: every registered mode with a kernel for `backend`).
    knobs : the algorithm fields the backend reads (None: all); _fill leaves the others unset.
    alike : operand kinds the backend's loads read as another kind, (kind, as) pairs: one
        kernel serves both, so a layout that differs only there compiles nothing new.
    """

    backend: str
    dtypes: tuple
    max_block_size: int | None
    max_pack_bytes: int
    modes: tuple | None = None
    knobs: tuple | None = None
    alike: tuple = ()

    def _supports_dtype(self, name: str) -> bool:
        return name in self.dtypes

    def _supports_mode(self, mode: str) -> bool:
        if self.modes is None:
            from stridewise import modes
            return modes.runs_on(mode, self.backend)
        return mode in self.modes

    def _supports_block_size(self, block: int) -> bool:
        return self.max_block_size is None or block <= self.max_block_size

    def _reads(self, field: str) -> bool:
        return self.knobs is None or field in self.knobs

    def _kernel_kinds(self, kinds: tuple) -> tuple:
        """`kinds` as the backend's kernels read them (alike)."""
        alike = dict(self.alike)
        return tuple(alike.get(k, k) for k in kinds)


# The host loops have no blocks and pick their own tiles (cpu/loops.h): only the pack, and
# share_rows through the operand kinds (an outer product's divisor prepared once per batch).
# Their vector loads take any address, so an input whose packs straddle the output's
# ("shifted", pack.h load_shifted) is read as a dense one: misaligned views and odd rows reuse
# the aligned layouts' kernels (147 fewer of a cold test run's 3384 builds).
CPU = Capabilities("cpu", supported_names(), None, 16, knobs=("pack", "share_rows"),
                   alike=(("shifted", "dense"), ("repeated_shifted", "repeated")))
CUDA = Capabilities("cuda", supported_names(), 1024, 16)


def capabilities(backend: str, device: object = None) -> Capabilities:
    """Capabilities of `backend` (every CUDA device stridewise targets has sm_70 or newer)."""
    return {"cpu": CPU, "cuda": CUDA}[backend]
