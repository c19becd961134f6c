"""Two GPUs: arrays on the second device from every producer, kernels and tunings per device,
and Dask with one worker per GPU. Skipped below two GPUs (torch/CAI/DLPack producers on a
device that is not current, and the current device left alone, are in test_cuda.py).
"""
import dataclasses
import sys
from pathlib import Path

import pytest

import stridewise as sw
from oracle import same_bits

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")]


def test_cupy_arrays_on_the_second_device():
    cp = pytest.importorskip("cupy")
    with cp.cuda.Device(1):
        a = cp.random.RandomState(0).uniform(-50, 50, (513, 257)).astype(cp.float32)
        b = cp.random.RandomState(1).uniform(0.5, 3, (257,)).astype(cp.float32)
        want = cp.remainder(a, b)
    with cp.cuda.Device(0):                       # the caller's current device is 0
        got = sw.remainder(a, b)
        assert cp.cuda.runtime.getDevice() == 0
    assert got.device.id == 1
    assert same_bits(cp.asnumpy(got), cp.asnumpy(want))


def test_one_kernel_on_both_devices_interleaved():
    """The same compiled kernel serves both devices: the driver loads it into each context on
    first use, and a launch on one never lands on the other."""
    results = []
    for step in range(4):
        dev = torch.device("cuda", step % 2)
        a = torch.randn(1000, 777, device=dev)
        b = torch.rand(777, device=dev) + 0.5
        got = sw.remainder(a, b)
        assert got.device == dev
        results.append(torch.equal(got, torch.remainder(a, b)))
    assert all(results)


def test_a_tuning_for_the_second_devices_name_applies_there():
    name = torch.cuda.get_device_name(1)
    base = sw.elementwise_tuning("cuda")
    mine = dataclasses.replace(base, block_size=128 if base.block_size != 128 else 512)
    a = torch.randn(4096, 512, device="cuda:1")
    b = torch.rand(512, device="cuda:1") + 0.5
    sw.register_tuning("cuda", name, mine)
    try:
        e = sw.explain(sw.remainder, a, b)
        # the registration for device 1's name is the one chosen, field by field
        assert any(name in origin for _, _, origin in e.origins), e.origins
        assert torch.equal(sw.remainder(a, b), torch.remainder(a, b))
    finally:
        from stridewise import tuning

        tuning._REGISTRY.pop(("cuda", name, None))


def test_dask_one_worker_per_gpu_matches_cupy():
    cp = pytest.importorskip("cupy")
    pytest.importorskip("dask.distributed")
    import dask.array as da
    from dask.distributed import Client

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from dask_bench import cupy_uniform, gpu_cluster

    with gpu_cluster(2) as cluster, Client(cluster) as client:
        x = cupy_uniform((2048, 1536), (512, 512), 0).persist()
        row = cupy_uniform((1, 1536), (1, 512), 1, 0.5, 3.0).persist()
        # each worker sees one device, its own: the chunks were computed on both GPUs
        seen = client.run(lambda: cp.cuda.runtime.getDeviceProperties(0)["pciBusID"])
        assert len(set(seen.values())) == 2
        # no multiply-add in it: NVRTC would contract one into an fma where CuPy's ops round twice
        k = sw.ElementwiseKernel("T x, T y", "T z", "z = sin(x) / y - x", name="mix2")
        got_r, want_r, got_k, want_k = client.compute(
            [sw.remainder(x, row), da.remainder(x, row), k(x, row),
             da.sin(x) / row - x], sync=True)
    assert same_bits(cp.asnumpy(got_r), cp.asnumpy(want_r))
    assert same_bits(cp.asnumpy(got_k), cp.asnumpy(want_k))
