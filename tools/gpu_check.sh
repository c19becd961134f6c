#!/usr/bin/env bash
# The whole GPU check in one command, run from a checkout on a machine with a CUDA GPU:
#   tools/gpu_check.sh [--skip tests,sanitizer,...] [-- extra pytest args]
# Parts: info, tune (tools/tune_gpu.py: GB/s per packs-per-thread x block size), tests (pytest
# -m "gpu or nvrtc"), sanitizer (compute-sanitizer memcheck over every mode and dtype), bench
# (the full matrix with sweep, host overhead and first-call times, then the fused seed kernel;
# about 2.5 minutes on an H200). All parts take about 6 minutes. SKIP="tests sanitizer" in the
# environment works too. Logs go to $OUT (the device tool's return folder) or ./gpu-logs, at
# most 8 files with all parts, so that all of them come back. Exit status: the number of
# failed parts. The compiled warm path is built in place first (setup.py build_ext).
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
LOGS="${OUT:-$PWD/gpu-logs}"
mkdir -p "$LOGS"
PY="${PYTHON:-python3}"
# a private kernel cache per run, outside $OUT so it never travels back
export STRIDEWISE_CACHE_DIR="${STRIDEWISE_CACHE_DIR:-${TMPDIR:-/tmp}/stridewise-gpu-cache}"
SKIP="${SKIP:-}"
PYTEST_EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --skip) SKIP="$SKIP ${2//,/ }"; shift 2 ;;
    --skip=*) v="${1#--skip=}"; SKIP="$SKIP ${v//,/ }"; shift ;;
    --) shift; PYTEST_EXTRA=("$@"); break ;;
    *) echo "unknown argument $1; usage: tools/gpu_check.sh [--skip part,...] [-- pytest args]"; exit 2 ;;
  esac
done
# the compiled warm path (stridewise.launch._warm), in place beside the sources on PYTHONPATH
"$PY" setup.py -q build_ext --inplace >>"$LOGS/summary.log" 2>&1 || echo "stridewise.launch._warm did not build (summary.log): the Python warm path runs"
skipped() { [[ " $SKIP " == *" $1 "* ]]; }
failed=0
part() {  # part NAME COMMAND...: run one part, log it, count a failure
  local name="$1"; shift
  if skipped "$name"; then echo "== $name: skipped"; return; fi
  echo "== $name: $*"
  local t0=$SECONDS
  local log="$LOGS/$name.log"
  [ "$name" = info ] && log="$LOGS/summary.log"   # the machine facts head the summary
  "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  echo "== $name: exit $rc in $((SECONDS - t0)) s" | tee -a "$LOGS/summary.log"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
}

info() {
  nvidia-smi -L
  "$PY" -c 'import sys, torch, numpy; print(sys.version); print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0)); print("numpy", numpy.__version__)'
  "$PY" -c 'import cupy; print("cupy", cupy.__version__)' || true
  "$PY" -c 'import cuda.core, cuda.bindings.nvrtc as n; print("cuda.core", cuda.core.__version__, "nvrtc", n.nvrtcVersion()[1:])'
  "$PY" -c 'import torch; from stridewise._explain import _warm_path; print("warm path:", _warm_path())'
}

sanitizer() {
  local cs
  cs="$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)"
  if [ -z "$cs" ]; then echo "compute-sanitizer not found"; return 1; fi
  "$PY" tools/sanitize_modes.py >/dev/null || return 1   # compile outside the sanitizer
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$cs" --tool memcheck --error-exitcode 3 --leak-check no \
    --report-api-errors no \
    "$PY" tools/sanitize_modes.py
}

part info info
bench() {
  "$PY" -m stridewise.cli bench --device cuda --sweep --no-progress --json "$LOGS/bench.json" \
    --plot "$LOGS/bench.png" --markdown "$LOGS/bench.md" || return 1
  "$PY" -m stridewise.bench.fused cuda
  "$PY" -m stridewise.bench.train cuda
}

part tune "$PY" tools/tune_gpu.py
part tests "$PY" -m pytest -m "gpu or nvrtc" -q -s -p no:cacheprovider tests/ "${PYTEST_EXTRA[@]}"
part sanitizer sanitizer
part bench bench
echo "== gpu_check: $failed failed part(s); logs in $LOGS"
exit "$failed"
