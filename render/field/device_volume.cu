// render/field/device_volume.h.
#include "render/field/device_volume.h"

#include <stdexcept>

#include "base/cuda_check.h"
#include "render/field/volume_io.h"
#include "render/gpu.h"

namespace mv {

DeviceVolume::DeviceVolume(const Volume& v) : source_(v.source) {
  check_volume_fits(v, true);
  const VolumeView host = make_view(v);
  if (!gpu_available())
    throw std::runtime_error((v.source.empty() ? std::string("volume") : v.source) +
                             ": a device volume needs a CUDA GPU (" + gpu_info().reason + ")");
  data_.upload(v.data);
  MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  view_ = host;
  view_.data = data_.data();
}

}  // namespace mv
