"""Modes: one registered `Mode` per way of walking a planned problem.

A mode is one module (here, or anywhere that calls `register`) plus its loop in the headers
(a section of cpu/loops.h and of cuda/kernels.cuh). Its `Mode` holds when it applies to a
plan and how it reads each operand (plan), the public algorithm that selects it and its
rank among Auto's choices (resolve), and per backend the template its entry point
instantiates with that kernel's launch facts and grid (codegen, backends). The other
stages read the registry and name no mode.
"""
from __future__ import annotations

from stridewise.modes._mode import Kernel, Mode, auto, by_rank, fallback, get, in_headers, names, register, \
    registered, runs_on, unregister

# The shipped modes, registered in this order (Plan.MODES); Auto goes by rank.
from stridewise.modes import contiguous, scalar, rows, short_rows, tiled, general  # noqa: E402,F401

__all__ = ["Mode", "Kernel", "register", "unregister", "get", "registered", "names", "auto",
           "fallback", "by_rank", "runs_on", "in_headers"]
