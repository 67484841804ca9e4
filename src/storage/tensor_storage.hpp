// The data of one tensor: its format, shape, value and index types, each level's arrays and
// the value array. Buffers may borrow NumPy memory; compiled kernels read them directly.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "format/format.hpp"
#include "storage/buffer.hpp"

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
  const std::vector<LevelStorage>& levels() const { return levels_; }
  const Buffer& values() const { return values_; }

  // Checks every array against the format (lengths, bounds, declared order and uniqueness)
  // once; later calls return at once. Storage built by coiter's packer is valid by
  // construction; storage wrapping outside arrays is checked before anything reads it.
  void validate() const;
  void markValid() const { valid_ = true; }
  bool isValid() const { return valid_; }

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
  mutable bool valid_ = false;
  mutable int64_t nnz_ = -1;
  mutable std::mutex mutex_;
};

}  // namespace coiter
