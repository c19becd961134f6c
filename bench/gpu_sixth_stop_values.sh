#!/bin/bash
# The sixth stop's one device call (run from a copy of this tree at .wt/27f inside main's
# checkout, as the device runs it): this tree's GPU value tests for bfloat16 fmod and
# floor_divide and the capped bfloat16 outer product, then this tree against main's,
# interleaved, with torch eager anchors. Extensions of both trees are built first, in
# parallel with the tests, so neither tree times the Python warm path.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
here=$PWD; main=$(cd ../.. && pwd)
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader > "$OUT/device.txt" 2>&1
date -u >> "$OUT/device.txt"
(cd "$main" && python3 setup.py -q build_ext --inplace > "$OUT/build_main.txt" 2>&1) &
bm=$!
(cd "$here" && python3 setup.py -q build_ext --inplace > "$OUT/build_wt.txt" 2>&1) &
bw=$!
PYTHONPATH=$here/src timeout ${TEST_S:-90} python3 -m pytest -q -p no:cacheprovider \
  tests/test_cuda_bf16_ops.py ${PAIRS-"tests/test_cuda.py::test_every_16bit_pair"} -k "bfloat16 or every_bfloat16_pair" \
  tests/test_cuda_values.py::test_remainder_on_every_value_distribution \
  > "$OUT/tests.txt" 2>&1
echo "tests rc=$?" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
wait $bm $bw
timeout ${AB_S:-150} python3 tools/auto_ab.py --trees "$here,$main" --rounds ${ROUNDS:-2} --anchor \
  --cases contiguous,outer --dtypes bfloat16 \
  --values narrow,huge_quotients,subnormal_divisors,near_max \
  --op ${OPS:-remainder,fmod,floor_divide} --out "$OUT/ab.json" > "$OUT/ab.txt" 2>&1
echo "ab rc=$?" >> "$OUT/ab.txt"; cat "$OUT/ab.txt" | tail -60
