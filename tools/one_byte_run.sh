#!/bin/bash
# One device run for the int8 cells (the word form's remainder and its kernels' tuning): the
# warm path built in every tree, the GPU tests of the 1-byte kernels on this tree, the copy and
# write ceilings, then the cells in interleaved rounds per tree beside torch eager.
#   tools/one_byte_run.sh TREE [OTHER_TREE ...]   (from the tree the tests run on; $OUT: logs)
# Time-boxed (the device's minutes are few): TESTS_S for the tests, AB_S for the rounds
# (auto_ab --out keeps the rounds it finished).
here=$(pwd); out=${OUT:-/tmp/out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 STRIDEWISE_CACHE_DIR=/tmp/swc-tests
# the C warm path only: every tree runs the same _warm.c, and torch's C++ extension takes a minute
warm='from setuptools import Extension, setup
setup(script_args=["-q", "build_ext", "--inplace"], package_dir={"": "src"},
      ext_modules=[Extension("stridewise.launch._warm", ["src/stridewise/launch/_warm.c"])])'
[ "${BUILD:-1}" = 1 ] && for t in "$@"; do
  log="$out/build-$(basename "$t").log"; (cd "$t" && python3 -c "$warm" >"$log" 2>&1; echo "built $t: $?") &
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
date -u | tee -a "$out/gpu.txt"
wait
export PYTHONPATH=$here/src
timeout "${TESTS_S:-50}" python3 -m pytest -q -m gpu -n 12 -p no:cacheprovider tests/test_words.py \
  tests/test_small_int_div.py tests/test_int_dtypes.py tests/test_short_rows_resident.py >"$out/tests.txt" 2>&1
echo "tests rc $?"; tail -4 "$out/tests.txt"
timeout 20 python3 -c "from stridewise.bench import matrix as m; print(m.ceilings_cuda())" 2>&1 | tee "$out/ceilings.txt"
joined=$(IFS=,; echo "$*")
timeout "${AB_S:-100}" python3 tools/auto_ab.py --trees "$joined" --rounds "${ROUNDS:-3}" --anchor \
  --cases "${CASES:-contiguous,row,outer,bias_channels_last}" --dtypes "${DTYPES:-int8}" \
  --out "$out/ab.json" 2>"$out/ab.err" | tee "$out/ab.txt"
echo "ab rc ${PIPESTATUS[0]}"; tail -3 "$out/ab.err"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$out/gpu.txt"
date -u | tee -a "$out/gpu.txt"
