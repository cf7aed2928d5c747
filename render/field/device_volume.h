// A volume uploaded to the GPU: RAII owner of the device copy of a Volume's samples and the
// VolumeView that points at it, for strand workloads and kernels that probe fields on the device
// (render/field/field.h). Move-only; the device memory is freed with the object.
#pragma once

#include <string>
#include <utility>

#include "base/device_buffer.h"
#include "render/field/volume.h"

namespace mv {

class DeviceVolume {
 public:
  /// Uploads `v` (and waits for the copy, so `v` may go away afterwards). In order:
  ///  1. check_volume_fits(v, true) (render/field/volume_io.h): InputError(v.source, "size", …) with the
  ///     volume's size and the free host/device memory in MiB when it would not fit;
  ///  2. make_view(v): InputError(v.source, …) for sizes not matching the data or a singular transform;
  ///  3. std::runtime_error("<source>: a device volume needs a CUDA GPU (<reason>)") without a usable GPU;
  ///  4. the allocation and copy, each checked: CudaError naming the call.
  explicit DeviceVolume(const Volume& v);

  /// Moving leaves the source empty (its view has a null data pointer).
  DeviceVolume(DeviceVolume&& o) noexcept
      : data_(std::move(o.data_)), view_(std::exchange(o.view_, VolumeView{})), source_(std::move(o.source_)) {}
  DeviceVolume& operator=(DeviceVolume&& o) noexcept {
    if (this != &o) {
      data_ = std::move(o.data_);
      view_ = std::exchange(o.view_, VolumeView{});
      source_ = std::move(o.source_);
    }
    return *this;
  }
  DeviceVolume(const DeviceVolume&) = delete;
  DeviceVolume& operator=(const DeviceVolume&) = delete;

  /// The view with the device data pointer (same dimensions and transforms as make_view(v)).
  const VolumeView& view() const { return view_; }
  size_t bytes() const { return data_.bytes(); }
  const std::string& source() const { return source_; }

 private:
  DeviceBuffer<float> data_;
  VolumeView view_;
  std::string source_;
};

}  // namespace mv
