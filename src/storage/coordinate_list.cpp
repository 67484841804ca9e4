#include "storage/coordinate_list.hpp"

#include <string>
#include <vector>

#include "storage/unpack.hpp"

namespace coiter {
namespace {

// The mode stored at each level (the format's level map), when each level stores one mode's
// coordinate itself, one level per mode (no blocks, diagonals or slots).
bool levelModes(const Format& f, std::vector<int>& modes) {
  if (f.levels().size() != static_cast<size_t>(f.order())) return false;
  modes.clear();
  for (const LevelCoordinate& lc : f.levelMap()) {
    if (lc.kind != LevelCoordinate::Kind::Mode) return false;
    modes.push_back(lc.mode);
  }
  return true;
}

bool isCoordinateList(const Format& f) {
  if (f.order() < 2) return false;
  const LevelType& top = *f.levels()[0];
  if (top.arrayNames() != std::vector<std::string>{"pos", "crd"} || !top.scalarNames().empty() ||
      top.properties().full || top.properties().unique)
    return false;
  for (size_t k = 1; k < f.levels().size(); ++k) {
    const LevelType& level = *f.levels()[k];
    if (level.arrayNames() != std::vector<std::string>{"crd"} || !level.scalarNames().empty() ||
        !level.properties().branchless)
      return false;
  }
  return true;
}

bool listsSortedAndUnique(const TensorStorage& t) {
  if (!entriesListInOrder(t)) return false;
  for (const auto& level : t.format().levels())
    if (!level->properties().ordered || !level->properties().unique) return false;
  return true;
}

template <typename I>
std::vector<LevelStorage> coordinateLevels(const TensorStorage& storage, const std::vector<int>& modes, int64_t n) {
  const DType indexType = storage.indexType();
  std::vector<Buffer> crd;
  std::vector<I*> modeCoords(modes.size());
  for (size_t k = 0; k < modes.size(); ++k) {
    crd.push_back(Buffer::allocate(indexType, n, "the coordinate list's crd"));
    modeCoords[static_cast<size_t>(modes[k])] = crd.back().template as<I>();
  }
  listEntriesInOrder(storage, modeCoords);
  std::vector<LevelStorage> levels(modes.size());
  levels[0].arrays["pos"] = Buffer::fromIndices({0, n}, indexType);
  for (size_t k = 0; k < modes.size(); ++k) levels[k].arrays["crd"] = std::move(crd[k]);
  return levels;
}

}  // namespace

std::shared_ptr<TensorStorage> listAsCoordinates(const TensorStorage& storage, const Format& target) {
  std::vector<int> from, to;
  if (!isCoordinateList(target) || !levelModes(storage.format(), from) || !levelModes(target, to) || from != to ||
      !listsSortedAndUnique(storage))
    return nullptr;
  const int64_t n = countStoredEntries(storage);
  std::vector<LevelStorage> levels = storage.indexType() == DType::Int32 ? coordinateLevels<int32_t>(storage, to, n)
                                                                         : coordinateLevels<int64_t>(storage, to, n);
  // (Entry e's value is values[e]: entriesListInOrder.)
  auto result = std::make_shared<TensorStorage>(target, storage.shape(), storage.valueType(), storage.indexType(),
                                                std::move(levels), storage.values().copy());
  result->markValid();
  return result;
}

}  // namespace coiter
