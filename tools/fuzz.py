"""Random differential testing of stridewise against NumPy (CPU) and torch / NumPy (GPU).

    python tools/fuzz.py [--cases N] [--seed S] [--per-key K] [--lib numpy|torch|cupy]
                         [--device cuda|cpu] [--case SEED:KEY:CASE]

On a GPU host: `--lib torch --cases 10000` (torch CUDA tensors against torch's own ops, in
torch's conventions) and `--lib cupy --cases 10000` (CuPy arrays against NumPy).

Compiles are what a fuzzer of a JIT library pays for, so the cases are drawn in two levels:
a bounded set of *kernel keys* (op x dtypes x ndim x each operand's layout and broadcast
pattern x out= layout), each of which compiles a handful of kernels at most, and then
--per-key random cases under each key (shapes, sizes of one, values, scalars). The keys run
on every core (a progress line on stderr): a key's first cases build its kernels while the
other threads run warm cases. Key i is drawn from the generator (seed, i) and case j of it from (seed, i, j), so
`--case SEED:I:J` replays one case alone, printing its operands and both results.

Values are drawn from pools that hold the hard ones: NaN, +-inf, +-0, subnormals, the
largest and smallest normals, huge and tiny magnitudes (huge quotients), integer MIN, MAX,
-1, 0 (zero divisors). Lanes whose result the oracle does not define are masked, and only
those: a float -> integer cast of NaN, inf or an out-of-range value (platform-specific in
NumPy), and, against torch, integer division by zero (torch raises on the CPU).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import stridewise as sw  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DTYPES = FLOATS + INTS + ("bool",)
OPS = ("remainder", "fmod", "floor_divide", "add", "where", "cast", "kernel")
DIVIDES = ("remainder", "fmod", "floor_divide")
LAYOUTS = ("contiguous", "transposed", "strided", "reversed", "offset", "expanded")
# A user kernel: a select, defined for every dtype (NaN compares false: y).
KERNEL = sw.ElementwiseKernel("T x, T y", "T z", "z = x < y ? x : y", name="fuzz_select")


def npdtype(name: str) -> np.dtype:
    return BF16 if name == "bfloat16" else np.dtype(name)


@dataclass(frozen=True)
class Key:
    """What selects the kernels: the op, its input dtypes (and a cast's target), the rank,
    each input's layout and broadcast pattern, and out= (None: allocated)."""
    op: str
    dtypes: tuple          # per input
    target: str | None     # cast only
    ndim: int
    inputs: tuple          # per input: ("scalar",) or (layout, drop leading dims, ones mask)
    out: str | None        # out= layout, or None
    lib: str = "numpy"     # numpy, torch or cupy

    def __str__(self) -> str:
        ins = ", ".join(f"{d}:{'scalar' if i[0] == 'scalar' else i[0] + _bshape(i)}"
                        for d, i in zip(self.dtypes, self.inputs))
        tgt = f" -> {self.target}" if self.target else ""
        return f"{self.lib} {self.op}({ins}){tgt} ndim={self.ndim} out={self.out}"


def _bshape(inp) -> str:
    _, drop, ones = inp
    return "" if not drop and not any(ones) else f"[bcast drop={drop} ones={ones}]"


def _supported(op: str) -> tuple:
    if op == "add" or op == "where" or op == "kernel":
        return DTYPES
    return FLOATS + INTS


def draw_key(rng, lib: str = "numpy") -> Key:
    """One kernel key; redrawn until NumPy (the oracle) defines the dtype combination."""
    while True:
        op = OPS[int(rng.integers(len(OPS)))]
        ndim = int(rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4]))
        pool = _supported(op)
        first = pool[int(rng.integers(len(pool)))]
        nin = {"cast": 1, "where": 3}.get(op, 2)
        dtypes = [first] * nin
        if op == "where":
            dtypes[0] = "bool"
            dtypes[2] = pool[int(rng.integers(len(pool)))] if rng.random() < 0.3 else dtypes[1]
            dtypes[1] = first
        elif op in DIVIDES + ("add",) and rng.random() < 0.3:   # a mixed-dtype pair
            dtypes[1] = pool[int(rng.integers(len(pool)))]
        target = DTYPES[int(rng.integers(len(DTYPES)))] if op == "cast" else None
        inputs = []
        for k in range(nin):
            if k > 0 and op != "kernel" and rng.random() < 0.15:
                inputs.append(("scalar",))
                continue
            layout = LAYOUTS[int(rng.integers(len(LAYOUTS)))] if rng.random() < 0.6 else "contiguous"
            if lib == "torch" and layout == "reversed":    # torch has no negative strides
                layout = "strided"
            bcast = ndim > 0 and rng.random() < 0.4
            drop = int(rng.integers(0, ndim + 1)) if bcast and rng.random() < 0.5 else 0
            ones = tuple(bool(bcast and rng.random() < 0.4) for _ in range(ndim - drop))
            inputs.append((layout, drop, ones))
        if all(i[0] == "scalar" for i in inputs):
            continue
        for k, inp in enumerate(inputs):      # a Python number: in range of the array's dtype
            if inp[0] == "scalar":
                dtypes[k] = dtypes[3 - k if op == "where" else 0]
        out = None if rng.random() < 0.6 else LAYOUTS[int(rng.integers(len(LAYOUTS) - 1))]
        if lib == "torch" and out == "reversed":
            out = "strided"
        if lib == "cupy" and "bfloat16" in dtypes + [target]:   # CuPy has no bfloat16
            continue
        if lib == "torch" and {"uint16", "uint32", "uint64"} & {*dtypes, target}:
            continue          # torch defines few ops for these ("limited support")
        key = Key(op, tuple(dtypes), target, ndim, tuple(inputs), out, lib)
        if lib != "torch" and _numpy_result(key) is None:
            continue
        return key


def _numpy_result(key: Key):
    """NumPy's result dtype for the key's operand dtypes (None: NumPy has none)."""
    if key.op == "cast":
        return npdtype(key.target)
    xs = [np.zeros(1, npdtype(d)) for d in key.dtypes]
    try:
        return np.result_type(*(xs[1:] if key.op == "where" else xs))
    except TypeError:
        return None


# -- values ---------------------------------------------------------------------------------
def value_pool(rng, name: str, divisor: bool = False) -> np.ndarray:
    """4096 values of dtype `name`, rich in the hard ones (divisors: more zeros and tiny
    magnitudes, for zero divisors and huge quotients)."""
    dt = npdtype(name)
    n = 4096
    if name == "bool":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, size=n, dtype=np.int64 if dt.kind == "i" or
                         dt.itemsize < 8 else np.uint64, endpoint=True)
        small = rng.integers(-9 if dt.kind == "i" else 0, 10, size=n)
        v = np.where(rng.random(n) < 0.5, small.astype(v.dtype), v)
        special = [info.min, info.max, 0, 1, info.min + 1, info.max - 1]
        special += [-1, -2] if dt.kind == "i" else [2, info.max // 2]
        special += [0] * (8 if divisor else 0)
        v = v.astype(dt)
        v[:len(special)] = np.array(special, dtype=object).astype(dt)
        return _with_specials(rng, v, len(special))
    fi = ml_dtypes.finfo(dt) if name == "bfloat16" else np.finfo(dt)
    big, tiny, sub = float(fi.max), float(fi.tiny), float(fi.smallest_subnormal)
    lo, hi = math.log2(sub), math.log2(big)
    mag = np.exp2(rng.uniform(lo, hi, size=n))                 # every binade
    near = rng.standard_normal(n) * 10.0 ** rng.integers(-2, 4, size=n)
    ints = rng.integers(-9, 10, size=n).astype(np.float64)
    subs = rng.integers(1, 1 << 10, size=n) * sub
    kind = rng.random(n)
    v = np.where(kind < 0.3, mag, np.where(kind < 0.6, near, np.where(kind < 0.8, ints, subs)))
    v = v * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, big, -big, tiny, -tiny, sub, -sub,
               1.0, -1.0, big / 3, float(fi.eps), 0.5, -0.5]
    special += [0.0, -0.0, sub, -sub, tiny] * (4 if divisor else 0)
    v[:len(special)] = special
    with np.errstate(over="ignore"):
        out = v.astype(np.float32).astype(dt) if dt.itemsize == 2 else v.astype(dt)
    return _with_specials(rng, out, len(special))


def _with_specials(rng, v: np.ndarray, nspecial: int, share: float = 0.2) -> np.ndarray:
    """v (its first `nspecial` entries the special values) with a `share` of its entries
    redrawn from those: each special then meets each other one often enough (integer
    MIN % -1 in about one pair of 1000 for int32), not once in millions."""
    specials = v[:nspecial]
    pick = rng.random(v.size) < share
    v = v.copy()
    v[pick] = specials[rng.integers(specials.size, size=int(pick.sum()))]
    return rng.permutation(v)


# -- layouts --------------------------------------------------------------------------------
def in_layout(x, layout: str, xp=np):
    """The same values (or, for expanded, the first along the last axis repeated) held in
    another memory layout; `xp`: NumPy or CuPy."""
    if x.ndim == 0 or layout == "contiguous":
        return x
    if layout == "transposed":
        return xp.asfortranarray(x) if x.ndim >= 2 else x
    if layout == "strided":
        wide = xp.repeat(x, 2, axis=-1)
        return wide[..., ::2]
    if layout == "reversed":
        return xp.flip(xp.ascontiguousarray(xp.flip(x, 0)), 0)
    if layout == "offset":                    # one element past an aligned start
        flat = xp.empty(x.size + 1, x.dtype)
        y = flat[1:].reshape(x.shape)
        y[...] = x
        return y
    if layout == "expanded":                  # a stride-0 last axis
        return xp.broadcast_to(x[..., :1], x.shape)
    raise ValueError(layout)


# -- one case -------------------------------------------------------------------------------
@dataclass
class Case:
    key: Key
    args: tuple            # operands as NumPy arrays (laid out) or Python scalars
    out: np.ndarray | None
    ident: str


_POOLS: dict = {}


def _pool(seed, i, k, name, divisor):
    ck = (seed, i, k)
    if ck not in _POOLS:
        _POOLS[ck] = value_pool(np.random.default_rng([seed, i, 1 << 30, k]), name, divisor)
    return _POOLS[ck]


def make_case(seed: int, i: int, j: int, key: Key) -> Case:
    rng = np.random.default_rng([seed, i, j])
    shape = tuple(int(s) if rng.random() > 0.15 else 1 for s in rng.integers(2, 8, key.ndim))
    args = []
    for k, (name, inp) in enumerate(zip(key.dtypes, key.inputs)):
        divisor = key.op in DIVIDES and k == 1
        pool = _pool(seed, i, k, name, divisor)
        if inp[0] == "scalar":
            v = pool[int(rng.integers(pool.size))]
            args.append(bool(v) if name == "bool" else int(v) if name in INTS else float(v))
            continue
        layout, drop, ones = inp
        sh = tuple(1 if one else s for s, one in zip(shape[drop:], ones))
        x = pool[rng.integers(pool.size, size=sh)] if sh else np.asarray(
            pool[int(rng.integers(pool.size))])
        args.append(in_layout(np.asarray(x, npdtype(name)), layout))
    out = None
    if key.out is not None and key.lib != "torch":    # torch's: of torch's result dtype
        want = result_dtype(key, args)
        full = np.broadcast_shapes(*(np.shape(a) for a in args))
        out = in_layout(np.zeros(full, want), key.out)
        if not out.flags.writeable:           # expanded is read-only: use strided
            out = in_layout(np.zeros(full, want), "strided")
    return Case(key, tuple(args), out, f"{seed}:{i}:{j}")


def result_dtype(key: Key, args) -> np.dtype:
    """NumPy's result dtype for these operands (Python numbers are weak, NEP 50)."""
    if key.op == "cast":
        return npdtype(key.target)
    if key.op == "kernel":
        return args[0].dtype
    # the arrays first: with bfloat16, result_type(0.5, x) is float32 and result_type(x, 0.5)
    # bfloat16 (tests/oracle.py numpy_op takes the same order)
    typed = args[1:] if key.op == "where" else args
    return np.result_type(*sorted(typed, key=lambda a: not isinstance(a, np.ndarray)))


def numpy_oracle(case: Case):
    """(NumPy's result, mask of lanes it defines or None)."""
    key, args = case.key, case.args
    with np.errstate(all="ignore"):
        if key.op == "cast":
            x = args[0]
            wide = x.astype(np.float32) if x.dtype == BF16 else x
            want = np.asarray(wide.astype(npdtype(key.target)))
            defined = None
            if x.dtype.kind == "f" or x.dtype == BF16:
                if key.target in INTS:
                    info = np.iinfo(key.target)
                    w64 = x.astype(np.float64)
                    defined = (w64 >= info.min) & (w64 < -float(info.min) if info.min
                                                   else w64 < 2.0 * (info.max // 2 + 1))
            return want, defined
        if key.op == "where" and not any(isinstance(a, np.ndarray) and a.dtype == BF16 for a in args):
            return np.asarray(np.where(*args)), None
        if key.op == "kernel":
            x, y = args
            lt = np.less(*(a.astype(np.float32) if a.dtype == BF16 else a for a in (x, y)))
            return np.asarray(np.where(lt, x, y)), None
        ufunc = np.where if key.op == "where" else getattr(np, key.op)
        result = result_dtype(key, args)
        if key.op == "where":   # selected, not computed: a number is the result dtype's value
            args = [args[0]] + [a if isinstance(a, np.ndarray) else np.asarray(a, result) for a in args[1:]]
        first = int(key.op == "where")      # where's condition is a truth, not a value
        bf = [k >= first and isinstance(a, np.ndarray) and a.dtype == BF16 for k, a in enumerate(args)]
        if any(bf):      # ml_dtypes' definition written out: compute in float32, round once
            r = ufunc(*(a.astype(np.float32) if w else a for a, w in zip(args, bf)))
            return np.asarray(r.astype(result) if r.dtype == np.float32 else r), None
        return np.asarray(ufunc(*args)), None


def sw_call(case: Case):
    key, args = case.key, case.args
    if key.op == "cast":
        return sw.cast(args[0], key.target, out=case.out)
    if key.op == "kernel":
        return KERNEL(*args, out=case.out) if case.out is not None else KERNEL(*args)
    return getattr(sw, key.op)(*args, out=case.out)


def same(got: np.ndarray, want: np.ndarray, defined=None):
    """None when equal bit for bit (any NaN matches any NaN) on the defined lanes, else the
    first differing index."""
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f" or want.dtype == BF16:
        g64, w64 = got.astype(np.float64), want.astype(np.float64)
        bits = np.dtype(f"u{want.dtype.itemsize}")
        ok = (np.isnan(g64) & np.isnan(w64)) | (got.view(bits) == want.view(bits))
    else:
        ok = got == want
    if defined is not None:
        ok = ok | ~np.broadcast_to(defined, ok.shape)
    if ok.all():
        return None
    return tuple(int(i) for i in np.argwhere(~np.asarray(ok))[0])


def run_case(case: Case) -> str | None:
    """None when stridewise matches the oracle, else a description with its reproducer."""
    want, defined = numpy_oracle(case)
    try:
        got = sw_call(case)
    except Exception as e:
        return report(case, f"raised {type(e).__name__}: {str(e)[:200]}")
    if case.out is not None and got is not case.out:
        return report(case, "did not return out")
    where = same(np.asarray(got), want, defined)
    if where is None:
        return None
    if isinstance(where, str):
        return report(case, where)
    at = tuple(where)
    ins = [a if not isinstance(a, np.ndarray) else np.broadcast_to(a, want.shape)[at]
           for a in case.args]
    return report(case, f"at {at}: inputs {ins} -> got {np.asarray(got)[at]!r}, "
                        f"want {want[at]!r}")


def report(case: Case, what: str, lib: str = "numpy") -> str:
    shapes = [f"{a.dtype}{list(a.shape)} strides {a.strides}" if isinstance(a, np.ndarray)
              else f"{type(a).__name__} {a!r}" for a in case.args]
    out = "" if case.out is None else f", out {case.out.dtype}{list(case.out.shape)} " \
                                      f"strides {case.out.strides}"
    return (f"MISMATCH {case.key}: {'; '.join(shapes)}{out}: {what}\n"
            f"  reproduce: python tools/fuzz.py --case {case.ident}"
            + ("" if lib == "numpy" else f" --lib {lib}"))


# -- GPU arrays -----------------------------------------------------------------------------
TORCH_OPS = {"add": "add", "remainder": "remainder", "fmod": "fmod",
             "floor_divide": "floor_divide"}


def torch_layout(t, layout: str):
    """in_layout for a torch tensor (no negative strides: keys for torch never draw
    reversed)."""
    import torch

    if t.dim() == 0 or layout == "contiguous":
        return t
    if layout == "transposed":
        return t.permute(*reversed(range(t.dim()))).contiguous().permute(
            *reversed(range(t.dim()))) if t.dim() >= 2 else t
    if layout == "strided":
        return torch.repeat_interleave(t, 2, dim=-1)[..., ::2]
    if layout == "offset":
        flat = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
        y = flat[1:].view(t.shape)
        y.copy_(t)
        return y
    if layout == "expanded":
        return t[..., :1].expand(t.shape)
    raise ValueError(layout)


def to_torch(x, device: str):
    """A NumPy operand (laid out) as a torch tensor on `device` in the same layout."""
    import torch

    if not isinstance(x, np.ndarray):
        return x
    dense = np.array(x, order="C")        # a writable copy (broadcast views are read-only)
    if x.dtype == BF16:
        t = torch.from_numpy(dense.view(np.int16)).view(torch.bfloat16)
    elif x.dtype.kind == "u" and x.dtype.itemsize > 1:     # from_numpy lacks some unsigned
        t = torch.from_numpy(dense.view(f"i{x.dtype.itemsize}")).view(getattr(torch, x.dtype.name))
    else:
        t = torch.from_numpy(dense)
    return t.to(device)


def from_torch(t) -> np.ndarray:
    import torch

    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(BF16)
    if t.dtype in (torch.uint16, torch.uint32, torch.uint64):
        return t.view(getattr(torch, f"int{t.element_size() * 8}")).numpy().view(
            f"u{t.element_size()}")
    return t.numpy()


def torch_runner(device: str = "cuda"):
    """run_case against torch's own ops on `device`, in torch's conventions; a case torch
    does not define (no kernel for the dtype) is None: skipped, counted apart."""
    import torch

    def lay(x, layout):
        return torch_layout(to_torch(x, device), layout) if isinstance(x, np.ndarray) else x

    def run(case: Case):
        key = case.key
        args = [lay(np.array(a, order="C") if isinstance(a, np.ndarray) else a, i[0])
                if i[0] != "scalar" else a for a, i in zip(case.args, key.inputs)]
        try:
            if key.op == "cast":
                want = args[0].to(getattr(torch, key.target))
            elif key.op == "where":
                want = torch.where(*args)
            elif key.op == "kernel":
                want = torch.where(args[0] < args[1], args[0], args[1])
            else:
                want = getattr(torch, TORCH_OPS[key.op])(*args)
        except (RuntimeError, TypeError, NotImplementedError):
            return "skip"
        out = None if key.out is None else torch_layout(torch.zeros_like(want, memory_format=torch.contiguous_format), key.out)
        tcase = Case(key, tuple(args), out, case.ident)
        defined = None
        x0 = case.args[0]
        if key.op == "cast" and key.target in INTS and (x0.dtype.kind == "f" or x0.dtype == BF16):
            defined = numpy_oracle(case)[1]
        elif key.op in DIVIDES and not want.dtype.is_floating_point:
            b = case.args[1]
            defined = np.broadcast_to(np.asarray(b) != 0, tuple(want.shape))
        elif device == "cpu" and key.op in ("fmod", "remainder"):
            # torch's CPU vector kernels return NaN where a tiny divisor meets a huge quotient
            # (fmod(-9, -9.5e-40) in a tensor of 64: its scalar path and CUDA give the exact
            # -1.6e-41, NumPy's value; docs/semantics.md, Oracles): torch CPU does not define
            # those lanes, NumPy's finite result does
            exact = np.broadcast_to(numpy_oracle(case)[0], tuple(want.shape))
            defined = ~(np.isnan(from_torch(want).astype(np.float64)) & ~np.isnan(exact.astype(np.float64)))
        try:
            got = sw_call(tcase)
        except Exception as e:
            return report(case, f"raised {type(e).__name__}: {str(e)[:200]}", key.lib)
        if out is not None and got is not out:
            return report(case, "did not return out", key.lib)
        where = same(from_torch(got), from_torch(want), defined)
        if where is None:
            return None
        return report(case, where if isinstance(where, str) else
                      f"at {where}: got {from_torch(got)[where]!r}, want {from_torch(want)[where]!r}",
                      key.lib)
    return run


def cupy_runner(xp=None):
    """run_case on CuPy arrays (NumPy's conventions), against NumPy on the host copies.
    `xp`: the array module (NumPy itself exercises the harness where there is no GPU)."""
    if xp is None:
        import cupy as xp

    def dev(x, layout):
        if not isinstance(x, np.ndarray):
            return x
        # bit for bit, shape kept: through a 1-d copy (np.ascontiguousarray makes a 0-d array
        # (1,), and CuPy's fill writes any value equal to 0 with a memset, -0.0 included)
        flat = xp.asarray(np.array(x, order="C").reshape(-1))
        return in_layout(flat.reshape(x.shape), layout, xp)

    def run(case: Case):
        key = case.key
        want, defined = numpy_oracle(case)
        args = tuple(dev(a, i[0]) if i[0] != "scalar" else a
                     for a, i in zip(case.args, key.inputs))
        out = None if case.out is None else in_layout(xp.zeros(want.shape, want.dtype),
                                                      key.out, xp)
        try:
            got = sw_call(Case(key, args, out, case.ident))
        except Exception as e:
            return report(case, f"raised {type(e).__name__}: {str(e)[:200]}", key.lib)
        if out is not None and got is not out:
            return report(case, "did not return out", key.lib)
        host = xp.asnumpy(got) if hasattr(xp, "asnumpy") else np.asarray(got)
        where = same(np.asarray(host), want, defined)
        if where is None:
            return None
        return report(case, where if isinstance(where, str) else
                      f"at {where}: got {np.asarray(host)[where]!r}, want {want[where]!r}",
                      key.lib)
    return run


# -- the run --------------------------------------------------------------------------------
def keys_for(seed: int, cases: int, per_key: int, lib: str = "numpy") -> list:
    n = max(1, math.ceil(cases / per_key))
    return [draw_key(np.random.default_rng([seed, i]), lib) for i in range(n)]


def _progress(label: str, done: int, total: int, t0: float) -> None:
    if sys.stderr.isatty() or os.environ.get("STRIDEWISE_PROGRESS"):
        print(f"\r  {label} {done}/{total} ({time.perf_counter() - t0:.0f} s)", end="",
              file=sys.stderr, flush=True)


def fuzz(cases: int, seed: int, per_key: int = 500, runner=None, maker=None,
         lib: str = "numpy", log=print) -> dict:
    """`cases` random calls in keys of `per_key`, the keys spread over every core (a key's
    first cases build its kernels; one thread's build overlaps the others' cases).
    Returns {cases, mismatches, keys, bad_keys, kernels, compiles, seconds, seed, failures:
    the first report of each key that failed}."""
    from stridewise import cache as _cache
    from stridewise.launch import pipeline as _ops

    runner = runner or run_case
    maker = maker or make_case
    keys = keys_for(seed, cases, per_key, lib)
    counts = [per_key] * len(keys)
    counts[-1] = cases - per_key * (len(keys) - 1)
    kernels0, builds0 = len(_ops._KERNELS), sum(_cache.builds.values())
    t0 = time.perf_counter()
    done = [0, 0]

    def one_key(i):
        notes = [runner(maker(seed, i, j, keys[i])) for j in range(counts[i])]
        done[0] += 1
        done[1] += counts[i]
        _progress(f"keys done ({done[1]} cases)", done[0], len(keys), t0)
        return [n for n in notes if n not in (None, "skip")], notes.count("skip")
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        results = list(pool.map(one_key, range(len(keys))))
    per, skipped = [r[0] for r in results], sum(r[1] for r in results)
    if sys.stderr.isatty() or os.environ.get("STRIDEWISE_PROGRESS"):
        print(file=sys.stderr)
    firsts = [f"{bad[0]}\n  ({len(bad)} of this key's {counts[i]} cases)"
              for i, bad in enumerate(per) if bad]
    for f in firsts:
        log(f)
    return {"cases": cases - skipped, "skipped": skipped, "lib": lib,
            "mismatches": sum(map(len, per)), "keys": len(keys),
            "bad_keys": len(firsts), "kernels": len(_ops._KERNELS) - kernels0,
            "compiles": sum(_cache.builds.values()) - builds0,
            "seconds": time.perf_counter() - t0, "failures": firsts, "seed": seed}


def summary(r: dict) -> str:
    oracle = "torch" if r["lib"] == "torch" else "NumPy"
    return (f"{r['lib']} arrays vs {oracle}: {r['cases']} cases, {r['mismatches']} mismatches "
            f"in {r['bad_keys']} of {r['keys']} keys; {r['kernels']} kernels "
            f"({r['compiles']} compiled), {r['seconds']:.0f} s, seed {r['seed']}"
            + (f"; {r['skipped']} cases the oracle does not define, skipped"
               if r["skipped"] else ""))


def runner_for(lib: str, device: str = "cuda"):
    return {"numpy": lambda: run_case, "torch": lambda: torch_runner(device),
            "cupy": cupy_runner}[lib]()


def replay(ident: str, lib: str = "numpy", device: str = "cuda") -> int:
    seed, i, j = (int(x) for x in ident.split(":"))
    key = draw_key(np.random.default_rng([seed, i]), lib)
    case = make_case(seed, i, j, key)
    np.set_printoptions(threshold=10_000)
    print(f"key {i}: {key}")
    for n, a in enumerate(case.args):
        print(f"arg {n}: {a!r}" + (f" strides {a.strides}" if isinstance(a, np.ndarray) else ""))
    if lib == "numpy":
        want, defined = numpy_oracle(case)
        print(f"want (NumPy): {want!r}")
        if defined is not None:
            print(f"defined lanes: {defined!r}")
        try:
            print(f"got (stridewise): {np.asarray(sw_call(case))!r}")
        except Exception as e:
            print(f"stridewise raised {type(e).__name__}: {e}")
    r = runner_for(lib, device)(case)
    print(r or "match")
    return 1 if r not in (None, "skip") else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--per-key", type=int, default=1000, help="cases per kernel key")
    ap.add_argument("--lib", default="numpy", choices=["numpy", "torch", "cupy"],
                    help="the arrays: NumPy (CPU), torch tensors on --device, CuPy arrays")
    ap.add_argument("--device", default="cuda", help="torch's device (cpu runs the harness)")
    ap.add_argument("--case", help="SEED:KEY:CASE: replay one case and print it")
    args = ap.parse_args(argv)
    if args.case:
        return replay(args.case, args.lib, args.device)
    r = fuzz(args.cases, args.seed, args.per_key, runner=runner_for(args.lib, args.device),
             lib=args.lib)
    print(summary(r))
    return 1 if r["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
