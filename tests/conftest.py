"""Shared test setup: a private kernel cache and the dtypes every test walks."""
import os
import sys
import tempfile

import pytest

# One cache per test session, so tests never depend on a user's cache and compile once.
os.environ.setdefault("STRIDEWISE_CACHE_DIR", tempfile.mkdtemp(prefix="stridewise-test-cache-"))
sys.path.insert(0, os.path.dirname(__file__))

DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; runs on the device via tools/gpu_check.sh")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _warm_paths():
    from stridewise.launch import compiled as _compiled
    from stridewise.launch import pipeline as _ops

    paths = [("python", _ops._fast_call)]
    if _compiled.warm is not None:
        paths.append(("compiled", _compiled.warm.fast_call))
    return paths


@pytest.fixture(params=[name for name, _ in _warm_paths()])
def warm_path(request, monkeypatch):
    """Each warm call path that is built (Python, and stridewise.launch._warm's): calls and the
    launchers bound from here on go through it (the warm-call memo starts empty)."""
    from stridewise.launch import compiled as _compiled
    from stridewise.launch import pipeline as _ops

    fn = dict(_warm_paths())[request.param]
    monkeypatch.setattr(_ops, "_warm_call", fn)
    if request.param == "python":
        monkeypatch.setattr(_compiled, "warm", None)
    saved = dict(_ops._CALLS)
    _ops._CALLS.clear()
    yield fn
    _ops._CALLS.clear()
    _ops._CALLS.update(saved)
