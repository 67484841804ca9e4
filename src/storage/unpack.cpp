#include "storage/unpack.hpp"

#include <algorithm>
#include <cstring>

namespace coiter {
namespace {

bool everyLevelCompact(const Format& f) {
  for (const auto& l : f.levels())
    if (!l->properties().compact) return false;
  return true;
}

}  // namespace

StoredEntries storedEntries(const TensorStorage& t) {
  t.checkBounds();  // the coordinates become addresses; the arrays may have changed since wrapping
  const Format& f = t.format();
  const size_t levelCount = f.levels().size();
  // Expand level by level, remembering each child's parent to rebuild coordinates after.
  std::vector<int64_t> positions = {0};
  std::vector<std::vector<int64_t>> levelCoords(levelCount), parentOf(levelCount);
  for (size_t k = 0; k < levelCount; ++k) {
    ExpandOutput out;
    // (The level's positions under all of the batch's parents: at least what it expands to,
    // so the outputs grow without copying themselves over.)
    const auto capacity = static_cast<size_t>(t.positionCount(k));
    out.childPos.reserve(capacity);
    out.coord.reserve(capacity);
    out.parentIndex.reserve(capacity);
    f.levels()[k]->expand(t.levels()[k], positions, out);
    levelCoords[k] = std::move(out.coord);
    parentOf[k] = std::move(out.parentIndex);
    positions = std::move(out.childPos);
  }
  StoredEntries entries;
  const size_t n = positions.size();
  entries.modeCoords.assign(t.shape().size(), std::vector<int64_t>(n, 0));
  std::vector<int64_t> at(n);  // index of entry e's ancestor at the current level
  for (size_t e = 0; e < n; ++e) at[e] = static_cast<int64_t>(e);
  for (size_t k = levelCount; k-- > 0;) {
    const LevelCoordinate& lc = f.levelMap()[k];
    std::vector<int64_t>& mode = entries.modeCoords[lc.mode];
    for (size_t e = 0; e < n; ++e) {
      mode[e] += lc.modeContribution(levelCoords[k][at[e]]);
      at[e] = parentOf[k][at[e]];
    }
  }
  entries.valuePositions = std::move(positions);
  return entries;
}

bool entriesListInOrder(const TensorStorage& t) {
  const Format& f = t.format();
  std::vector<bool> modeGiven(t.shape().size(), false);
  for (size_t k = 0; k < f.levels().size(); ++k) {
    if (!f.levels()[k]->runsInParentOrder() || !f.levelMap()[k].isModeFunction()) return false;
    modeGiven[f.levelMap()[k].mode] = true;
  }
  // (Every mode is some level's: listEntriesInOrder writes each mode from its levels alone.)
  return std::all_of(modeGiven.begin(), modeGiven.end(), [](bool given) { return given; });
}

template <typename I>
void listEntriesInOrder(const TensorStorage& t, const std::vector<I*>& modeCoords) {
  t.checkBounds();  // the coordinates become addresses; the arrays may have changed since wrapping
  const Format& f = t.format();
  const size_t levelCount = f.levels().size();
  if (levelCount == 0) return;  // a scalar: one entry, no mode
  // firstEntry[k][p]: the first entry under position p of level k (positionCount(k) + 1 values),
  // composed bottom-up from each level's child starts; the last level's positions are entries.
  std::vector<std::vector<int64_t>> firstEntry(levelCount);
  for (size_t k = levelCount - 1; k-- > 0;) {
    const int64_t parents = t.positionCount(k);
    std::vector<int64_t> starts(static_cast<size_t>(parents) + 1);
    f.levels()[k + 1]->childStarts(t.levels()[k + 1], parents, starts.data());
    if (k + 2 < levelCount)
      for (int64_t& s : starts) s = firstEntry[k + 1][s];
    firstEntry[k] = std::move(starts);
  }
  // Top-down: each level gives its coordinate's contribution to the entries under each of its
  // positions (which cover every entry), reading the coordinates a bounded chunk at a time. The
  // first level of a mode writes it, a later one (a block offset under a block index) adds.
  constexpr int64_t kChunk = 4096;
  std::vector<int64_t> coords(kChunk);
  std::vector<bool> written(modeCoords.size(), false);
  for (size_t k = 0; k < levelCount; ++k) {
    const LevelCoordinate& lc = f.levelMap()[k];
    I* mode = modeCoords[lc.mode];
    const bool add = written[lc.mode];
    written[lc.mode] = true;
    const int64_t positions = t.positionCount(k);
    for (int64_t begin = 0; begin < positions; begin += kChunk) {
      const int64_t end = std::min(begin + kChunk, positions);
      f.levels()[k]->coordinatesAt(t.levels()[k], begin, end, coords.data());
      if (k + 1 == levelCount) {
        // The last level: position q is entry q (one plain loop each way, which vectorizes:
        // half of a CSR matrix's listing).
        const int64_t factor = lc.modeContribution(1);
        if (add)
          for (int64_t q = begin; q < end; ++q) mode[q] += static_cast<I>(coords[q - begin] * factor);
        else
          for (int64_t q = begin; q < end; ++q) mode[q] = static_cast<I>(coords[q - begin] * factor);
        continue;
      }
      const int64_t* first = firstEntry[k].data();
      for (int64_t q = begin; q < end; ++q) {
        const auto c = static_cast<I>(lc.modeContribution(coords[q - begin]));
        if (add)
          for (int64_t e = first[q]; e < first[q + 1]; ++e) mode[e] += c;
        else
          std::fill(mode + first[q], mode + first[q + 1], c);
      }
    }
  }
}

template void listEntriesInOrder(const TensorStorage&, const std::vector<int32_t*>&);
template void listEntriesInOrder(const TensorStorage&, const std::vector<int64_t*>&);

int64_t countStoredEntries(const TensorStorage& t) {
  if (everyLevelCompact(t.format())) return t.values().length();
  return static_cast<int64_t>(storedEntries(t).valuePositions.size());
}

void scatterToDense(const TensorStorage& t, void* out) {
  StoredEntries entries = storedEntries(t);
  const auto& shape = t.shape();
  dispatchDType(t.valueType(), [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    T* dense = static_cast<T*>(out);
    const T* values = t.values().as<T>();
    for (size_t e = 0; e < entries.valuePositions.size(); ++e) {
      int64_t flat = 0;
      for (size_t m = 0; m < shape.size(); ++m) flat = flat * shape[m] + entries.modeCoords[m][e];
      dense[flat] = addValues(dense[flat], values[entries.valuePositions[e]]);
    }
  });
}

void readElement(const TensorStorage& t, const std::vector<int64_t>& coords, void* out) {
  t.checkStructure();  // finding a coordinate stays within each segment
  const Format& f = t.format();
  const auto& shape = t.shape();
  if (coords.size() != shape.size())
    throw ShapeError("a tensor of order " + std::to_string(shape.size()) + " is indexed with " +
                     std::to_string(coords.size()) + " coordinates");
  for (size_t m = 0; m < coords.size(); ++m)
    if (coords[m] < 0 || coords[m] >= shape[m])
      throw ShapeError("index " + std::to_string(coords[m]) + " is out of range for mode " + std::to_string(m) +
                       " with extent " + std::to_string(shape[m]));
  // Walk down every matching path; derived levels without a known coordinate (diagonal
  // number, ELL slot) try each child and let the levels below reject the wrong ones.
  std::vector<int64_t> positions = {0};
  for (size_t k = 0; k < f.levels().size(); ++k) {
    const LevelCoordinate& lc = f.levelMap()[k];
    const LevelType& level = *f.levels()[k];
    std::vector<int64_t> next;
    if (lc.isModeFunction()) {
      int64_t x = coords[lc.mode];
      int64_t c = lc.kind == LevelCoordinate::Kind::BlockIndex    ? x / lc.factor
                  : lc.kind == LevelCoordinate::Kind::BlockOffset ? x % lc.factor
                                                                  : x;
      for (int64_t p : positions) level.find(t.levels()[k], p, c, next);
    } else {
      ExpandOutput children;
      level.expand(t.levels()[k], positions, children);
      next = std::move(children.childPos);
    }
    positions = std::move(next);
  }
  dispatchDType(t.valueType(), [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    T sum{};
    for (int64_t p : positions) sum = addValues(sum, t.values().as<T>()[p]);
    std::memcpy(out, &sum, sizeof(T));
  });
}

Buffer gatherValues(const TensorStorage& t, const std::vector<int64_t>& positions) {
  const size_t width = dtypeSize(t.valueType());
  Buffer out = Buffer::allocate(t.valueType(), static_cast<int64_t>(positions.size()));
  const char* src = static_cast<const char*>(t.values().data());
  char* dst = static_cast<char*>(out.data());
  for (size_t e = 0; e < positions.size(); ++e) std::memcpy(dst + e * width, src + positions[e] * width, width);
  return out;
}

}  // namespace coiter
