// The deep-halo stencil on the GPU: P partitions on one GPU (device copies) and on G GPUs (NCCL) equal the
// single-partition CPU reference bitwise for every depth × exchange × overlap (Valen 2023, §2.7–§3.4).
// The tests skip, with the reason, without a GPU, with fewer GPUs than they need, or without NCCL.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "app/session/stencil_run.h"
#include "render/lattice/jacobi.h"
#include "stencil_cases.h"
#include "sched/lattice/halo_cpu.h"
#include "sched/lattice/halo_gpu.cuh"
#include "test_support.h"

namespace mv {
namespace {

void check_all_combinations(int gpus, const std::vector<int>& partition_counts) {
  const int n = 200, k = 29;
  const std::vector<float> ref = stencil_reference(n, k);
  for (int partitions : partition_counts)
    for (int depth : {1, 2, 3, 8, 16})
      for (HaloExchange ex : {HaloExchange::Sync, HaloExchange::Async})
        for (bool overlap : {false, true}) {
          HaloConfig c;
          c.n = n;
          c.partitions = partitions;
          c.gpus = gpus;
          c.depth = depth;
          c.exchange = ex;
          c.overlap = overlap;
          c.kernel = (depth + partitions + (overlap ? 1 : 0)) % kHaloKernelCount;  // every block shape of kHaloKernelShapes
          HaloGpu<JacobiRule> run(make_halo_plan(c));
          run.fill(StencilInitial{n});
          run.step(k);
          std::vector<float> got;
          run.get_field(got);
          EXPECT_TRUE(same_bits(got, ref)) << "G=" << gpus << " P=" << partitions << " depth=" << depth
                                           << " exchange=" << halo_exchange_name(ex) << " overlap=" << overlap
                                           << " kernel=" << kHaloKernelShapes[c.kernel];
          const HaloPhaseTimes& t = run.times();
          EXPECT_EQ(t.iterations, uint64_t(k));
          EXPECT_GT(t.total_ms, 0.0);
          EXPECT_GT(t.pack_ms, 0.0);
          if (overlap) EXPECT_GT(t.inner_ms, 0.0);
        }
}

// Without a GPU too: a failed CUDA call names the call and the rank.
TEST(StencilGpu, ErrorsNameTheCallAndTheRank) {
  try {
    MV_HALO_CUDA(cudaSetDevice(-1), 3);
    FAIL() << "cudaSetDevice(-1) succeeded";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 3"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaSetDevice(-1)"), std::string::npos) << what;
  }
  // The refused call is also the runtime's last error: clear it, or the next checked launch of this
  // process reports it as its own.
  (void)cudaGetLastError();
}

TEST(StencilGpu, FillEqualsTheHostInitialField) {
  MV_REQUIRE_GPU();
  HaloConfig c;
  c.n = 131;
  c.partitions = 6;
  c.depth = 4;
  HaloGpu<JacobiRule> run(make_halo_plan(c));
  run.fill(StencilInitial{c.n});
  std::vector<float> got;
  run.get_field(got);
  EXPECT_TRUE(same_bits(got, stencil_initial_field(c.n)));
}

TEST(StencilGpu, PartitionsOnOneGpuEqualTheReferenceBitwise) {
  MV_REQUIRE_GPU();
  check_all_combinations(1, {1, 2, 4, 6});
}

TEST(StencilGpu, MoreGpusThanPresentIsRefused) {
  MV_REQUIRE_GPU();
  HaloConfig c;
  c.n = 256;
  c.partitions = 64;
  c.gpus = stencil_gpu_count() + 1;
  try {
    HaloGpu<JacobiRule> run(make_halo_plan(c));
    FAIL() << "accepted --gpus " << c.gpus;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpus"), std::string::npos) << e.what();
  }
}

TEST(StencilGpu, TheLiveRunKeepsTheFieldAcrossChanges) {
  MV_REQUIRE_GPU();
  StencilRun run({{"size", "160"}, {"partitions", "2"}, {"iterations-per-frame", "7"}}, true);
  // A budget that iterations-per-frame binds, not the measured rate: each frame runs its 7 iterations.
  EXPECT_EQ(run.advance(1000.0), 7u);
  Params& p = run.params();
  p.set(p.find("depth"), 8);
  p.set(p.find("overlap"), 1);
  p.set(p.find("partitions"), 4);
  EXPECT_EQ(run.advance(1000.0), 7u);
  EXPECT_TRUE(same_bits(run.field(), stencil_reference(160, 14)));
  std::vector<uint32_t> rgba;
  uint32_t w = 0, h = 0;
  run.image(0, rgba, w, h);
  EXPECT_EQ(w, 160u);
  EXPECT_EQ(rgba[size_t(3) * w + 80], 0xFFFFFFFFu);
  EXPECT_GT(run.report()["gupdates_per_s"].get<double>(), 0.0);
}

/// Skips unless `gpus` GPUs and NCCL are present.
#define MV_REQUIRE_NCCL_GPUS(gpus)                                                                     \
  do {                                                                                                 \
    MV_REQUIRE_GPU();                                                                                  \
    if (stencil_gpu_count() < (gpus))                                                                  \
      GTEST_SKIP() << "needs " << (gpus) << " GPUs for NCCL, found " << stencil_gpu_count();           \
    try {                                                                                              \
      nccl_api();                                                                                      \
    } catch (const InputError& e) {                                                                    \
      GTEST_SKIP() << e.what();                                                                        \
    }                                                                                                  \
  } while (0)

// The run-time loading alone (sched/lattice/nccl_api.h): where libnccl.so.2 can be found, every function
// of the table resolves and the version is read.
TEST(StencilNccl, TheLibraryLoadsAtRunTime) {
  try {
    const NcclApi& api = nccl_api();
    EXPECT_GT(api.version, 0);
    EXPECT_FALSE(api.path.empty());
    std::printf("NCCL %d from %s\n", api.version, api.path.c_str());
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_NE(what.find("--gpus"), std::string::npos);
    GTEST_SKIP() << what;
  }
}

TEST(StencilNccl, TwoGpusEqualTheReferenceBitwise) {
  MV_REQUIRE_NCCL_GPUS(2);
  check_all_combinations(2, {2, 4});
}

TEST(StencilNccl, FourGpusEqualTheReferenceBitwise) {
  MV_REQUIRE_NCCL_GPUS(4);
  check_all_combinations(4, {4, 8});
}

}  // namespace
}  // namespace mv
