#include "storage/transpose.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "util/errors.hpp"

namespace coiter {
namespace {

// A matrix format of one dense level over one compressed, ordered and unique level, known by
// what the levels store (an extent; pos and crd), not by their kind; its level-to-mode order
// in `order`.
bool isDenseOverCompressed(const Format& f, std::vector<int>& order) {
  if (f.order() != 2 || f.hasDerivedLevels() || f.levels().size() != 2) return false;
  const LevelType& outer = *f.levels()[0];
  const LevelType& inner = *f.levels()[1];
  const bool dense =
      outer.properties().full && outer.arrayNames().empty() && outer.scalarNames() == std::vector<std::string>{"size"};
  const bool compressed = inner.arrayNames() == std::vector<std::string>{"pos", "crd"} && inner.scalarNames().empty() &&
                          inner.properties().ordered && inner.properties().unique && !inner.properties().full;
  if (!dense || !compressed) return false;
  order = f.modeOrder().empty() ? std::vector<int>{0, 1} : f.modeOrder();
  return true;
}

// A value moved as a word of its width (complex128: two 8-byte words).
struct Word16 {
  uint64_t low, high;
};

template <typename I, typename V>
std::vector<LevelStorage> swapped(const TensorStorage& storage, int64_t outer, int64_t inner, Buffer& values) {
  const LevelStorage& level = storage.levels()[1];
  const I* pos = level.array("pos").as<I>();
  const I* crd = level.array("crd").as<I>();
  const int64_t nnz = static_cast<int64_t>(pos[outer]);
  const DType indexType = storage.indexType();
  Buffer newPos = Buffer::allocate(indexType, inner + 1, "the transposed matrix's pos");
  Buffer newCrd = Buffer::allocate(indexType, nnz, "the transposed matrix's crd");
  values = Buffer::allocate(storage.valueType(), nnz, "the transposed matrix's values");
  I* next = newPos.as<I>();
  std::memset(next, 0, newPos.bytes());
  // Counts of each inner coordinate, shifted by one: their prefix sums are where each new
  // row starts, and then the next free slot of each while scattering.
  for (int64_t q = 0; q < nnz; ++q) next[static_cast<int64_t>(crd[q]) + 1]++;
  for (int64_t c = 0; c < inner; ++c) next[c + 1] += next[c];
  I* out = newCrd.as<I>();
  const V* from = static_cast<const V*>(storage.values().data());
  V* to = static_cast<V*>(values.data());
  // Outer coordinates are visited in order, so each new row receives them sorted.
  for (int64_t r = 0; r < outer; ++r) {
    for (int64_t q = static_cast<int64_t>(pos[r]); q < static_cast<int64_t>(pos[r + 1]); ++q) {
      const int64_t slot = static_cast<int64_t>(next[crd[q]]++);
      out[slot] = static_cast<I>(r);
      to[slot] = from[q];
    }
  }
  // Each slot now holds the next row's start: shifted back by one, they are pos.
  for (int64_t c = inner; c > 0; --c) next[c] = next[c - 1];
  next[0] = 0;
  std::vector<LevelStorage> levels(2);
  levels[0].scalars["size"] = inner;
  levels[1].arrays["pos"] = std::move(newPos);
  levels[1].arrays["crd"] = std::move(newCrd);
  return levels;
}

template <typename I>
std::vector<LevelStorage> swappedValues(const TensorStorage& storage, int64_t outer, int64_t inner, Buffer& values) {
  switch (dtypeSize(storage.valueType())) {
    case 1: return swapped<I, uint8_t>(storage, outer, inner, values);
    case 2: return swapped<I, uint16_t>(storage, outer, inner, values);
    case 4: return swapped<I, uint32_t>(storage, outer, inner, values);
    case 8: return swapped<I, uint64_t>(storage, outer, inner, values);
    case 16: return swapped<I, Word16>(storage, outer, inner, values);
  }
  throw CoiterError("transposing: values of " + std::to_string(dtypeSize(storage.valueType())) + " bytes");
}

}  // namespace

std::shared_ptr<TensorStorage> swapCompressedModes(const TensorStorage& storage, const Format& target) {
  std::vector<int> from, to;
  if (!isDenseOverCompressed(storage.format(), from) || !isDenseOverCompressed(target, to)) return nullptr;
  if (from[0] != to[1] || from[1] != to[0]) return nullptr;
  storage.checkBounds();  // coordinates become addresses; the arrays may have changed since wrapping
  const int64_t outer = storage.shape()[from[0]], inner = storage.shape()[from[1]];
  Buffer values;
  std::vector<LevelStorage> levels = storage.indexType() == DType::Int32
                                         ? swappedValues<int32_t>(storage, outer, inner, values)
                                         : swappedValues<int64_t>(storage, outer, inner, values);
  auto result = std::make_shared<TensorStorage>(target, storage.shape(), storage.valueType(), storage.indexType(),
                                                std::move(levels), std::move(values));
  result->markValid();
  return result;
}

}  // namespace coiter
