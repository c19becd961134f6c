"""Every generated CUDA kernel variant compiles with NVRTC (no GPU needed).

Variants: every mode (and its operand kinds) x six dtypes x every legal pack x both index
widths, compiled in threads (NVRTC releases the GIL) for sm_90.
"""
import dataclasses
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

pytest.importorskip("cuda.core", reason="needs the cuda extra (cuda.core + NVRTC wheels)")

from stridewise import _codegen, _ops, algorithms  # noqa: E402
from stridewise._dtypes import DTYPES  # noqa: E402

pytestmark = pytest.mark.nvrtc

try:
    from cuda.bindings import nvrtc

    nvrtc.nvrtcVersion()
except Exception as e:  # pragma: no cover
    pytest.skip(f"NVRTC is not loadable: {e}", allow_module_level=True)

from stridewise.backends import cuda  # noqa: E402

ARCH = "sm_90"


def _base_specs():
    """One planned float32 problem per (mode, operand kinds) worth compiling."""
    f = np.float32
    a = np.ones((64, 256), f)
    cases = {
        "contiguous": ((a, a), None),
        "scalar/device": ((a, np.ones((), f)), None),
        "scalar/host": ((a, 2.5), None),
        "rows/dense": ((a, np.ones(256, f)), algorithms.Rows()),
        "rows/strided+bcast": ((np.ones((64, 512), f)[:, ::2], np.ones((64, 1), f)), algorithms.Rows()),
        "short_rows": ((np.ones((100, 6), f), np.ones((1, 6), f)), None),
        "tiled": ((np.ones((256, 64), f).T, a), None),
        "general": ((np.ones((64, 512), f)[:, ::2], a.T.copy().T), algorithms.General()),
    }
    specs = {}
    for name, (args, alg) in cases.items():
        prepared = _ops._call(_ops.REMAINDER, args, algorithm=alg, dry=True)
        assert prepared.spec.mode == name.split("/")[0], (name, prepared.spec.mode)
        specs[name] = prepared.spec
    return specs


def _variants():
    out = []
    for name, base in _base_specs().items():
        for dt in DTYPES.values():
            wide = 1 if base.mode in ("tiled", "general") else 16 // dt.itemsize
            for pack in (1, 2, 4, 8):
                if pack > wide:
                    continue
                for bits in (32, 64):
                    spec = dataclasses.replace(
                        base, arrays=(dt,) * len(base.arrays), params=(dt,) * len(base.params),
                        compute=dt, functor=_ops.REMAINDER.functor_for(dt, "torch"),
                        pack=pack, index_bits=bits)
                    out.append((f"{name}/{dt.name}/p{pack}/i{bits}", spec))
    return out


def test_every_variant_compiles(monkeypatch, tmp_path):
    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    variants = _variants()
    modes = {spec.mode for _, spec in variants}
    assert modes == set(_ops._plan.MODES)

    def build(item):
        label, spec = item
        cubin = cuda.compile(_codegen.generate(spec, cuda.entry_point), spec.entry, ARCH)
        return label, len(cubin)

    with ThreadPoolExecutor(max_workers=4) as pool:
        sizes = dict(pool.map(build, variants))
    assert len(sizes) == len(variants) > 200
    assert all(n > 0 for n in sizes.values())


def test_compile_error_names_the_kernel():
    with pytest.raises(cuda.CompileError, match="broken"):
        cuda.compile('extern "C" __global__ void broken() { nope; }', "broken", ARCH)


def test_cubin_is_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDEWISE_CACHE_DIR", str(tmp_path))
    src = 'extern "C" __global__ void k(float* o) { o[0] = 1.0f; }'
    first = cuda.compile(src, "k", ARCH)
    assert list((tmp_path / "cuda").glob("*.cubin"))
    assert cuda.compile(src, "k", ARCH) == first
