// Reading a tensor's stored entries back out of its levels: coordinates, dense arrays and
// single elements. Works for every format through the level types' expand/find.
#pragma once
#include <vector>

#include "storage/tensor_storage.hpp"

namespace coiter {

struct StoredEntries {
  std::vector<std::vector<int64_t>> modeCoords;  // one vector per mode
  std::vector<int64_t> valuePositions;           // index of each entry's value
};

// Every stored entry in storage order (unlabeled slots skipped).
StoredEntries storedEntries(const TensorStorage& t);
// Whether listEntriesInOrder applies to the tensor: every level's positions are runs of its
// parents' children in parent order, with coordinates known from the position
// (LevelType::runsInParentOrder), and every mode's coordinates derived from them (CSR, CSC,
// COO, DCSR, BCSR, dense, ...). Its stored entries are then its last level's positions, in order, and
// entry e's value is values[e].
bool entriesListInOrder(const TensorStorage& t);
// Where entriesListInOrder: writes mode m's coordinate of every stored entry, in storage order,
// into modeCoords[m] (countStoredEntries(t) elements each), straight from the levels' arrays.
// For CSR, the rows from pos and the columns from crd, as SciPy's tocoo does. I: int64_t, or
// int32_t where every coordinate fits (the tensor's own index type).
template <typename I>
void listEntriesInOrder(const TensorStorage& t, const std::vector<I*>& modeCoords);
int64_t countStoredEntries(const TensorStorage& t);
// Adds every stored entry into `out`, a zeroed row-major array of the tensor's shape.
void scatterToDense(const TensorStorage& t, void* out);
// The value at mode coordinates `coords` (the sum of duplicates; 0 when not stored),
// written into `out` (one element of the value dtype).
void readElement(const TensorStorage& t, const std::vector<int64_t>& coords, void* out);
// The values at the given positions, in order.
Buffer gatherValues(const TensorStorage& t, const std::vector<int64_t>& positions);

}  // namespace coiter
