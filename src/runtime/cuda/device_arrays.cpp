#include "runtime/cuda/device_arrays.hpp"

#include <algorithm>

#include "memory/allocation_limit.hpp"
#include "runtime/result_memory.hpp"
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
  for (const auto& [host, a] : arrays_) {
    if (!a.owner) release(a.device);
  }
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

void DeviceArrays::own(void* host, CUdeviceptr device, size_t bytes) { arrays_[host] = Array{device, bytes, nullptr}; }

void DeviceArrays::adopt(void* host, CUdeviceptr device, size_t bytes, std::shared_ptr<void> owner) {
  arrays_[host] = Array{device, bytes, std::move(owner)};
}

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

namespace {

// A foreign array's memory, checked to be device memory of coiter's GPU holding at least
// `length` elements (an interface that claims more than its allocation would let a kernel
// read past it), with an empty host buffer of the same length that a download fills.
Buffer adoptArray(DeviceArrays& arrays, const ForeignArray& a, const std::string& what,
                  const std::shared_ptr<void>& owner) {
  if (a.length < 0) throw ArgumentError(what + ": negative length " + std::to_string(a.length));
  const size_t bytes = checkedArrayBytes(a.length, a.type, [&] { return what; });
  if (bytes) {
    const DriverApi& d = driver();
    int ordinal = -1;
    constexpr int kDeviceOrdinal = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    CUdeviceptr base = 0;
    size_t size = 0;
    if (d.cuPointerGetAttribute(&ordinal, kDeviceOrdinal, a.address) != 0 ||
        d.cuMemGetAddressRange(&base, &size, a.address) != 0) {
      throw DeviceError("cuda: " + what + " is not GPU memory that coiter's GPU can read (address " +
                        std::to_string(a.address) + ")");
    }
    if (ordinal != 0) {
      throw DeviceError("cuda: " + what + " is on GPU " + std::to_string(ordinal) + "; coiter computes on GPU 0");
    }
    if (a.address + bytes > base + size) {
      throw DeviceError("cuda: " + what + " claims " + std::to_string(bytes) +
                        " bytes, past the end of its allocation (" + std::to_string(base + size - a.address) +
                        " bytes from its start)");
    }
  }
  // (Not Buffer::allocate: calloc clears memory that its allocator reused, a pass over the
  // whole size on every adoption, for a copy that a download overwrites, if it ever happens.)
  Buffer host = resultBuffer(a.type, a.length, allocateResultArray(bytes, /*zero=*/false));
  arrays.adopt(host.data(), a.address, bytes, owner);
  return host;
}

}  // namespace

std::shared_ptr<TensorStorage> adoptDeviceArrays(const Format& format, const std::vector<int64_t>& shape,
                                                 DType indexType,
                                                 const std::vector<std::map<std::string, ForeignArray>>& levelArrays,
                                                 const std::vector<std::map<std::string, int64_t>>& scalars,
                                                 const ForeignArray& values, const std::shared_ptr<void>& owner) {
  if (levelArrays.size() != format.levels().size() || scalars.size() != format.levels().size()) {
    throw FormatError("format " + format.repr() + " has " + std::to_string(format.levels().size()) +
                      " levels; give arrays and parameters for each");
  }
  auto arrays = std::make_shared<DeviceArrays>();
  std::vector<LevelStorage> levels(levelArrays.size());
  for (size_t k = 0; k < levelArrays.size(); ++k) {
    for (const auto& [name, array] : levelArrays[k]) {
      if (array.type != indexType) {
        throw FormatError("level " + std::to_string(k) + " array '" + name + "' holds " + dtypeName(array.type) +
                          ", not the tensor's index type " + dtypeName(indexType));
      }
      levels[k].arrays[name] =
          adoptArray(*arrays, array, "level " + std::to_string(k) + " array '" + name + "'", owner);
    }
    levels[k].scalars = scalars[k];
  }
  Buffer hostValues = adoptArray(*arrays, values, "the values", owner);
  auto out = std::make_shared<TensorStorage>(format, shape, values.type, indexType, std::move(levels), hostValues);
  out->markValid();
  out->attachDevice(arrays, /*hostCurrent=*/false);
  return out;
}

std::shared_ptr<TensorStorage> hostStorage(const TensorStorage& s) {
  auto out =
      std::make_shared<TensorStorage>(s.format(), s.shape(), s.valueType(), s.indexType(), s.levels(), s.values());
  if (s.isValid()) out->markValid();
  return out;
}

}  // namespace coiter::cuda
