#!/usr/bin/env bash
# One batch of GPU work on a lent GPU machine (docs/perf.md, "How the numbers were taken").
# Expects dist/ (`make dist`, built for sm_90 on the workstation) and the runtime bundle made by
# ../shared/gpu-host/bundle.sh, in .gpu-host/ or already unpacked in /opt/gpu-host.
# Usage: tools/gpu-session.sh OUTDIR STEP...   steps: info tests sanitize bench strands refs curve window pack
# Big results (EXRs, PNGs) stay in OUTDIR; `pack` bundles the text logs into OUTDIR/logs.tgz.
set -uo pipefail
out=${1:?usage: gpu-session.sh OUTDIR STEP...}
shift
mkdir -p "$out" "$out/logs"
if [[ -e .gpu-host/enter.sh ]]; then . .gpu-host/enter.sh --window; else . /opt/gpu-host/enter.sh --window; fi
export PATH=/opt/gpu-host/usr/bin:$PATH MEGAVIEW_SCENES=$PWD/scenes MEGAVIEW_BINARY=$PWD/dist/megaview
export MEGAVIEW_XVFB_ARGS="-xkbdir /opt/gpu-host/usr/share/X11/xkb"
mv_bin=$PWD/dist/megaview
logs=$out/logs
log() { echo "== $*" | tee -a "$logs/session.log"; }
for step in "$@"; do
  case $step in
    info)
      log info
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee -a "$logs/session.log" ;;
    tests)
      log tests
      dist/megaview_tests 2>&1 >"$logs/tests.log"; echo "tests exit $?" | tee -a "$logs/session.log"
      grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/tests.log" | tee -a "$logs/session.log" ;;
    sanitize)
      for tool in memcheck racecheck; do
        log "compute-sanitizer $tool on the GPU tests"
        compute-sanitizer --tool $tool --error-exitcode 3 dist/megaview_tests \
          --gtest_filter='*GPU*:*uniform*:*sorted_waves*:*Gpu*' >"$logs/sanitize-$tool.log" 2>&1
        echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$logs/sanitize-$tool.log" | tr '\n' ' ')" | tee -a "$logs/session.log"
      done ;;
    bench)
      log "bench GPU"
      $mv_bin bench --scene room --strategies uniform,sorted-waves --repeat 5 --csv "$logs/bench-gpu.csv" 2>&1 | tee -a "$logs/session.log"
      $mv_bin bench --scene room --strategies uniform,sorted-waves --wave-size 16384 --repeat 5 --csv "$logs/bench-gpu-k16384.csv" 2>&1 | tee -a "$logs/session.log"
      log "bench CPU (64 spp)"
      $mv_bin bench --scene room --cpu --spp 64 --strategies cpu-parallel,sequential --repeat 3 --csv "$logs/bench-cpu.csv" 2>&1 | tee -a "$logs/session.log" ;;
    strands)
      log "strand strategies (Lehmann 2023): GPU tests, bench, Appendix A sweep at ${STRAND_SIZE:-1000x1000}"
      dist/megaview_tests --gtest_filter='Strand*:GpuStrand*:AppendixA/*:Mandelbrot*' >"$logs/strand-tests.log" 2>&1
      echo "strand tests exit $?" | tee -a "$logs/session.log"
      grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/strand-tests.log" | tee -a "$logs/session.log"
      $mv_bin bench --workload mandelbrot --grid auto --repeat 5 --csv "$logs/strands-auto.csv" 2>&1 | tee -a "$logs/session.log"
      $mv_bin bench --workload mandelbrot --sweep --size ${STRAND_SIZE:-1000x1000} --repeat 3 \
        --out-prefix "$out/appendix-a-mandelbrot" 2>&1 | tee -a "$logs/session.log"
      cp "$out/appendix-a-mandelbrot.csv" "$logs/" 2>/dev/null ;;
    refs)
      for s in room cornell; do
        log "reference $s"
        $mv_bin reference --scene $s --spp ${REF_SPP:-65536} --out "$out/$s.exr" 2>&1 | tail -2 | tee -a "$logs/session.log"
        mv "$out/$s.json" "$logs/" 2>/dev/null
      done ;;
    curve)
      log mse-curve
      $mv_bin mse-curve --scene room --compare uniform,sorted-waves:none,sorted-waves:convergence,sorted-waves:variance,sorted-waves:intensity \
        --duration-ms ${CURVE_MS:-300} --interval-ms 5 --reference "$out/room.exr" --out-prefix "$out/mse-room" 2>&1 | tee -a "$logs/session.log"
      mv "$out/mse-room.csv" "$logs/" 2>/dev/null ;;
    window)
      log "GUI window: interop"
      $mv_bin --scene room --frames ${FRAMES:-300} --window-shot "$out/window.png" 2>&1 | tail -6 | tee -a "$logs/session.log"
      log "GUI window: host copy"
      $mv_bin --scene room --frames ${FRAMES:-300} --host-copy --window-shot "$logs/window-hostcopy.png" 2>&1 | tail -4 | tee -a "$logs/session.log" ;;
    pack)
      tar -czf "$out/logs.tgz" -C "$out" logs && rm -rf "$logs" ;;
    *) echo "unknown step $step" ;;
  esac
done
