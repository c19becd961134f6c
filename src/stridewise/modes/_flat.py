"""What the flat modes share: the output is one dense run, walked in packs from a head."""
from __future__ import annotations


def one_run(plan, scalar: bool) -> bool:
    """One merged dim, every operand dense or uniform; `scalar`: some input is uniform or
    a host scalar (else none is)."""
    if plan.ndim != 1 or not all(plan.strides[k][0] == 1 for k in range(plan.nout)):
        return False
    inputs = range(plan.nout, len(plan.strides))
    uniform = [plan._uniform(k) for k in inputs]
    if not all(u or plan.strides[k][0] == 1 for k, u in zip(inputs, uniform)):
        return False
    return (any(uniform) or plan.nparams > 0) == scalar


def dense(plan, k: int, share_rows: bool) -> str:
    return "dense"


def pack(plan, kinds: list, cap: int) -> tuple[int, int]:
    """Peel a head so every dense operand's packs are aligned at once: (pack, head)."""
    cap = plan._align_to_output(kinds, plan._dense(kinds), cap, ())
    head = (-(plan.ptrs[0] // plan.itemsizes[0])) % cap if cap > 1 else 0
    return cap, min(head, plan.n)


def grid(spec, plan, alg, tables) -> tuple:
    """Packs over block x items (kernels.cuh flat_kernel)."""
    items = alg.items_per_thread
    return -(-max(1, plan.n // spec.pack) // (alg.block_size * items)), items, 0, []
