#!/bin/bash
# One device run for short_rows' resident operand (ShortRows(share_rows)): bias_channels_last in
# interleaved rounds, ShortRows gathered (the periodic kernel as before), Auto (resident where
# it applies), ShortRows resident at 16 packs a thread, torch eager and torch.compile; the copy
# ceiling; then the GPU tests of short_rows and of the resident path.
#   tools/short_rows_resident_run.sh   (from the tree's root; $OUT gets the logs)
# Time-boxed: AB_S for the rounds (the JSON keeps finished cells), TESTS_S for the tests.
out=${OUT:-/tmp/out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 STRIDEWISE_CACHE_DIR=/tmp/swc-resident PYTHONPATH=$PWD/src
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
python3 -c "from stridewise.bench import matrix as m; print(m.ceilings_cuda())" 2>&1 | tee "$out/ceilings.txt"
timeout "${AB_S:-160}" python3 tools/algorithms_ab.py --cases bias_channels_last \
  --dtypes "${DTYPES:-float16,bfloat16,float32,int8,uint8,int32,float64,int64,int16}" \
  --algs "ShortRows(share_rows=False);Auto();ShortRows(share_rows=True, items_per_thread=16)" \
  --anchors torch,torch.compile --rounds "${ROUNDS:-3}" --json "$out/ab.json" 2>"$out/ab.err" | tee "$out/ab.txt"
echo "ab rc ${PIPESTATUS[0]}"; tail -3 "$out/ab.err"
timeout "${TESTS_S:-70}" python3 -m pytest -q -m gpu -n 8 -p no:cacheprovider tests/test_short_rows_resident.py \
  tests/test_cuda.py -k "resident or channels_last or smaller or every_mode or keep_loads" >"$out/tests.txt" 2>&1
echo "tests rc $?"; tail -6 "$out/tests.txt"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$out/gpu.txt"
