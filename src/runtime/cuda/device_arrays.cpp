#include "runtime/cuda/device_arrays.hpp"

#include <algorithm>

#include "util/errors.hpp"

namespace coiter::cuda {

CUdeviceptr allocate(size_t bytes) {
  const DriverApi& d = driver();
  CUdeviceptr p = 0;
  CUresult r = d.cuMemAllocAsync(&p, std::max<size_t>(bytes, 1), nullptr);
  if (r == 2) {  // CUDA_ERROR_OUT_OF_MEMORY
    size_t free = 0, total = 0;
    d.cuMemGetInfo(&free, &total);
    throw DeviceError("cuda: out of GPU memory: " + std::to_string(bytes) + " bytes requested, " +
                      std::to_string(free) + " of " + std::to_string(total) + " free");
  }
  check(r, "cuMemAllocAsync");
  return p;
}

void release(CUdeviceptr p) noexcept {
  if (!p || !available()) return;
  driver().cuMemFreeAsync(p, nullptr);
}

DeviceArrays::~DeviceArrays() {
  for (const auto& [host, a] : arrays_) release(a.device);
}

void* DeviceArrays::deviceAddress(const void* host) const {
  auto it = arrays_.find(const_cast<void*>(host));
  if (it != arrays_.end()) return reinterpret_cast<void*>(it->second.device);
  for (const auto& other : borrowed_) {
    if (void* p = other->deviceAddress(host)) return p;
  }
  return nullptr;
}

void DeviceArrays::download() const {
  const DriverApi& d = driver();
  for (const auto& [host, a] : arrays_) {
    if (a.bytes) check(d.cuMemcpyDtoH(host, a.device, a.bytes), "cuMemcpyDtoH (a device result to the host)");
  }
  for (const auto& other : borrowed_) other->download();
}

void DeviceArrays::own(void* host, CUdeviceptr device, size_t bytes) { arrays_[host] = Array{device, bytes}; }

namespace {

void uploadArray(DeviceArrays& arrays, const Buffer& b) {
  if (!b.data() || arrays.deviceAddress(b.data())) return;
  size_t bytes = static_cast<size_t>(b.length()) * dtypeSize(b.dtype());
  CUdeviceptr p = allocate(bytes);
  try {
    if (bytes) check(driver().cuMemcpyHtoD(p, b.data(), bytes), "cuMemcpyHtoD (a tensor's array to the GPU)");
  } catch (...) {
    release(p);
    throw;
  }
  arrays.own(const_cast<void*>(b.data()), p, bytes);
}

}  // namespace

std::shared_ptr<TensorStorage> upload(const TensorStorage& s) {
  // GPU kernels load coordinates unchecked (lower/ir_passes.cpp): the arrays are checked whole
  // here, also when their order was vouched for (SciPy's canonical flag) but not their bounds.
  if (s.isValid()) {
    s.checkStructure();
    s.checkBounds();
  } else {
    s.validate();
  }
  auto arrays = std::make_shared<DeviceArrays>();
  for (const auto& level : s.levels()) {
    for (const auto& [name, buffer] : level.arrays) uploadArray(*arrays, buffer);
  }
  uploadArray(*arrays, s.values());
  auto out =
      std::make_shared<TensorStorage>(s.format(), s.shape(), s.valueType(), s.indexType(), s.levels(), s.values());
  out->markValid();
  out->attachDevice(arrays, /*hostCurrent=*/true);
  return out;
}

std::shared_ptr<TensorStorage> hostStorage(const TensorStorage& s) {
  auto out =
      std::make_shared<TensorStorage>(s.format(), s.shape(), s.valueType(), s.indexType(), s.levels(), s.values());
  if (s.isValid()) out->markValid();
  return out;
}

}  // namespace coiter::cuda
