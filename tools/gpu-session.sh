#!/usr/bin/env bash
# One batch of GPU work on a lent GPU machine (docs/perf.md, "How the numbers were taken").
# Expects dist/ (`make dist`, built for sm_90 on the workstation) and the runtime bundle made by
# ../shared/gpu-host/bundle.sh, in .gpu-host/ or already unpacked in /opt/gpu-host.
# Usage: tools/gpu-session.sh OUTDIR STEP...
#   steps: info tests megakernel sanitize mk-sanitize bench strands refs curve window sortbench schedbench pack
# Every step runs under `timeout` (STEP_TIMEOUT seconds, default 240) so one hang cannot eat the call.
# Big results (EXRs, PNGs) stay in OUTDIR; `pack` bundles the text logs into OUTDIR/logs.tgz.
set -uo pipefail
out=${1:?usage: gpu-session.sh OUTDIR STEP...}
shift
mkdir -p "$out" "$out/logs"
if [[ -e .gpu-host/enter.sh ]]; then . .gpu-host/enter.sh --window; elif [[ -e .gpu-host-slim/enter.sh ]]; then . .gpu-host-slim/enter.sh --window; else . /opt/gpu-host/enter.sh --window; fi
export PATH=/opt/gpu-host/usr/bin:$PATH MEGAVIEW_SCENES=$PWD/scenes MEGAVIEW_BINARY=$PWD/dist/megaview
export MEGAVIEW_XVFB_ARGS="-xkbdir /opt/gpu-host/usr/share/X11/xkb"
mv_bin=$PWD/dist/megaview
logs=$out/logs
log() { echo "== $* ($(date +%T))" | tee -a "$logs/session.log"; }
T=${STEP_TIMEOUT:-240}
mk_filter='*Megakernel*'

for step in "$@"; do
  case $step in
    info)
      log info
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee -a "$logs/session.log" ;;
    tests)
      log tests
      timeout $T dist/megaview_tests --gtest_filter="-$mk_filter" >"$logs/tests.log" 2>&1; echo "tests exit $?" | tee -a "$logs/session.log"
      grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/tests.log" | tee -a "$logs/session.log" ;;
    megakernel)
      log "megakernel tests"
      timeout $T dist/megaview_tests --gtest_filter="$mk_filter" >"$logs/tests-megakernel.log" 2>&1; echo "megakernel tests exit $?" | tee -a "$logs/session.log"
      grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|^\[  FAILED' "$logs/tests-megakernel.log" | tee -a "$logs/session.log" ;;
    mk-sanitize)
      for tool in memcheck racecheck synccheck; do
        log "compute-sanitizer $tool on the megakernel tests"
        timeout $T compute-sanitizer --tool $tool --error-exitcode 3 dist/megaview_tests \
          --gtest_filter="${MK_SANITIZE_FILTER:-MegakernelGpu.ImageMatchesCpuImage:Megakernel/MegakernelExact.*S32_ctrl_slice48*:Megakernel/MegakernelExact.*S64_ctrl*}" >"$logs/mk-sanitize-$tool.log" 2>&1
        echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$logs/mk-sanitize-$tool.log" | tr '\n' ' ')" | tee -a "$logs/session.log"
      done ;;
    schedbench)
      log "sched-bench (Kerbl Figs 4-5)"
      timeout $T $mv_bin sched-bench --n ${SB_N:-1000,5000,10000,20000,40000,80000} --task-us 100,1000 \
        --controllers ${SB_P:-1,4,16} --threads ${SB_THREADS:-128} --repeat ${SB_REPEAT:-3} ${SB_ARGS:-} \
        --out-prefix "$out/sched-bench${SB_TAG:-}" 2>&1 | tee -a "$logs/session.log"
      mv "$out/sched-bench${SB_TAG:-}.csv" "$logs/" 2>/dev/null ;;
    sortbench)
      log sort-bench
      timeout $T $mv_bin sort-bench --csv "$logs/sort-bench.csv" --plot "$out/sort-bench.png" 2>&1 | tee -a "$logs/session.log" ;;
    sanitize)
      for tool in memcheck racecheck; do
        log "compute-sanitizer $tool on the GPU tests"
        timeout $T compute-sanitizer --tool $tool --error-exitcode 3 dist/megaview_tests \
          --gtest_filter="*GPU*:*uniform*:*sorted_waves*:*Gpu*:-$mk_filter" >"$logs/sanitize-$tool.log" 2>&1
        echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$logs/sanitize-$tool.log" | tr '\n' ' ')" | tee -a "$logs/session.log"
      done ;;
    bench)
      log "bench GPU"
      timeout $T $mv_bin bench --scene room --strategies uniform,sorted-waves,megakernel --repeat 5 --csv "$logs/bench-gpu.csv" 2>&1 | tee -a "$logs/session.log"
      timeout $T $mv_bin bench --scene room --strategies uniform,sorted-waves --wave-size 16384 --repeat 5 --csv "$logs/bench-gpu-k16384.csv" 2>&1 | tee -a "$logs/session.log"
      log "bench CPU (64 spp)"
      timeout $T $mv_bin bench --scene room --cpu --spp 64 --strategies cpu-waves,sequential-waves,cpu-parallel,sequential --repeat 3 --csv "$logs/bench-cpu.csv" 2>&1 | tee -a "$logs/session.log" ;;
    strands)
      log "strand strategies (Lehmann 2023): GPU tests, bench, Appendix A sweep at ${STRAND_SIZE:-1000x1000}"
      timeout $T dist/megaview_tests --gtest_filter='Strand*:GpuStrand*:AppendixA/*:Mandelbrot*' >"$logs/strand-tests.log" 2>&1
      echo "strand tests exit $?" | tee -a "$logs/session.log"
      grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/strand-tests.log" | tee -a "$logs/session.log"
      timeout $T $mv_bin bench --workload ${STRAND_WORKLOADS:-mandelbrot} --grid auto --repeat 5 --csv "$logs/strands-auto.csv" 2>&1 | tee -a "$logs/session.log"
      timeout $T $mv_bin bench --workload ${STRAND_WORKLOADS:-mandelbrot} --sweep --size ${STRAND_SIZE:-1000x1000} --repeat 3 \
        --out-prefix "$out/appendix-a-mandelbrot" 2>&1 | tee -a "$logs/session.log"
      cp "$out/appendix-a-mandelbrot.csv" "$logs/" 2>/dev/null ;;
    refs)
      for s in room cornell; do
        log "reference $s"
        timeout $T $mv_bin reference --scene $s --spp ${REF_SPP:-65536} --out "$out/$s.exr" 2>&1 | tail -2 | tee -a "$logs/session.log"
        mv "$out/$s.json" "$logs/" 2>/dev/null
      done ;;
    curve)
      log mse-curve
      timeout $T $mv_bin mse-curve --scene room --compare ${CURVE_SERIES:-uniform,sorted-waves:convergence,sorted-waves:variance,megakernel:none,megakernel:convergence,megakernel:variance} \
        --duration-ms ${CURVE_MS:-300} --interval-ms 5 --reference "$out/room.exr" --out-prefix "$out/mse-room" 2>&1 | tee -a "$logs/session.log"
      mv "$out/mse-room.csv" "$logs/" 2>/dev/null ;;
    window)
      log "GUI window: interop"
      timeout $T $mv_bin --scene room --spp 8192 --frames ${FRAMES:-300} --window-shot "$out/window.png" --capture-dir "$out/captures" \
        --smoke-at "${SMOKE_STEPS:-60:priority=variance,120:strategy=megakernel,200:priority=convergence,290:capture}" 2>&1 | tail -12 | tee -a "$logs/session.log"
      log "GUI window: host copy"
      timeout $T $mv_bin --scene room --frames ${FRAMES:-300} --host-copy --window-shot "$logs/window-hostcopy.png" 2>&1 | tail -4 | tee -a "$logs/session.log" ;;
    pack)
      tar -czf "$out/logs.tgz" -C "$out" logs && rm -rf "$logs" ;;
    *) echo "unknown step $step" ;;
  esac
done
