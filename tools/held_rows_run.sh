#!/bin/bash
# One device run for held rows (Rows.hold_rows): the outer products' cells with the divisor
# column held against not held (the same tree, interleaved rounds, torch eager and
# torch.compile beside them), optional other trees' held/unheld pairs, then the GPU tests.
#   tools/held_rows_run.sh [OTHER_TREE ...]   (from the tree's root; $OUT gets the logs)
# Time-boxed: AB_S per bench part, TESTS_S for the tests.
here=$(pwd); out=${OUT:-/tmp/out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 setup.py -q build_ext --inplace >"$out/build.log" 2>&1; echo "built: $?"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
U="Rows(share_rows=True, hold_rows=False)"; H="Rows(share_rows=True, hold_rows=True)"
ab() {   # tree, name, algorithms_ab arguments...
  local tree=$1 name=$2; shift 2
  (cd "$tree" && STRIDEWISE_CACHE_DIR=/tmp/swc-$name PYTHONPATH=$PWD/src timeout "${AB_S:-150}" \
    python3 "$here/tools/algorithms_ab.py" --algs "$U;$H" --rounds "${ROUNDS:-3}" --json "$out/$name.json" "$@" \
    >"$out/$name.txt" 2>"$out/$name.err"; echo "$name rc $?"; grep -v "^ *$" "$out/$name.txt"; tail -2 "$out/$name.err")
}
ab "$here" outer3d --cases outer_3d --dtypes float32,bfloat16,float16,int64 --anchors torch,torch.compile
ab "$here" outer2d --cases outer,outer_3d --dtypes float32,bfloat16,int32,float64 --anchors torch
for t in "$@"; do ab "$t" "$(basename "$t")" --cases outer_3d --dtypes float32,bfloat16 --anchors ""; done
STRIDEWISE_CACHE_DIR=/tmp/swc-tests PYTHONPATH=$here/src timeout "${TESTS_S:-120}" python3 -m pytest -q -m gpu -n 8 \
  -p no:cacheprovider tests/test_held_rows.py tests/test_cuda.py -k "held or share_rows or every_16bit" >"$out/tests.txt" 2>&1
echo "tests rc $?"; tail -5 "$out/tests.txt"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$out/gpu.txt"
