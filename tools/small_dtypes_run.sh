#!/bin/bash
# One device run for the 8-bit cells: build the trees, the GPU tests of the small integer and
# bool kernels, the copy and write ceilings, then the cells in interleaved rounds per tree.
#   tools/small_dtypes_run.sh TREE [OTHER_TREE ...]   (from TREE's root; $OUT gets the logs)
# Time-boxed: TESTS_S for the tests, AB_S for the rounds (auto_ab --out keeps finished rounds).
here=$(pwd); out=${OUT:-/tmp/out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 STRIDEWISE_CACHE_DIR=/tmp/swc-tests
trees=("$@")
for t in "${trees[@]}"; do (cd "$t" && python3 setup.py -q build_ext --inplace >"$out/build-$(basename "$t").log" 2>&1; echo "built $t: $?") & done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
wait
cd "$here"
export PYTHONPATH=$here/src
timeout "${TESTS_S:-110}" python3 -m pytest -q -m gpu -n 6 -p no:cacheprovider tests/test_words.py \
  tests/test_small_int_div.py tests/test_int_dtypes.py tests/test_eager_batches_gpu.py >"$out/tests.txt" 2>&1
echo "tests rc $?"; tail -4 "$out/tests.txt"
python3 -c "from stridewise.bench import matrix as m; print(m.ceilings_cuda())" 2>&1 | tee "$out/ceilings.txt"
joined=$(IFS=,; echo "${trees[*]}")
timeout "${AB_S:-200}" python3 tools/auto_ab.py --trees "$joined" --rounds "${ROUNDS:-3}" --anchor \
  --cases contiguous,row,outer --dtypes int8,uint8,bool --values narrow --out "$out/ab.json" 2>"$out/ab.err" | tee "$out/ab.txt"
echo "ab rc ${PIPESTATUS[0]}"; tail -3 "$out/ab.err"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$out/gpu.txt"
