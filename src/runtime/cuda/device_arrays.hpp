// Arrays in GPU memory: allocation from the driver's stream-ordered pool, and the device copy
// of a tensor's arrays (storage/device_copy.hpp) that T.to("cuda") makes and GPU results keep.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "runtime/cuda/cuda_driver.hpp"
#include "storage/device_copy.hpp"
#include "storage/tensor_storage.hpp"

namespace coiter::cuda {

// `bytes` of device memory (at least 1). Throws DeviceError when the GPU's memory is exhausted.
CUdeviceptr allocate(size_t bytes);
// Returns memory from allocate(); errors are ignored (it runs in destructors, possibly while
// the process exits and the driver is gone).
void release(CUdeviceptr p) noexcept;

// Device arrays, each the copy of one host array (identified by the host address).
class DeviceArrays : public DeviceCopy {
 public:
  ~DeviceArrays() override;
  std::string device() const override { return "cuda"; }
  void* deviceAddress(const void* host) const override;
  void download() const override;
  // Takes ownership of `device`, the copy of the `bytes` at `host`.
  void own(void* host, CUdeviceptr device, size_t bytes);
  // Uses `device`, memory that `owner` keeps alive (another library's), as the copy of the
  // `bytes` at `host`; it is not released here.
  void adopt(void* host, CUdeviceptr device, size_t bytes, std::shared_ptr<void> owner);
  // Arrays looked up in `other` too (a result sharing an operand's index arrays).
  void borrow(std::shared_ptr<const DeviceCopy> other) { borrowed_.push_back(std::move(other)); }

 private:
  struct Array {
    CUdeviceptr device;
    size_t bytes;
    std::shared_ptr<void> owner;  // set for adopted memory
  };
  std::map<void*, Array> arrays_;
  std::vector<std::shared_ptr<const DeviceCopy>> borrowed_;
};

// A storage sharing `s`'s host arrays, with a device copy of them (its host copy stays
// current). `s` is validated first: kernels read the device copy without re-checking it.
std::shared_ptr<TensorStorage> upload(const TensorStorage& s);
// One array in GPU memory that another library allocated (a CuPy array's data).
struct ForeignArray {
  CUdeviceptr address;
  int64_t length;
  DType type;
};

// A storage whose arrays are `levelArrays` and `values`, GPU memory kept alive by `owner`
// (zero-copy from CuPy): its host arrays are allocated but filled only when the host reads
// them (a download). Each address must lie, with its length, inside one allocation on
// coiter's GPU (DeviceError otherwise). The caller has checked the arrays' contents against
// the format on the GPU (structure, bounds, order): kernels read them unchecked.
std::shared_ptr<TensorStorage> adoptDeviceArrays(const Format& format, const std::vector<int64_t>& shape,
                                                 DType indexType,
                                                 const std::vector<std::map<std::string, ForeignArray>>& levelArrays,
                                                 const std::vector<std::map<std::string, int64_t>>& scalars,
                                                 const ForeignArray& values, const std::shared_ptr<void>& owner);
// A storage sharing `s`'s host arrays (downloaded first if the device held the only current
// copy), without a device copy.
std::shared_ptr<TensorStorage> hostStorage(const TensorStorage& s);

}  // namespace coiter::cuda
