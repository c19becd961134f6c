"""Peak extra host memory: nothing beyond the output, in every mode."""
import tracemalloc

import numpy as np
import pytest

import stridewise as sw

CASES = {
    "contiguous": ((256, 256), (256, 256)),
    "scalar": ((256, 256), ()),
    "rows": ((256, 256), (256,)),
    "short_rows": ((8192, 6), (1, 6)),
    "tiled": ("T", (256, 256)),
    "general": ((256, 256), (256, 1), "strided-out"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_no_extra_memory_beyond_the_output(case):
    spec = CASES[case]
    a = np.random.default_rng(0).standard_normal((256, 256)).T.copy().T if spec[0] == "T" else \
        np.random.default_rng(0).standard_normal(spec[0])
    b = np.random.default_rng(1).standard_normal(spec[1]) + 3
    out = np.empty((256, 256, 2))[:, :, 0] if len(spec) == 3 else np.empty(np.broadcast_shapes(a.shape, b.shape))
    sw.remainder(a, b, out=out)                 # warm: compile and plan outside the measurement
    sw.remainder(a, b)
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    sw.remainder(a, b, out=out)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    assert sw.explain(sw.remainder, a, b, out=out).mode == case
    # Python bookkeeping (the packed slot record, small tuples) is a few hundred bytes;
    # a materialised broadcast or temporary would be >= 512 KiB here.
    assert peak < 4096, peak
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    r = sw.remainder(a, b)                      # allocating: the output and nothing more
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    assert peak - r.nbytes < 4096, (peak, r.nbytes)
