// The data of one tensor: its format, shape, value and index types, each level's arrays and
// the value array. Buffers may borrow NumPy memory; compiled kernels read them directly.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "format/format.hpp"
#include "memory/buffer.hpp"
#include "storage/device_copy.hpp"

namespace coiter {

class TensorStorage {
 public:
  TensorStorage(Format format, std::vector<int64_t> shape, DType valueType, DType indexType,
                std::vector<LevelStorage> levels, Buffer values);
  TensorStorage(const TensorStorage&) = delete;
  TensorStorage& operator=(const TensorStorage&) = delete;

  const Format& format() const { return format_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  DType valueType() const { return valueType_; }
  DType indexType() const { return indexType_; }
  // The arrays, current on the host: a tensor whose device holds the only current copy (a
  // result computed on a GPU) downloads it first.
  const std::vector<LevelStorage>& levels() const {
    syncHost();
    return levels_;
  }
  const Buffer& values() const {
    syncHost();
    return values_;
  }
  // The arrays without downloading: for code that reads only their addresses and lengths
  // (a GPU launch passes the device copies of the arrays it finds here).
  const std::vector<LevelStorage>& levelsAnywhere() const { return levels_; }
  const Buffer& valuesAnywhere() const { return values_; }

  // A device's copy of the arrays. `hostCurrent` false: the device's copy is the only
  // current one (host reads download it). The device copy is never changed by the host: a
  // storage's arrays are not written after it is built, except by the user through NumPy,
  // which the device copy does not see (to("cuda") copies).
  void attachDevice(std::shared_ptr<const DeviceCopy> copy, bool hostCurrent);
  const DeviceCopy* deviceCopy() const { return device_.get(); }
  std::shared_ptr<const DeviceCopy> sharedDeviceCopy() const { return device_; }
  bool hostCurrent() const { return hostCurrent_; }

  // Checks every array against the format (lengths, bounds, declared order and uniqueness)
  // once; later calls return at once. Storage built by coiter's packer is valid by
  // construction; storage wrapping outside arrays is checked before anything reads it.
  // Arrays are NumPy memory a user may change after that check: what reads them again
  // re-checks what it relies on (checkStructure, checkBounds), at every use.
  void validate() const;
  // Valid without a full check: built by coiter, or its order vouched for by its source
  // (SciPy's canonical-format flag); structure and bounds are still checked at each use.
  void markValid() const { valid_ = true; }
  bool isValid() const { return valid_; }
  // ValidationScope::Structure at every call (O(parent positions)): lengths and positions.
  // The first call after markStructureChecked() returns at once (the check just ran).
  // Before the first validate() both run it instead, which checks everything.
  void checkStructure() const;
  void markStructureChecked() const { structureChecked_ = true; }
  // ValidationScope::Bounds (O(positions)): also every coordinate within its dimension.
  void checkBounds() const;

  // Number of stored entries (unlabeled slots of hashed, ELL and DIA levels excluded).
  int64_t nnz() const;
  // A deep copy that owns all its memory.
  std::shared_ptr<TensorStorage> copy() const;
  // Positions of level k (sz_k), from the level sizes alone.
  int64_t positionCount(size_t k) const;
  // Describes a level for error messages: "level 1 (compressed) of a ds tensor".
  std::string describeLevel(size_t k) const;

 private:
  Format format_;
  std::vector<int64_t> shape_;
  DType valueType_;
  DType indexType_;
  std::vector<LevelStorage> levels_;
  Buffer values_;
  // Checks `scope` of every level; returns the position count of the last level.
  int64_t checkLevels(ValidationScope scope) const;
  void syncHost() const {
    if (!hostCurrent_.load(std::memory_order_acquire)) downloadFromDevice();
  }
  void downloadFromDevice() const;
  std::shared_ptr<const DeviceCopy> device_;
  mutable std::atomic<bool> hostCurrent_{true};
  mutable std::mutex deviceMutex_;
  mutable bool valid_ = false;
  mutable bool structureChecked_ = false;
  mutable int64_t nnz_ = -1;
  mutable std::mutex mutex_;
};

}  // namespace coiter
