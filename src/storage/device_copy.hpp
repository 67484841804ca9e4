// A tensor's arrays held by an accelerator (T.to("cuda"), or a result computed there). The
// storage keeps its host arrays too (same lengths); device code is reached through the host
// array's address, which identifies the array. Implemented by the CUDA runtime
// (runtime/cuda/device_arrays.hpp), so that storage depends on no device library.
#pragma once
#include <string>

namespace coiter {

class DeviceCopy {
 public:
  virtual ~DeviceCopy() = default;
  virtual std::string device() const = 0;  // "cuda"
  // The device address of the array whose host memory starts at `host`; nullptr when the
  // device holds no copy of it.
  virtual void* deviceAddress(const void* host) const = 0;
  // Copies every device array into its host memory (the device's copy is the current one).
  virtual void download() const = 0;
};

}  // namespace coiter
