// Packing coordinates into any assemblable format (Kjolstad's thesis, ch. 2): entries are
// sorted by level coordinates, duplicates summed, and the levels built top-down, each level
// type laying out its own arrays. Memory is proportional to the stored positions: a dense
// level costs only what the format itself asks for.
#pragma once
#include <memory>
#include <vector>

#include "storage/tensor_storage.hpp"

namespace coiter {

struct PackRequest {
  Format format;
  std::vector<int64_t> shape;
  std::vector<Buffer> modeCoords;  // one int32/int64 buffer of length nnz per mode
  Buffer values;                   // length nnz
  bool sumDuplicates = true;       // else duplicates are kept where the format can hold them
  int indexBits = 32;              // 32: int32 when everything fits, else int64; 64: int64
  // The caller gives the coordinate and value buffers up (a file reader's fresh columns):
  // the tensor may keep them as its arrays instead of copies.
  bool adoptInputs = false;
  // Optional, with adoptInputs: the entries are laid out in mode 0's coarse buckets
  // (coarseBucketShift, storage/entry_sort.hpp), stably, bucket c from slot modeZeroBuckets[c]
  // on, as a text parser can leave them; where the sort's first key is mode 0, it then sorts
  // each bucket in place and skips its scatter into new columns.
  std::vector<int64_t> modeZeroBuckets;
  // The most threads sorting the entries may use (ct.set_num_threads); the tensor is the same
  // at any count.
  int threads = 1;
};

std::shared_ptr<TensorStorage> packCoordinates(const PackRequest& request);

}  // namespace coiter
