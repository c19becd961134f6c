"""The mode registry is the one place a mode lives: a toy mode registered from this module
(its algorithm, its predicate, its loops as kernel text) runs end to end, and leaves nothing
behind when it is unregistered."""
import contextlib
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import stridewise as sw
from conftest import DTYPES
from oracle import numpy_op, numpy_remainder, random_values, same_bits
from stridewise import algorithms, modes
from stridewise.codegen import source as _codegen
from stridewise.launch import pipeline as _ops
from stridewise.ops import builtins as _builtins
from stridewise import plan as _plan
from stridewise.backends import cuda
from stridewise.capabilities import CPU, CUDA


@dataclasses.dataclass(frozen=True, repr=False)
class Backwards(algorithms.Algorithm):
    """The toy's public algorithm: every operand one dense run, walked last element first."""

    mode = "backwards"


# Last element first, one element at a time: a walk no shipped mode takes, so a result that
# matches NumPy comes from the toy's own loop.
CPU_LOOP = """namespace toy {
template <class Op>
void backwards_loop(const sw::Slot* slots) {
  typedef typename Op::Index Index;
  const sw::Frame<Op> f(slots);
  Index off[Op::kArrays];
  for (Index i = f.n(); i-- > 0;) {
    for (int k = 0; k < Op::kArrays; ++k) off[k] = i;
    Op::template apply<1>(f.p, off, f.u);
  }
}
}  // namespace toy
"""

CUDA_KERNEL = """namespace toy {
template <class Op>
__device__ void backwards_kernel(const sw::Slot* s, const sw::Slot* x) {
  typedef typename Op::Index Index;
  const sw::Frame<Op> f(s);
  Index off[Op::kArrays];
  const Index step = (Index)gridDim.x * blockDim.x;
  for (Index i = f.n() - 1 - ((Index)blockIdx.x * blockDim.x + threadIdx.x); i >= 0; i -= step) {
    for (int k = 0; k < Op::kArrays; ++k) off[k] = i;
    Op::template apply<1>(f.p, off, f.u);
  }
}
}  // namespace toy
"""


def _one_dense_run(plan) -> bool:
    """One merged dim and every operand unit-stride (so no scalars and no broadcast)."""
    return plan.ndim == 1 and all(st == (1,) for st in plan.strides) and plan.nparams == 0


TOY = modes.Mode(
    "backwards", Backwards, rank=5,          # before contiguous: Auto prefers it where it applies
    applies=_one_dense_run,
    kind=lambda plan, k, share_rows: "dense",
    pack=lambda plan, kinds, cap: (1, 0),    # one element per access: no alignment to keep
    example=lambda new: (new((5003,)), new((5003,))),
    kernels={
        "cpu": modes.Kernel("toy::backwards_loop", source=CPU_LOOP),
        "cuda": modes.Kernel("toy::backwards_kernel", source=CUDA_KERNEL,
                             grid=lambda spec, plan, alg, tables: (
                                 -(-plan.n // alg.block_size), alg.items_per_thread, 0, [])),
    })


@contextlib.contextmanager
def registered(mode=TOY):
    modes.register(mode)
    try:
        yield mode
    finally:
        modes.unregister(mode.name)


@pytest.fixture
def toy():
    with registered() as mode:
        yield mode
    assert "backwards" not in _plan.MODES


def _ran_toy_loop() -> bool:
    """Some kernel compiled and loaded by this process instantiates the toy's loop."""
    return any("toy::backwards_loop<Op>(s)" in source for (_, _, source) in _ops._KERNELS)


def _pair(rng, dtype, n, offset=0):
    a = random_values(rng, dtype, n + offset)[offset:]
    b = random_values(rng, dtype, n + offset)[offset:]
    return a, b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, offset", [(1, 0), (7, 0), (1000, 1), (40001, 3)])
def test_a_registered_mode_runs_end_to_end_on_the_cpu(toy, dtype, n, offset):
    rng = np.random.default_rng(n + offset)
    a, b = _pair(rng, dtype, n, offset)
    for op, oracle in ((sw.add, lambda x, y: numpy_op(np.add, x, y)), (sw.remainder, numpy_remainder)):
        e = sw.explain(op, a, b)
        assert e.mode == "backwards" and e.algorithm == Backwards(pack=1), e
        assert "mode backwards" in e.source and "toy::backwards_loop<Op>(s);" in e.source
        assert re.search(r"^ *mode  backwards$", str(e), re.M)
        assert same_bits(op(a, b), oracle(a, b)), (op, dtype, n)
        out = np.empty_like(a)
        assert op(a, b, out=out, algorithm=Backwards()) is out and same_bits(out, oracle(a, b))
    assert _ran_toy_loop()


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_registered_mode_runs_its_example_on_the_cpu(toy, dtype):
    """Each registered mode, the toy included, on its own example with its algorithm, against
    NumPy bit for bit: a new mode is run here without a case of its own."""
    rng = np.random.default_rng(17)
    assert "backwards" in [m.name for m in modes.registered()]
    for m in modes.registered():
        a, b = m.example(lambda shape: np.asarray(random_values(rng, dtype, shape)))
        alg = m.algorithm()
        assert sw.explain(sw.remainder, a, b, algorithm=alg).mode == m.name
        assert same_bits(sw.remainder(a, b, algorithm=alg), numpy_remainder(a, b)), (m.name, dtype)
        assert same_bits(sw.add(a, b, algorithm=alg), numpy_op(np.add, a, b)), (m.name, dtype)


def test_a_user_kernel_runs_in_the_registered_mode(toy):
    k = sw.ElementwiseKernel("T x, T y", "T s, T p", "s = x + y; p = x * y")
    rng = np.random.default_rng(5)
    x, y = (rng.standard_normal(5003).astype(np.float32) for _ in range(2))
    assert sw.explain(k, x, y).mode == "backwards"
    s, p = k(x, y)
    assert same_bits(s, x + y) and same_bits(p, x * y)


def test_auto_picks_it_only_where_its_predicate_holds(toy):
    f = np.float32
    cases = {   # problem -> the mode Auto runs with the toy registered
        "1-d": ((np.ones(512, f), np.ones(512, f)), "backwards"),
        "2-d dense merges to 1-d": ((np.ones((8, 64), f), np.ones((8, 64), f)), "backwards"),
        "device scalar": ((np.ones(512, f), np.ones((), f)), "scalar"),
        "host scalar": ((np.ones(512, f), 3.0), "scalar"),
        "row vector": ((np.ones((64, 256), f), np.ones(256, f)), "rows"),
        "short rows": ((np.ones((1000, 6), f), np.ones((1, 6), f)), "short_rows"),
        "transposed": ((np.ones((128, 256), f).T, np.ones((256, 128), f)), "tiled"),
        "strided 1-d": ((np.ones(1024, f)[::2], np.ones(512, f)), "rows"),
    }
    for name, ((a, b), mode) in cases.items():
        e = sw.explain(sw.add, a, b)
        p = _plan.plan(e.shape, [(e.shape, st, 4, 0) for st in e.strides], nparams=int(np.isscalar(b)))
        assert e.mode == mode, name
        assert (e.mode == "backwards") == TOY.applies(p), name
        assert same_bits(sw.add(a, b), numpy_op(np.add, a, b)), name


def test_explicit_selection_wins_and_an_invalid_one_is_a_clear_error(toy):
    f = np.float32
    a = np.arange(512, dtype=f)
    # where Auto runs the toy, an explicit algorithm of another mode still wins
    for alg, mode in ((sw.Contiguous(), "contiguous"), (sw.General(), "general"), (Backwards(), "backwards")):
        assert sw.explain(sw.add, a, a, algorithm=alg).mode == mode
        assert same_bits(sw.add(a, a, algorithm=alg), a + a)
    # where its predicate fails, the toy is refused by name, with the mode to use instead
    for args, instead in (((np.ones((64, 256), f), np.ones(256, f)), r"Rows\(\)"),
                          ((a, np.float32(2)), r"Scalar\(\)"), ((a, 2.0), r"Scalar\(\)")):
        out = np.zeros(np.broadcast_shapes(np.shape(args[0]), np.shape(args[1])), f)
        with pytest.raises(ValueError, match=r"Backwards\(\) cannot run this problem .*use Auto\(\) or "
                                             + instead):
            sw.add(*args, out=out, algorithm=Backwards())
        assert not out.any()          # nothing written
    with pytest.raises(ValueError, match=r"Backwards\(pack=4\) cannot run: .* at most pack=1"):
        sw.add(a, a, algorithm=Backwards(pack=4))


def test_the_registry_is_the_one_place_a_mode_is_listed(toy):
    assert _plan.MODES[-1] == "backwards" and "backwards" in modes.names()
    assert algorithms.ALGORITHMS["backwards"] is Backwards
    assert CPU._supports_mode("backwards") and CUDA._supports_mode("backwards")
    assert dataclasses.replace(CPU, modes=("contiguous",))._supports_mode("backwards") is False
    with pytest.raises(TypeError, match="one of .*Backwards"):
        sw.add(np.ones(4), np.ones(4), algorithm="backwards")


def test_registering_does_not_leak():
    """Unregistering forgets every call prepared under the toy: the same signature plans
    afresh (the built-in ops' memo and a user kernel's own), and MODES is as before."""
    before = _plan.MODES
    a = np.arange(1, 1001, dtype=np.float64)
    k = sw.ElementwiseKernel("T x, T y", "T z", "z = x - y")
    with registered():
        assert sw.explain(sw.add, a, a).mode == sw.explain(k, a, a).mode == "backwards"
        sw.add(a, a)
        k(a, a)
    assert _plan.MODES == before and "backwards" not in algorithms.ALGORITHMS
    assert not CPU._supports_mode("backwards")
    assert sw.explain(sw.add, a, a).mode == sw.explain(k, a, a).mode == "contiguous"
    for prepared in [*_ops._MEMO.values(), *k._memo.values()]:
        assert prepared.spec.mode != "backwards"
    assert same_bits(sw.add(a, a), a + a) and same_bits(k(a, a), a - a)
    with pytest.raises(ValueError, match=r"unknown mode 'backwards'; modes are contiguous, "):
        _plan.plan((4,), [((4,), (1,), 8, 0)]).supports("backwards")


def test_registration_is_checked():
    with registered():
        with pytest.raises(ValueError, match="already registered"):
            modes.register(TOY)
    with pytest.raises(ValueError, match=r"Backwards has mode 'backwards'; set Backwards.mode"):
        dataclasses.replace(TOY, name="other")
    cpu_only = dataclasses.replace(TOY, kernels={"cpu": TOY.kernels["cpu"]})
    with registered(cpu_only):
        assert CPU._supports_mode("backwards") and not CUDA._supports_mode("backwards")
        with pytest.raises(ValueError, match="has no cuda kernel"):
            cuda.entry_point(_ops._call(_builtins.OPS["remainder"], (np.ones(8), np.ones(8)), dry=True).spec)


def test_every_shipped_mode_is_complete():
    """Each registered mode: its algorithm names it, both backends have its template in the
    header it names, and the fallback applies to every plan."""
    include = Path(_plan.__file__).parent / "include"
    for m in modes.registered():
        assert m.algorithm.mode == m.name and issubclass(m.algorithm, algorithms.Algorithm)
        assert m.example is not None, m.name
        for backend in ("cpu", "cuda"):
            k = m.kernel(backend)
            header = (include / k.header).read_text()
            assert re.search(rf"\b{k.template.rsplit('::', 1)[1]}\s*\(", header), (m.name, backend)
            assert (k.grid is not None) == (backend == "cuda"), (m.name, backend)
    p = _plan.plan((64, 128), [((64, 128, 2), (256, 2, 1), 4, 0)])
    assert modes.fallback() == "general" and modes.get("general").applies(p) and p.mode == "general"


def test_no_stage_outside_the_registry_names_a_mode():
    """Outside stridewise/modes, sources compare no mode name and build no template from one
    (tunings key their values by mode name: data, not a branch)."""
    src = Path(_plan.__file__).parent
    branch = re.compile(r"\bmode\s*(==|!=|in)\s*[\(\"']|\{spec\.mode\}_(loop|kernel)")
    found = [f"{p.relative_to(src)}:{n}" for p in src.rglob("*.py") if "modes" not in p.parts
             and "bench" not in p.parts
             for n, line in enumerate(p.read_text().splitlines(), 1) if branch.search(line)]
    assert not found, found


@pytest.mark.nvrtc
def test_the_toy_cuda_kernel_compiles_and_sizes_its_grid(toy, monkeypatch):
    """No GPU here: the toy's CUDA kernel text, in the entry point the backend generates,
    compiles with NVRTC, and configure takes the grid from the toy's Kernel.grid."""
    pytest.importorskip("cuda.core", reason="needs the cuda extra (cuda.core + NVRTC wheels)")
    a = np.ones(100_000, np.float32)
    prepared = _ops._call(_builtins.OPS["remainder"], (a, a), dry=True)
    spec = prepared.spec
    assert spec.mode == "backwards"
    source = _codegen.generate(spec, cuda.entry_point)
    assert "toy::backwards_kernel<Op>(a.s, a.s + " in source and "struct SwArgs { sw::Slot s[" in source
    assert cuda.compile(source, spec.entry, "sm_90")[:4] == b"\x7fELF"
    monkeypatch.setattr(cuda, "_device_facts", lambda index: (132, 2048, 0))
    monkeypatch.setattr(cuda, "device_key", lambda device: ("NVIDIA H200", "sm_90"))
    config = cuda.configure(spec, prepared.plan, Backwards(block_size=256, items_per_thread=1),
                            ("cuda", 0), "numpy")
    assert config.grid == -(-100_000 // 256) and config.block == 256 and config.geometry == (1, 0)
