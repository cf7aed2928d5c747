// NCCL loaded at run time. megaview never links libnccl: the binary and the tests must run where no NCCL
// is installed (the viewer, CI, every single-GPU run). The halo exchange across GPUs
// (sched/lattice/halo_gpu.cuh) asks for `nccl_api()`, which dlopens the library once and returns a
// typed table of the few functions it calls (ncclCommInitAll, ncclCommDestroy, ncclGroupStart/End,
// ncclSend, ncclRecv, ncclGetErrorString, ncclGetVersion).
//
// Where the library comes from: $MEGAVIEW_NCCL_LIB (a full path to libnccl.so.2, or a folder holding
// it) when set, else "libnccl.so.2" on the loader's path (LD_LIBRARY_PATH; e.g. the lib folder of the
// Python nvidia-nccl package: site-packages/nvidia/nccl/lib). When it cannot be loaded, nccl_api()
// throws InputError with one line saying so and how to point at it.
//
// Compiled against nccl.h where the CUDA toolkit's include path has it (MV_HAVE_NCCL is then 1); without
// the header there is no NCCL path at all and nccl_api() always throws, saying the build lacks it.
#pragma once

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>

#include "base/errors.h"

#if __has_include(<nccl.h>)
#include <nccl.h>
#define MV_HAVE_NCCL 1
#else
#define MV_HAVE_NCCL 0
#endif

namespace mv {

#if MV_HAVE_NCCL
/// The functions of libnccl.so.2 the halo exchange calls, with nccl.h's signatures.
struct NcclApi {
  decltype(&::ncclCommInitAll) comm_init_all = nullptr;
  decltype(&::ncclCommDestroy) comm_destroy = nullptr;
  decltype(&::ncclGroupStart) group_start = nullptr;
  decltype(&::ncclGroupEnd) group_end = nullptr;
  decltype(&::ncclSend) send = nullptr;
  decltype(&::ncclRecv) recv = nullptr;
  decltype(&::ncclGetErrorString) error_string = nullptr;
  decltype(&::ncclGetVersion) get_version = nullptr;
  std::string path;  ///< what was loaded
  int version = 0;   ///< e.g. 22809
};
#else
struct NcclApi {
  std::string path;
  int version = 0;
};
#endif

/// The loaded NCCL (once per process). Throws InputError("", "--gpus", "…") when it cannot be loaded.
inline const NcclApi& nccl_api() {
#if !MV_HAVE_NCCL
  throw InputError("", "--gpus",
                   "more than one GPU needs NCCL, and this megaview was built without nccl.h (install NCCL's "
                   "headers where the CUDA toolkit's include folder is, then rebuild)");
#else
  static std::once_flag once;
  static NcclApi api;
  static std::string error;
  std::call_once(once, [] {
    std::string name = "libnccl.so.2";
    if (const char* env = std::getenv("MEGAVIEW_NCCL_LIB"); env && *env) {
      name = env;
      struct stat st {};
      if (::stat(env, &st) == 0 && S_ISDIR(st.st_mode)) name += "/libnccl.so.2";
    }
    void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = ::dlerror();
      error = "more than one GPU needs NCCL, and " + name + " could not be loaded (" + (why ? why : "?") +
              "); set MEGAVIEW_NCCL_LIB or LD_LIBRARY_PATH to the folder holding libnccl.so.2 (e.g. the "
              "nvidia-nccl Python package's nvidia/nccl/lib)";
      return;
    }
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, sym));
      if (!fn && error.empty()) error = "NCCL library " + name + " lacks " + sym;
    };
    get(api.comm_init_all, "ncclCommInitAll");
    get(api.comm_destroy, "ncclCommDestroy");
    get(api.group_start, "ncclGroupStart");
    get(api.group_end, "ncclGroupEnd");
    get(api.send, "ncclSend");
    get(api.recv, "ncclRecv");
    get(api.error_string, "ncclGetErrorString");
    get(api.get_version, "ncclGetVersion");
    if (error.empty()) {
      api.path = name;
      api.get_version(&api.version);
    }
  });
  if (!error.empty()) throw InputError("", "--gpus", error);
  return api;
#endif
}

}  // namespace mv
