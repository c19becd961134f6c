"""stridewise over Dask against Dask's own ufunc, on the same chunked data.

CPU (default): a dask.distributed.LocalCluster of 1, then 2, worker processes (one thread
each; Dask's nanny sets OMP_NUM_THREADS=1 in them), and Dask's synchronous scheduler:

- throughput: remainder of a (rows, cols) float64 array in (chunk, chunk) chunks by a row
  divisor, input persisted on the cluster first, result persisted (not gathered);
- per-task overhead: the same op over many tiny chunks (64 float64 each), in seconds per
  task, stridewise's sw.remainder against da.remainder (NumPy's ufunc on each chunk);
- the in-process warm call on one tiny chunk (sw.remainder against np.remainder), which is
  what a stridewise task adds to Dask's own per-task cost.

GPU (--gpu): dask arrays of CuPy chunks on one GPU, threaded scheduler: sw.remainder
against da.remainder (CuPy's ufunc on each chunk), and the per-task overhead.

GPUs (--gpus 1 2): a cluster of one worker process per GPU (dask_cuda's LocalCUDACluster where
dask-cuda is installed, else distributed workers pinned with CUDA_VISIBLE_DEVICES), the same
total data generated on the workers as CuPy chunks, on 1 and then on 2 GPUs: the scaling figure.

    PYTHONPATH=src python tools/dask_bench.py            # CPU
    PYTHONPATH=src python tools/dask_bench.py --gpu      # one GPU, CuPy chunks
    PYTHONPATH=src python tools/dask_bench.py --gpus 1 2 # one worker per GPU, 1 against 2

Runs alternate between stridewise and Dask's ufunc (--repeat each, after one warm-up);
the table gives best and median, GB/s from the median; --json writes every figure.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import stridewise as sw


def interleaved(fns, repeat):
    """Per name, (best, median) seconds: the runs alternate between the functions, so a
    shared machine's load falls on both alike; one warm-up run each (compile, load)."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: (min(ts), statistics.median(ts)) for name, ts in times.items()}


def warm_call_us(xp, a, b, calls=20000):
    """Best of 5 loops, microseconds per call on one chunk: sw.remainder, the dask task's
    chunk callable (what each task runs), and the library's own remainder."""
    from stridewise.integrations import dask as _dask
    from stridewise.launch import pipeline as _ops
    from stridewise.ops import builtins as _builtins

    chunk = _dask._Chunk(_builtins.OPS["remainder"], None, None)
    out = {}
    for name, fn in (("stridewise", sw.remainder), ("chunk", chunk), ("ufunc", xp.remainder)):
        fn(a, b)
        loops = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(calls):
                fn(a, b)
            loops.append(time.perf_counter() - t)
        out[name] = min(loops) / calls * 1e6
    return out


def _table(results, moved, tiny, label, runs, sync=lambda r: None):
    """Time sw against da on the big array and on the tiny-chunk array; print one row."""
    big, small, row = runs
    import dask.array as da

    runs_so_far = [0]

    def job(fn, a, d):
        def go():
            # A new divisor each run gives new keys: a graph identical to one whose results
            # the scheduler still holds (released asynchronously) would not run at all.
            runs_so_far[0] += 1
            div = d * (1 + runs_so_far[0] * 2.0**-40)
            if getattr(div, "ndim", 0):     # the same dask row for both: one (1, chunk) block
                div = da.from_array(div, chunks=(1, a.chunksize[-1]), asarray=False)
            r = fn(a, div).persist()
            sync(r)
        return go

    t = interleaved({"sw": job(sw.remainder, big, row), "da": job(da.remainder, big, row),
                     "sw_task": job(sw.remainder, small, 1.5),
                     "da_task": job(da.remainder, small, 1.5)}, results["repeat"])
    results[label] = {k: {"best_s": b, "median_s": m} for k, (b, m) in t.items()}
    (sb, sm), (db, dm) = t["sw"], t["da"]
    print(f"{label:<13}{sb:>8.3f}{sm:>8.3f}{db:>8.3f}{dm:>8.3f}{moved / sm:>9.2f}{moved / dm:>9.2f}"
          f"{t['sw_task'][1] / tiny * 1e6:>11.0f}{t['da_task'][1] / tiny * 1e6:>11.0f}")


def _in_task_ms(x, row):
    """Median time a worker spends computing one task (Dask's task stream), per side: the
    work itself, without scheduling, on a machine where the scheduler's share varies."""
    import dask.array as da
    from dask.distributed import get_task_stream, wait

    out = {}
    for k, (name, fn) in enumerate((("sw", sw.remainder), ("da", da.remainder))):
        div = da.from_array(row * (1 - (k + 1) * 2.0**-40), chunks=(1, x.chunksize[-1]))
        with get_task_stream() as ts:
            r = fn(x, div).persist()
            wait(r)
        spans = [s["stop"] - s["start"] for task in ts.data if "remainder" in task["key"][0]
                 for s in task["startstops"] if s["action"] == "compute"]
        out[name] = statistics.median(spans) * 1e3
        del r
    return out


HEADER = (f"{'scheduler':<13}{'sw best':>8}{'median':>8}{'da best':>8}{'median':>8}"
          f"{'sw GB/s':>9}{'da GB/s':>9}{'sw us/task':>11}{'da us/task':>11}")


def cpu(args):
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster, wait

    rng = np.random.default_rng(0)
    rows, cols, c, tiny = args.rows, args.cols, args.chunk, args.tiny
    x_np = rng.uniform(-100, 100, (rows, cols))
    row_np = rng.uniform(0.5, 3.0, (1, cols))
    t_np = rng.uniform(-100, 100, tiny * 64)
    results = {"rows": rows, "cols": cols, "chunk": c, "tiny_tasks": tiny, "repeat": args.repeat}
    moved = 2 * x_np.nbytes / 1e9          # read x, write the result (the row is tiny)
    print(f"remainder of {rows}x{cols} float64 ({x_np.nbytes / 2**20:.0f} MiB) in {c}x{c} "
          f"chunks ({-(-rows // c) * -(-cols // c)} tasks) by a (1, {cols}) row, and of "
          f"{tiny} chunks of 64 float64 by 1.5 (us/task: median run / tasks); seconds")
    print(HEADER)
    for workers in args.workers:
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster):
            x = da.from_array(x_np, chunks=c).persist()
            t = da.from_array(t_np, chunks=64).persist()
            wait([x, t])
            label = f"{workers} worker{'s' * (workers > 1)}"
            _table(results, moved, tiny, label, (x, t, row_np), wait)
            results[label]["in_task_ms"] = in_task = _in_task_ms(x, row_np)
            print(f"{label}: median compute inside a worker per {c}x{c} task: sw "
                  f"{in_task['sw']:.1f} ms, da {in_task['da']:.1f} ms")
    with dask.config.set(scheduler="sync"):
        x = da.from_array(x_np, chunks=c).persist()
        t = da.from_array(t_np, chunks=64).persist()
        _table(results, moved, tiny, "synchronous", (x, t, row_np))
    w = warm_call_us(np, t_np[:64], 1.5)
    results["warm_call_us"] = w
    print(f"one 64-element chunk, warm, in this process: sw.remainder {w['stridewise']:.2f} us, "
          f"the task's chunk call {w['chunk']:.2f} us, np.remainder {w['ufunc']:.2f} us")
    return results


def gpu(args):
    import cupy as cp
    import dask
    import dask.array as da

    rng = cp.random.RandomState(0)
    rows, cols, c, tiny = args.rows, args.cols, args.chunk, args.tiny
    x_cp = rng.uniform(-100, 100, (rows, cols))
    row_cp = rng.uniform(0.5, 3.0, (1, cols))
    t_cp = rng.uniform(-100, 100, tiny * 64)
    results = {"rows": rows, "cols": cols, "chunk": c, "tiny_tasks": tiny, "repeat": args.repeat,
               "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    moved = 2 * x_cp.nbytes / 1e9
    x = da.from_array(x_cp, chunks=c, asarray=False).persist(scheduler="sync")
    t = da.from_array(t_cp, chunks=64, asarray=False).persist(scheduler="sync")
    print(f"CuPy chunks on {results['device']}: remainder of {rows}x{cols} float64 in {c}x{c} "
          f"chunks by a (1, {cols}) row, and of {tiny} chunks of 64 float64 by 1.5; seconds")
    print(HEADER)
    for sched in ("threads", "sync"):
        with dask.config.set(scheduler=sched):
            _table(results, moved, tiny, sched, (x, t, row_cp),
                   lambda r: cp.cuda.Device().synchronize())
    w = warm_call_us(cp, t_cp[:64], 1.5)
    results["warm_call_us"] = w
    print(f"one 64-element chunk, warm: sw.remainder {w['stridewise']:.2f} us, the task's chunk "
          f"call {w['chunk']:.2f} us, cp.remainder {w['ufunc']:.2f} us")
    return results


def gpu_cluster(n: int):
    """A cluster of n worker processes, one per GPU (devices 0..n-1), one thread each."""
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        from dask.distributed import Nanny, Scheduler, SpecCluster

        workers = {f"gpu{i}": {"cls": Nanny, "options": {
            "nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(i)}}} for i in range(n)}
        return SpecCluster(workers=workers, scheduler={
            "cls": Scheduler, "options": {"dashboard_address": ":0"}})
    return LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(n)), threads_per_worker=1)


def cupy_uniform(shape, chunks, seed, lo=-100.0, hi=100.0):
    """A dask array of CuPy chunks drawn on the workers: no chunk crosses a process."""
    import cupy as cp
    import dask.array as da

    return da.random.RandomState(seed, RandomState=cp.random.RandomState).uniform(
        lo, hi, shape, chunks=chunks)


def gpus(args):
    import cupy as cp
    import dask.array as da
    from dask.distributed import Client, wait

    rows, cols, c = args.rows, args.cols, args.chunk
    have = cp.cuda.runtime.getDeviceCount()
    results = {"rows": rows, "cols": cols, "chunk": c, "repeat": args.repeat, "gpus_present": have,
               "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    moved = 2 * rows * cols * 8 / 1e9
    print(f"{have} GPU(s), {results['device']}: remainder of {rows}x{cols} float64 "
          f"({rows * cols * 8 / 2**30:.1f} GiB) in {c}x{c} CuPy chunks by a (1, {cols}) row, "
          f"one worker per GPU; seconds")
    print(f"{'GPUs':<6}{'sw best':>9}{'median':>9}{'da best':>9}{'median':>9}{'sw GB/s':>9}"
          f"{'da GB/s':>9}")
    for n in args.gpus:
        if n > have:
            print(f"{n:<6}skipped: this machine has {have} GPU(s)")
            results[f"{n} gpus"] = "skipped"
            continue
        with gpu_cluster(n) as cluster, Client(cluster) as client:
            x = cupy_uniform((rows, cols), c, 0).persist()
            row = cupy_uniform((1, cols), (1, c), 1, 0.5, 3.0).persist()
            wait([x, row])
            done = [0]

            def job(fn):
                def go():
                    done[0] += 1          # new keys each run (see _table)
                    wait(fn(x, row * (1 + done[0] * 2.0**-40)).persist())
                return go

            t = interleaved({"sw": job(sw.remainder), "da": job(da.remainder)}, args.repeat)
            (sb, sm), (db, dm) = t["sw"], t["da"]
            ok = bool(da.all(sw.remainder(x, row) == da.remainder(x, row)).compute())
            results[f"{n} gpus"] = {"sw": {"best_s": sb, "median_s": sm},
                                    "da": {"best_s": db, "median_s": dm}, "equal": ok,
                                    "workers": len(client.scheduler_info()["workers"])}
            print(f"{n:<6}{sb:>9.4f}{sm:>9.4f}{db:>9.4f}{dm:>9.4f}{moved / sm:>9.1f}"
                  f"{moved / dm:>9.1f}  results equal: {ok}")
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", action="store_true", help="CuPy chunks on one GPU")
    ap.add_argument("--gpus", type=int, nargs="+", help="one worker per GPU, for each count")
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--chunk", type=int, default=1024)
    ap.add_argument("--tiny", type=int, default=2000, help="tasks in the overhead run")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    results = gpus(args) if args.gpus else gpu(args) if args.gpu else cpu(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
