#include "storage/pack.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "storage/entry_sort.hpp"

namespace coiter {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

std::string formatName(const Format& f) { return f.str().empty() ? f.repr() : f.str(); }

// "a csr tensor of shape (3, 4)": what packing errors name (the shape, since packing fails
// mostly on shapes too large for the format's dense levels).
std::string describeTensor(const Format& f, const std::vector<int64_t>& shape) {
  std::string text = "a " + formatName(f) + " tensor of shape (";
  for (size_t m = 0; m < shape.size(); ++m) text += (m ? ", " : "") + std::to_string(shape[m]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// The index width packing works at. Level coordinates are below their level's extent (or,
// for diagonal numbers and slots, below the entry count), and a level writes three kinds of
// values into its index arrays: coordinates (or -1), diagonal offsets (smaller in magnitude
// than the largest mode extent) and positions of a compressed level (at most the entry
// count). So when the extents and the entry count fit in int32, every array does: the sort
// moves half the bytes, and sorted columns can become arrays with no narrowing pass.
DType workingIndexType(const PackRequest& r, const std::vector<int64_t>& levelExtents, int64_t n) {
  if (r.indexBits != 32) return DType::Int64;
  int64_t bound = n;
  for (int64_t extent : r.shape) bound = std::max(bound, extent);
  for (int64_t extent : levelExtents) bound = std::max(bound, extent);
  return bound <= kInt32Max ? DType::Int32 : DType::Int64;
}

// A copy of an index buffer at another width (its values fit that width).
Buffer convertIndices(const Buffer& b, DType width) {
  Buffer out = Buffer::allocate(width, b.length());
  visitIndices(b,
               [&](const auto* src) { visitIndices(out, [&](auto* dst) { std::copy(src, src + b.length(), dst); }); });
  return out;
}

// Index of the first coordinate outside [0, extent), or n when there is none. Blocks are
// tested without branching, so the common all-valid case runs at memory speed.
template <typename T>
int64_t firstOutOfRange(const T* c, int64_t n, int64_t extent) {
  constexpr int64_t kBlock = 4096;
  const uint64_t limit = static_cast<uint64_t>(extent);
  auto outside = [&](int64_t e) {  // a negative coordinate wraps to a huge unsigned one
    return static_cast<uint64_t>(static_cast<int64_t>(c[e])) >= limit;
  };
  for (int64_t lo = 0; lo < n; lo += kBlock) {
    const int64_t hi = std::min(n, lo + kBlock);
    bool any = false;
    for (int64_t e = lo; e < hi; ++e) any |= outside(e);
    if (!any) continue;
    for (int64_t e = lo; e < hi; ++e)
      if (outside(e)) return e;
  }
  return n;
}

// Mode coordinates at the working width, checked against the shape. A mode already at that
// width is used where it lies (the sort never writes into its input).
std::vector<Buffer> readModeCoordinates(const PackRequest& r, int64_t n, DType width) {
  std::vector<Buffer> modes;
  for (size_t m = 0; m < r.shape.size(); ++m) {
    const Buffer& b = r.modeCoords[m];
    if (!isIndexDType(b.dtype())) throw DTypeError("coordinates of mode " + std::to_string(m) + " must be integers");
    if (b.length() != n)
      throw ShapeError("mode " + std::to_string(m) + " has " + std::to_string(b.length()) +
                       " coordinates but there are " + std::to_string(n) + " values");
    const int64_t extent = r.shape[m];
    visitIndices(b, [&](const auto* c) {
      const int64_t e = firstOutOfRange(c, n, extent);
      if (e < n)
        throw ShapeError("coordinate " + std::to_string(c[e]) + " of entry " + std::to_string(e) +
                         " is out of range for mode " + std::to_string(m) + " with extent " + std::to_string(extent));
    });
    modes.push_back(b.dtype() == width ? b : convertIndices(b, width));
  }
  return modes;
}

// A new coordinate column of the given width with element e = f(e), filled in order.
template <typename F>
Buffer makeColumn(DType width, int64_t n, F&& f) {
  Buffer column = Buffer::allocate(width, n);
  visitIndices(column, [&](auto* c) {
    for (int64_t e = 0; e < n; ++e) c[e] = f(e);
  });
  return column;
}

struct LevelCoordinates {
  std::vector<Buffer> keys;         // one column per level, in input order
  std::vector<int64_t> extents;     // one per level
  std::vector<int64_t> diagonals;   // DIA: sorted distinct column - row offsets
  Buffer values;                    // the entries' values (reordered if slots needed it)
  bool firstKeyIsModeZero = false;  // keys[0] is mode 0's coordinates, in the request's order
};

// Derives each level's coordinate from the mode coordinates (level map of the format).
LevelCoordinates levelCoordinates(const PackRequest& r, std::vector<Buffer> modes, Buffer values, DType width) {
  const Format& f = r.format;
  const auto& map = f.levelMap();
  LevelCoordinates out;
  out.extents = f.levelExtents(r.shape);
  bool needsSlots = std::any_of(map.begin(), map.end(),
                                [](const LevelCoordinate& lc) { return lc.kind == LevelCoordinate::Kind::Slot; });
  if (needsSlots) {
    // An entry's slot is its rank in its row, so rows must be sorted and summed first.
    SortedEntries canonical = sortEntries(std::move(modes), r.shape, values, true, r.threads);
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
      out.firstKeyIsModeZero = out.firstKeyIsModeZero || (k == 0 && lc.mode == 0 && !needsSlots);
      continue;
    }
    const Buffer& x = modes[lc.mode];
    switch (lc.kind) {
      case LevelCoordinate::Kind::Mode: out.keys.push_back(x.copy()); break;
      case LevelCoordinate::Kind::BlockIndex:
        out.keys.push_back(makeColumn(width, n, [&](int64_t e) { return x.index(e) / lc.factor; }));
        break;
      case LevelCoordinate::Kind::BlockOffset:
        out.keys.push_back(makeColumn(width, n, [&](int64_t e) { return x.index(e) % lc.factor; }));
        break;
      case LevelCoordinate::Kind::Diagonal: {
        const Buffer& col = modes[lc.factor];
        std::vector<int64_t> offsets(n);
        for (int64_t e = 0; e < n; ++e) offsets[e] = col.index(e) - x.index(e);
        out.diagonals = offsets;
        std::sort(out.diagonals.begin(), out.diagonals.end());
        out.diagonals.erase(std::unique(out.diagonals.begin(), out.diagonals.end()), out.diagonals.end());
        out.keys.push_back(makeColumn(width, n, [&](int64_t e) {
          return std::lower_bound(out.diagonals.begin(), out.diagonals.end(), offsets[e]) - out.diagonals.begin();
        }));
        out.extents[k] = static_cast<int64_t>(out.diagonals.size());
        break;
      }
      case LevelCoordinate::Kind::Slot: {
        int64_t slot = 0, slots = 0;
        out.keys.push_back(makeColumn(width, n, [&](int64_t e) {
          slot = (e > 0 && x.index(e) == x.index(e - 1)) ? slot + 1 : 0;
          slots = std::max(slots, slot + 1);
          return slot;
        }));
        out.extents[k] = slots;
        break;
      }
    }
  }
  return out;
}

// The values at the last level's positions, zero where nothing is stored.
Buffer leafValues(const PackNodes& leaves, int64_t positionCount, const Buffer& sorted, const Format& f,
                  const std::string& tensor) {
  if (leaves.oneEntryEach && leaves.size() == positionCount) return sorted;  // q holds entry q
  Buffer values = Buffer::allocate(sorted.dtype(), positionCount, "the values of " + tensor);
  dispatchDType(sorted.dtype(), [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    T* dst = values.as<T>();
    const T* src = sorted.as<T>();
    leaves.forEach([&](const PackNode& node) {
      if (node.hi - node.lo != 1)
        throw FormatError("format " + formatName(f) + " cannot hold duplicate coordinates here");
      dst[node.pos] = src[node.lo];
    });
  });
  return values;
}

int64_t largestIndexValue(const std::vector<PackOutput>& levels) {
  int64_t largest = 0;
  for (const auto& level : levels)
    for (const auto& [name, array] : level.arrays)
      visitIndices(array, [&](const auto* v) {
        for (int64_t k = 0; k < array.length(); ++k) largest = std::max<int64_t>(largest, v[k] < 0 ? -v[k] : v[k]);
      });
  return largest;
}

// The levels' arrays, and the last level's positions: how many, and which hold entries.
struct BuiltLevels {
  std::vector<PackOutput> levels;
  PackNodes leaves;
  int64_t positionCount = 0;
};

// Builds the levels top-down from the sorted entries, each level type laying out its arrays
// from the groups of entries under each of its parents.
BuiltLevels packLevelByLevel(const PackRequest& r, const LevelCoordinates& lc, SortedEntries& entries,
                             const std::string& tensor) {
  const auto& types = r.format.levels();
  const size_t levelCount = types.size();
  BuiltLevels out;
  out.levels.resize(levelCount);
  PackNodes& parents = out.leaves;
  if (entries.size() > 0) parents.list.push_back({0, 0, entries.size()});
  int64_t parentCount = 1;
  for (size_t k = 0; k < levelCount; ++k) {
    PackInput in;
    in.extent = lc.extents[k];
    in.coords = &entries.keys[k];
    size_t last = k;
    in.chain.push_back(&entries.keys[k]);
    while (last + 1 < levelCount && types[last + 1]->properties().branchless) in.chain.push_back(&entries.keys[++last]);
    in.chainReachesLeaf = last + 1 == levelCount;
    in.parentCount = parentCount;
    in.parents = &parents;
    in.diagonals = &lc.diagonals;
    if (r.shape.size() == 2) {
      in.rows = r.shape[0];
      in.cols = r.shape[1];
    }
    in.where = "level " + std::to_string(k) + " (" + types[k]->name() + ") of " + tensor;
    out.levels[k] = types[k]->pack(in);
    parents = std::move(out.levels[k].children);
    parentCount = out.levels[k].positionCount;
  }
  out.positionCount = parentCount;
  return out;
}

// Whether `f` lays a matrix out as CSR does: a located level over every coordinate of the first
// mode (dense), then a level of segments (compressed) over the second that holds each
// coordinate once under a parent (ordered or not: sorted entries fill it in order). Asked of
// the level types' properties, as everything outside src/format/ does (docs/architecture.md).
bool isDenseThenUniqueCompressed(const Format& f) {
  const auto& types = f.levels();
  if (types.size() != 2) return false;
  const auto& map = f.levelMap();
  bool modes = map[0].kind == LevelCoordinate::Kind::Mode && map[1].kind == LevelCoordinate::Kind::Mode;
  return modes && types[0]->locatesEveryCoordinate() && types[0]->assembly() == LevelAssembly::Located &&
         types[1]->storesSegments() && types[1]->properties().unique;
}

// packLevelByLevel for isDenseThenUniqueCompressed formats, from sorted entries with distinct
// keys (the caller refuses duplicates it does not sum): pos[k + 1] is the number of entries
// with a first key up to k, and crd the second key column as it stands, which are the arrays
// the two levels build, found in one pass over the first key instead of a list of a node per
// row and a scan of each row for groups of equal coordinates (packing 10 M sorted entries of
// a 10^6 x 10^6 matrix: 60 ms instead of 75). `rows` (the first level's extent) is below
// 2**63 - 1, so pos fits.
BuiltLevels packDenseThenUniqueCompressed(int64_t rows, const SortedEntries& entries, const std::string& tensor) {
  const int64_t n = entries.size();
  const Buffer& firstKey = entries.keys[0];
  Buffer pos = Buffer::allocate(firstKey.dtype(), rows + 1, "level 1 (compressed) of " + tensor + ": array 'pos'");
  visitIndices(firstKey, [&](const auto* row) {
    using Index = std::remove_const_t<std::remove_pointer_t<decltype(row)>>;
    Index* p = pos.as<Index>();
    // Each row change fills pos over the rows it passes: the rows up to the new one end here.
    int64_t filled = 0;  // pos[0..filled] are written
    p[0] = 0;
    for (int64_t e = 0; e < n; ++e) {
      const int64_t k = row[e];
      while (filled < k) p[++filled] = static_cast<Index>(e);
    }
    while (filled < rows) p[++filled] = static_cast<Index>(n);
  });
  BuiltLevels out;
  out.levels.resize(2);
  out.levels[0].scalars["size"] = rows;
  out.levels[0].positionCount = rows;
  out.levels[1].arrays["pos"] = pos;
  out.levels[1].arrays["crd"] = entries.keys[1];
  out.levels[1].positionCount = n;
  out.leaves = PackNodes::entries(n);
  out.positionCount = n;
  return out;
}

// Whether `b` starts at memory the caller passed in: sorted columns and values that were
// already in order come back as the input itself, and a tensor must not share the caller's
// arrays (the caller may change them).
bool isCallersMemory(const Buffer& b, const PackRequest& r) {
  if (b.data() == r.values.data()) return true;
  return std::any_of(r.modeCoords.begin(), r.modeCoords.end(), [&](const Buffer& c) { return b.data() == c.data(); });
}

Buffer ownMemory(const Buffer& b, const PackRequest& r) {
  return !r.adoptInputs && isCallersMemory(b, r) ? b.copy() : b;
}

}  // namespace

std::shared_ptr<TensorStorage> packCoordinates(const PackRequest& r) {
  const Format& f = r.format;
  f.checkShape(r.shape);
  if (r.modeCoords.size() != r.shape.size())
    throw ShapeError("expected coordinates for " + std::to_string(r.shape.size()) + " modes, got " +
                     std::to_string(r.modeCoords.size()));
  const int64_t n = r.values.length();
  const DType width = workingIndexType(r, f.levelExtents(r.shape), n);
  if (!r.modeZeroBuckets.empty() && !r.adoptInputs)
    throw ArgumentError("entries laid out in coarse buckets are sorted in place: their arrays must be adopted");
  LevelCoordinates lc = levelCoordinates(r, readModeCoordinates(r, n, width), r.values, width);
  // Another first key (CSC's columns, a block's index) is sorted from scratch.
  const bool grouped = lc.firstKeyIsModeZero && !r.modeZeroBuckets.empty();
  SortedEntries entries = sortEntries(std::move(lc.keys), lc.extents, lc.values, r.sumDuplicates, r.threads,
                                      grouped ? &r.modeZeroBuckets : nullptr);
  if (entries.hadDuplicates && !r.sumDuplicates && !f.holdsDuplicates())
    throw FormatError("the coordinates contain duplicates and format " + formatName(f) +
                      " cannot hold them; pass sum_duplicates=True or use a non-unique "
                      "format such as \"coo\"");

  const std::string tensor = describeTensor(f, r.shape);
  BuiltLevels packed = isDenseThenUniqueCompressed(f) && lc.extents[0] < std::numeric_limits<int64_t>::max()
                           ? packDenseThenUniqueCompressed(lc.extents[0], entries, tensor)
                           : packLevelByLevel(r, lc, entries, tensor);
  std::vector<PackOutput>& built = packed.levels;
  const int64_t parentCount = packed.positionCount;
  const size_t levelCount = built.size();
  const Buffer values = leafValues(packed.leaves, parentCount, entries.values, f, tensor);

  // int32 arrays only hold values within the bound that chose that width.
  int64_t largest = parentCount;
  for (int64_t extent : r.shape) largest = std::max(largest, extent);
  if (width == DType::Int64) largest = std::max(largest, largestIndexValue(built));
  const DType indexType = (r.indexBits == 32 && largest <= kInt32Max) ? DType::Int32 : DType::Int64;
  std::vector<LevelStorage> levels(levelCount);
  for (size_t k = 0; k < levelCount; ++k) {
    for (auto& [name, array] : built[k].arrays)
      levels[k].arrays[name] = array.dtype() == indexType ? ownMemory(array, r) : convertIndices(array, indexType);
    levels[k].scalars = built[k].scalars;
  }
  if (f.name() == "dia")  // one diagonal list, shared by the range and offset levels
    levels[2].arrays["offset"] = levels[1].arrays["offset"];
  auto storage =
      std::make_shared<TensorStorage>(f, r.shape, r.values.dtype(), indexType, std::move(levels), ownMemory(values, r));
  storage->markValid();
  return storage;
}

}  // namespace coiter
