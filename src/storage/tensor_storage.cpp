#include "storage/tensor_storage.hpp"

#include "storage/unpack.hpp"

namespace coiter {

TensorStorage::TensorStorage(Format format, std::vector<int64_t> shape, DType valueType, DType indexType,
                             std::vector<LevelStorage> levels, Buffer values)
    : format_(std::move(format)),
      shape_(std::move(shape)),
      valueType_(valueType),
      indexType_(indexType),
      levels_(std::move(levels)),
      values_(std::move(values)) {
  format_.checkShape(shape_);
  if (!isIndexDType(indexType_)) throw DTypeError("index dtype must be int32 or int64, not " + dtypeName(indexType_));
  if (levels_.size() != format_.levels().size())
    throw FormatError("format " + format_.repr() + " has " + std::to_string(format_.levels().size()) + " levels but " +
                      std::to_string(levels_.size()) + " level arrays were given");
  if (values_.dtype() != valueType_)
    throw DTypeError("value array has dtype " + dtypeName(values_.dtype()) + ", expected " + dtypeName(valueType_));
}

void TensorStorage::attachDevice(std::shared_ptr<const DeviceCopy> copy, bool hostCurrent) {
  device_ = std::move(copy);
  hostCurrent_.store(hostCurrent || !device_, std::memory_order_release);
}

void TensorStorage::downloadFromDevice() const {
  std::lock_guard<std::mutex> lock(deviceMutex_);
  if (hostCurrent_.load(std::memory_order_acquire)) return;  // another thread downloaded it
  device_->download();
  hostCurrent_.store(true, std::memory_order_release);
}

std::string TensorStorage::describeLevel(size_t k) const {
  std::string f = format_.str().empty() ? format_.repr() : format_.str();
  return "level " + std::to_string(k) + " (" + format_.levels()[k]->name() + ") of a " + f + " tensor";
}

int64_t TensorStorage::checkLevels(ValidationScope scope) const {
  syncHost();
  std::vector<int64_t> extents = format_.levelExtents(shape_);
  int64_t positions = 1;
  for (size_t k = 0; k < levels_.size(); ++k) {
    for (const auto& [name, buffer] : levels_[k].arrays)
      if (buffer.dtype() != indexType_)
        throw FormatError(describeLevel(k) + ": array '" + name + "' has dtype " + dtypeName(buffer.dtype()) +
                          " but the tensor's index dtype is " + dtypeName(indexType_));
    int64_t extent = extents[k];
    if (extent < 0) {  // data-dependent level (diagonals, slots): a dense level of any size
      auto it = levels_[k].scalars.find("size");
      extent = it == levels_[k].scalars.end() ? 0 : it->second;
    }
    positions = format_.levels()[k]->validate(levels_[k], positions, extent,
                                              LevelDescription([this, k] { return describeLevel(k); }), scope);
    // Coordinates of a dimension of extent 0 cannot be stored (kernels clamp a bad coordinate
    // to a valid one, and there is none); unlabeled slots (-1) can.
    const LevelType& type = *format_.levels()[k];
    if (extent == 0 && positions != 0 && levels_[k].arrays.count("crd") && type.smallestStoredCoordinate() == 0)
      throw FormatError(describeLevel(k) + ": a dimension of extent 0 has " + std::to_string(positions) +
                        " stored positions");
  }
  if (format_.name() == "dia") {  // range and offset levels must agree on the diagonals
    const Buffer& a = levels_[1].array("offset");
    const Buffer& b = levels_[2].array("offset");
    for (int64_t d = 0; d < a.length(); ++d)
      if (a.index(d) != b.index(d))
        throw FormatError("dia tensor: range and offset levels disagree on diagonal " + std::to_string(d));
  }
  if (values_.length() != positions)
    throw ShapeError("value array has " + std::to_string(values_.length()) +
                     " entries but the format's last level has " + std::to_string(positions) + " positions");
  return positions;
}

void TensorStorage::validate() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (valid_) return;
  checkLevels(ValidationScope::Full);
  valid_ = true;
}

void TensorStorage::checkStructure() const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (structureChecked_) {
      structureChecked_ = false;
      return;
    }
  }
  if (!isValid()) return validate();  // the first use checks everything
  checkLevels(ValidationScope::Structure);
}

void TensorStorage::checkBounds() const {
  if (!isValid()) return validate();
  checkLevels(ValidationScope::Bounds);
}

int64_t TensorStorage::nnz() const {
  if (nnz_ < 0) {
    validate();
    nnz_ = countStoredEntries(*this);
  }
  return nnz_;
}

std::shared_ptr<TensorStorage> TensorStorage::copy() const {
  syncHost();
  std::vector<LevelStorage> levels = levels_;
  for (auto& l : levels)
    for (auto& [name, buffer] : l.arrays) buffer = buffer.copy();
  auto t = std::make_shared<TensorStorage>(format_, shape_, valueType_, indexType_, std::move(levels), values_.copy());
  t->valid_ = valid_;
  return t;
}

int64_t TensorStorage::positionCount(size_t k) const {
  int64_t positions = 1;
  for (size_t l = 0; l <= k; ++l) positions = format_.levels()[l]->countPositions(levels_[l], positions);
  return positions;
}

}  // namespace coiter
