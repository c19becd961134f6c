"""Many kernel variants compiled as one NVRTC program (no GPU needed).

NVRTC parses the header library once per program, which is most of a small kernel's
compile time; CI compiles hundreds of variants, so they go in a few programs."""
from concurrent.futures import ThreadPoolExecutor

from stridewise.codegen import source as _codegen
from stridewise.backends import cuda

ARCH = "sm_90"
# NVRTC's -Ofast-compile levels for the compile-only tests: every kernel still goes through
# the front end, NVVM and ptxas (its register caps, the inline assembly), into a cubin whose
# entry points are counted. Which level compiles a set fastest depends on the set (the
# 2-core development machine, 2 threads): the mode variants take max (101 -> 67 s of CPU;
# rows 34 s against 41 at mid); every op and dtype, and the new dtypes' variants, take mid
# (every op 45.7 s at full optimization, 33.7 at mid, 65.4 at max; the new dtypes 25.0 ->
# 17.7 s, where max fails ptxas on an outlined 16-byte pack return). The GPU tests compile
# every op at full optimization on the device.
FAST = (("ofast_compile", "max"),)
MID = (("ofast_compile", "mid"),)


def batched_source(specs) -> str:
    """One translation unit holding every spec's generated kernel, each in its own namespace
    with its own entry point name (the headers' include guards keep them out of the namespaces)."""
    head = ["#include <stridewise/user.h>", "#include <stridewise/cuda/kernels.cuh>",
            "#include <stridewise/keywords.h>"]
    parts = []
    for i, spec in enumerate(specs):
        src = _codegen.generate(spec, cuda.entry_point).replace(spec.entry, f"{spec.entry}_v{i}")
        parts.append(f"namespace v{i} {{\n{src}\n}}  // namespace v{i}\n")
    return "\n".join(head + parts)


def compile_batched(specs, chunks: int = 2, options=()) -> int:
    """Compile specs in `chunks` programs, in threads (NVRTC releases the GIL); returns the
    number of the specs' entry points the cubins hold. options: ProgramOptions fields."""
    groups = [specs[k::chunks] for k in range(chunks)]

    def build(group):
        cubin = cuda.compile(batched_source(group), "batched", ARCH, options)
        return sum(f"{s.entry}_v{i}".encode() + b"\0" in cubin for i, s in enumerate(group))

    with ThreadPoolExecutor(max_workers=chunks) as pool:
        return sum(pool.map(build, [g for g in groups if g]))
