#!/usr/bin/env bash
# One batch of GPU work on a lent GPU machine (see docs/perf.md "How the numbers were taken").
# Expects dist/ (from `make dist`, built for sm_90 on the workstation) and, for windows, the runtime bundle
# from ../shared/gpu-host/bundle.sh in .gpu-host/ or already unpacked in /opt/gpu-host.
# Usage: tools/gpu-session.sh OUTDIR STEP...   steps: info tests sanitize bench refs curve window
set -uo pipefail
out=${1:?usage: gpu-session.sh OUTDIR STEP...}
shift
mkdir -p "$out"
if [[ -e .gpu-host/enter.sh ]]; then . .gpu-host/enter.sh --window; else . /opt/gpu-host/enter.sh --window; fi
export MEGAVIEW_SCENES=$PWD/scenes MEGAVIEW_BINARY=$PWD/dist/megaview
mv_bin=dist/megaview
log() { echo "== $*" | tee -a "$out/session.log"; }
for step in "$@"; do
  case $step in
    info)
      log info
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee -a "$out/session.log" ;;
    tests)
      log tests
      dist/megaview_tests 2>&1 | tee "$out/tests.log" | tail -25 ;;
    sanitize)
      log "compute-sanitizer memcheck + racecheck on the GPU tests"
      for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool --error-exitcode 3 dist/megaview_tests \
          --gtest_filter='*GPU*:*uniform*:*sorted_waves*:*Gpu*' >"$out/sanitize-$tool.log" 2>&1
        echo "$tool exit $? : $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/sanitize-$tool.log" | tr '\n' ' ')" | tee -a "$out/session.log"
      done ;;
    bench)
      log bench
      $mv_bin bench --scene room --strategies uniform,sorted-waves,cpu-parallel --repeat 5 --csv "$out/bench.csv" 2>&1 | tee -a "$out/session.log" ;;
    refs)
      for s in room cornell; do
        log "reference $s"
        $mv_bin reference --scene $s --spp ${REF_SPP:-65536} --out "$out/$s.exr" 2>&1 | tr '\r' '\n' | tail -3 | tee -a "$out/session.log"
      done ;;
    curve)
      log mse-curve
      $mv_bin mse-curve --scene room --compare uniform,sorted-waves:none,sorted-waves:convergence,sorted-waves:variance,sorted-waves:intensity \
        --duration-ms ${CURVE_MS:-400} --interval-ms 10 --reference "${REF_DIR:-$out}/room.exr" --out-prefix "$out/mse-room" 2>&1 | tee -a "$out/session.log" ;;
    window)
      log "GUI window (interop) smoke run"
      $mv_bin --scene room --frames ${FRAMES:-240} --window-shot "$out/window.png" 2>&1 | tail -20 | tee -a "$out/session.log" ;;
    *) echo "unknown step $step" ;;
  esac
done
