#!/bin/bash
# One device call (from a copy of this tree at .wt/27g inside main's checkout, as the device
# runs it): float32 remainder's GPU value and fast-path-limit tests on this tree, then this
# tree against main's, interleaved, with torch eager anchors over the value distributions,
# and outer_3d beside torch eager per tree. Both trees' extensions are built first, in
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
PYTHONPATH=$here/src timeout ${TEST_S:-34} python3 -m pytest -q -p no:cacheprovider -n 4 \
  tests/test_cuda_values.py::test_remainder_on_every_value_distribution tests/test_cuda_fastpaths.py \
  tests/test_shared_outer.py tests/test_cuda.py -k float32 > "$OUT/tests.txt" 2>&1
echo "tests rc=$?" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
wait $bm $bw
# outer_3d is a cell of the layouts matrix (auto_ab's cases are the first matrix's): each tree
# beside torch eager in its own process; torch.compile's time is the earlier runs' (its
# compile would take most of this call)
for t in "$here" "$main"; do
  PYTHONPATH=$t/src timeout ${O3_S:-14} python3 tools/algorithms_ab.py --cases outer_3d --dtypes float32 \
    --algs "Auto()" --rounds 3 --anchors torch > "$OUT/outer3d_$(basename $t).txt" 2>&1
  echo "outer_3d rc=$?" >> "$OUT/outer3d_$(basename $t).txt"; cat "$OUT/outer3d_$(basename $t).txt"
done
timeout ${AB_S:-62} python3 tools/auto_ab.py --trees "$here,$main" --rounds ${ROUNDS:-2} --anchor \
  --cases outer,row,contiguous --dtypes float32 \
  --values narrow,huge_quotients,subnormal_divisors,near_max,specials \
  --out "$OUT/ab.json" > "$OUT/ab.txt" 2>&1
echo "ab rc=$?" >> "$OUT/ab.txt"; tail -50 "$OUT/ab.txt"
