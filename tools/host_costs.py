"""Host cost per call of stridewise's warm call against torch's, of the warm call's parts
(the compiled fast call alone, the Python keying, the launcher alone), and of the allocation
primitives a warm allocating call could use (CUDA, 1024-element float32 tensors).

    PYTHONPATH=src python tools/host_costs.py

Each line is the best of 5 loops of 4000 calls, in microseconds per call.
"""
from __future__ import annotations

import time

import torch

import stridewise as sw
from stridewise.launch import compiled as _compiled
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins


def per_call(fn, calls=4000):
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - t)
    torch.cuda.synchronize()
    return best / calls * 1e6


def main():
    a = torch.rand(8, 128, device="cuda") + 1
    b = torch.rand(8, 128, device="cuda") + 1
    o = torch.empty_like(a)
    template = torch.empty((0,), dtype=torch.float32, device="cuda")
    new = template.new_empty_strided
    fns = {
        "stridewise out=": lambda: sw.remainder(a, b, out=o),
        "stridewise alloc": lambda: sw.remainder(a, b),
        "torch out=": lambda: torch.remainder(a, b, out=o),
        "torch alloc": lambda: torch.remainder(a, b),
        "new_empty_strided": lambda: new((8, 128), (128, 1)),
        "new_empty_strided + data_ptr": lambda: new((8, 128), (128, 1)).data_ptr(),
        "torch.empty_like": lambda: torch.empty_like(a),
        "torch.empty": lambda: torch.empty((8, 128), device="cuda"),
        "a.new_empty": lambda: a.new_empty((8, 128)),
        "a.data_ptr": lambda: a.data_ptr(),
    }
    # the warm out= call in steps: the compiled fast_call without remainder's Python frame,
    # and its launcher alone (current stream + cuLaunchKernelEx)
    sw.remainder(a, b, out=o)
    key, ptrs, _ = _ops._fast_key(_builtins.OPS["remainder"], (a, b), o, None, None, False)
    launch = _ops._CALLS[key].launch
    fns["fast_call"] = lambda: _ops._warm_call(_builtins.OPS["remainder"], (a, b), o, None, None, False, _ops._CALLS)
    fns["fast_key (Python)"] = lambda: _ops._fast_key(_builtins.OPS["remainder"], (a, b), o, None, None, False)
    fns["launcher"] = lambda: launch(ptrs, ())
    fns["empty lambda"] = lambda: None
    ext = _compiled.torch_ext()
    if ext is not None:
        fns["stridewise.launch._torch Allocator"] = ext.Allocator(template, (8, 128), (128, 1))
    print("stridewise.launch._torch:", ext)
    for name, fn in fns.items():
        print(f"{name:32s} {per_call(fn):6.2f} us", flush=True)


if __name__ == "__main__":
    main()
