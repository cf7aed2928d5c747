// `megaview bench --workload stencil …`: the deep-halo stencil's bench (Valen 2023, Figs 5.1–5.16 and
// Tables 5.1–5.2). It has its own options, so it is parsed apart from the other benches: main.cpp hands
// the command line over when `bench --workload stencil` is given.
//
//   megaview bench --workload stencil [--gpus G] [--partitions P,…] [--size N,…] [--depth 1,2,4,…,64]
//                  [--exchange sync,async] [--overlap on,off] [--iterations K] [--repeat R] [--csv F] [--cpu]
//
// Every combination of the lists runs R times after one untimed warm-up (K iterations each, CUDA events
// on the GPU, wall clock with --cpu or without a GPU); the table prints the median of the repeats: time
// per iteration, each phase per iteration, overlap coverage (Tables 5.1–5.2: (T_off − T_on) / (exchange
// + unpack + wait of the run without overlap), same size, partitions, depth and exchange), GB/s counted
// as 8 bytes per useful site update (one float read, one written; the halo's redundant updates are not
// counted) and its share of the GPU's DRAM bandwidth (cudaDeviceProp: 2 × memory clock × bus width), and
// the speed-up over the plain run (sync, depth 1, no overlap) of the same size and partitions. --csv also
// writes F.json (figure metadata, kind "stencil-bench") and the figures (tools/figures.py).
//
// Errors: one line naming the option and its range (depth 0 or > 64, a depth larger than a partition,
// more GPUs than present or than partitions…), non-zero exit.
#pragma once

namespace mv {

/// When argv is `megaview bench … --workload stencil …`, runs the stencil bench, sets `rc` and returns
/// true; otherwise returns false and touches nothing. Throws InputError for bad input (main.cpp prints it).
bool run_stencil_bench_if_selected(int argc, char** argv, int& rc);

}  // namespace mv
