#include "storage/pack.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "storage/entry_sort.hpp"

namespace coiter {
namespace {

std::string formatName(const Format& f) { return f.str().empty() ? f.repr() : f.str(); }

// Mode coordinates as int64, checked against the shape.
std::vector<IndexVector> readModeCoordinates(const PackRequest& r, int64_t n) {
  std::vector<IndexVector> modes(r.shape.size());
  for (size_t m = 0; m < r.shape.size(); ++m) {
    const Buffer& b = r.modeCoords[m];
    if (!isIndexDType(b.dtype()))
      throw DTypeError("coordinates of mode " + std::to_string(m) + " must be integers");
    if (b.length() != n)
      throw ShapeError("mode " + std::to_string(m) + " has " + std::to_string(b.length()) +
                       " coordinates but there are " + std::to_string(n) + " values");
    modes[m].resize(n);
    const int64_t extent = r.shape[m];
    visitIndices(b, [&](auto* c) {
      for (int64_t e = 0; e < n; ++e) {
        int64_t x = c[e];
        if (x < 0 || x >= extent)
          throw ShapeError("coordinate " + std::to_string(x) + " of entry " + std::to_string(e) +
                           " is out of range for mode " + std::to_string(m) + " with extent " +
                           std::to_string(extent));
        modes[m][e] = x;
      }
    });
  }
  return modes;
}

struct LevelCoordinates {
  std::vector<IndexVector> keys;           // one per level, in input order
  std::vector<int64_t> extents;            // one per level
  std::vector<int64_t> diagonals;          // DIA: sorted distinct column - row offsets
  Buffer values;                           // the entries' values (reordered if slots needed it)
};

// Derives each level's coordinate from the mode coordinates (level map of the format).
LevelCoordinates levelCoordinates(const PackRequest& r, std::vector<IndexVector> modes,
                                  Buffer values) {
  const Format& f = r.format;
  const auto& map = f.levelMap();
  LevelCoordinates out;
  out.extents = f.levelExtents(r.shape);
  bool needsSlots = std::any_of(map.begin(), map.end(), [](const LevelCoordinate& lc) {
    return lc.kind == LevelCoordinate::Kind::Slot;
  });
  if (needsSlots) {
    // An entry's slot is its rank in its row, so rows must be sorted and summed first.
    SortedEntries canonical = sortEntries(std::move(modes), r.shape, values, true);
    modes = std::move(canonical.keys);
    values = canonical.values;
  }
  out.values = values;
  const int64_t n = values.length();
  std::vector<int> uses(modes.size(), 0);
  for (const auto& lc : map) ++uses[lc.mode];
  for (size_t k = 0; k < map.size(); ++k) {
    const LevelCoordinate& lc = map[k];
    if (lc.kind == LevelCoordinate::Kind::Mode && uses[lc.mode] == 1) {
      out.keys.push_back(std::move(modes[lc.mode]));  // the level coordinate is the mode's
      continue;
    }
    IndexVector key(n);
    const IndexVector& x = modes[lc.mode];
    switch (lc.kind) {
      case LevelCoordinate::Kind::Mode: key = x; break;
      case LevelCoordinate::Kind::BlockIndex:
        for (int64_t e = 0; e < n; ++e) key[e] = x[e] / lc.factor;
        break;
      case LevelCoordinate::Kind::BlockOffset:
        for (int64_t e = 0; e < n; ++e) key[e] = x[e] % lc.factor;
        break;
      case LevelCoordinate::Kind::Diagonal: {
        const IndexVector& col = modes[lc.factor];
        for (int64_t e = 0; e < n; ++e) key[e] = col[e] - x[e];
        out.diagonals.assign(key.begin(), key.end());
        std::sort(out.diagonals.begin(), out.diagonals.end());
        out.diagonals.erase(std::unique(out.diagonals.begin(), out.diagonals.end()),
                            out.diagonals.end());
        for (int64_t e = 0; e < n; ++e)
          key[e] = std::lower_bound(out.diagonals.begin(), out.diagonals.end(), key[e]) -
                   out.diagonals.begin();
        out.extents[k] = static_cast<int64_t>(out.diagonals.size());
        break;
      }
      case LevelCoordinate::Kind::Slot: {
        int64_t slots = 0;
        for (int64_t e = 0; e < n; ++e) {
          key[e] = (e > 0 && x[e] == x[e - 1]) ? key[e - 1] + 1 : 0;
          slots = std::max(slots, key[e] + 1);
        }
        out.extents[k] = slots;
        break;
      }
    }
    out.keys.push_back(std::move(key));
  }
  return out;
}

int64_t largestIndexValue(const std::vector<PackOutput>& levels) {
  int64_t largest = 0;
  for (const auto& level : levels)
    for (const auto& [name, values] : level.arrays)
      for (int64_t v : values) largest = std::max(largest, v < 0 ? -v : v);
  return largest;
}

}  // namespace

std::shared_ptr<TensorStorage> packCoordinates(const PackRequest& r) {
  const Format& f = r.format;
  f.checkShape(r.shape);
  if (r.modeCoords.size() != r.shape.size())
    throw ShapeError("expected coordinates for " + std::to_string(r.shape.size()) +
                     " modes, got " + std::to_string(r.modeCoords.size()));
  const int64_t n = r.values.length();
  LevelCoordinates lc = levelCoordinates(r, readModeCoordinates(r, n), r.values);
  SortedEntries entries = sortEntries(std::move(lc.keys), lc.extents, lc.values, r.sumDuplicates);
  if (entries.hadDuplicates && !r.sumDuplicates && !f.holdsDuplicates())
    throw FormatError("the coordinates contain duplicates and format " + formatName(f) +
                      " cannot hold them; pass sum_duplicates=True or use a non-unique "
                      "format such as \"coo\"");

  // Build the levels top-down.
  const auto& types = f.levels();
  const size_t levelCount = types.size();
  std::vector<PackOutput> built(levelCount);
  std::vector<PackNode> parents;
  if (entries.size() > 0) parents.push_back({0, 0, entries.size()});
  int64_t parentCount = 1;
  for (size_t k = 0; k < levelCount; ++k) {
    PackInput in;
    in.extent = lc.extents[k];
    in.coords = &entries.keys[k];
    size_t last = k;
    in.chain.push_back(&entries.keys[k]);
    while (last + 1 < levelCount && types[last + 1]->properties().branchless)
      in.chain.push_back(&entries.keys[++last]);
    in.chainReachesLeaf = last + 1 == levelCount;
    in.parentCount = parentCount;
    in.parents = &parents;
    in.diagonals = &lc.diagonals;
    if (r.shape.size() == 2) {
      in.rows = r.shape[0];
      in.cols = r.shape[1];
    }
    in.where = "level " + std::to_string(k) + " (" + types[k]->name() + ") of a " +
               formatName(f) + " tensor";
    built[k] = types[k]->pack(in);
    parents = std::move(built[k].children);
    parentCount = built[k].positionCount;
  }

  // Values: the last level's positions, zero where nothing is stored.
  Buffer values = Buffer::allocate(r.values.dtype(), parentCount);
  dispatchDType(r.values.dtype(), [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    T* dst = values.as<T>();
    const T* src = entries.values.as<T>();
    for (const PackNode& node : parents) {
      if (node.hi - node.lo != 1)
        throw FormatError("format " + formatName(f) + " cannot hold duplicate coordinates here");
      dst[node.pos] = src[node.lo];
    }
  });

  int64_t largest = std::max<int64_t>(largestIndexValue(built), parentCount);
  for (int64_t extent : r.shape) largest = std::max(largest, extent);
  const DType indexType = (r.indexBits == 32 && largest <= std::numeric_limits<int32_t>::max())
                              ? DType::Int32 : DType::Int64;
  std::vector<LevelStorage> levels(levelCount);
  for (size_t k = 0; k < levelCount; ++k) {
    for (auto& [name, array] : built[k].arrays)
      levels[k].arrays[name] = Buffer::fromIndices(array, indexType);
    levels[k].scalars = built[k].scalars;
  }
  if (f.name() == "dia")  // one diagonal list, shared by the range and offset levels
    levels[2].arrays["offset"] = levels[1].arrays["offset"];
  auto storage = std::make_shared<TensorStorage>(f, r.shape, r.values.dtype(), indexType,
                                                 std::move(levels), values);
  storage->markValid();
  return storage;
}

}  // namespace coiter
