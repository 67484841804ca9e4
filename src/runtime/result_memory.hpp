// Memory for result arrays: malloc'd (kernels grow them with realloc), handed to NumPy-owned
// Buffers once a kernel returns.
#pragma once
#include <cstddef>
#include <cstdlib>

namespace coiter {

struct MallocDeleter {
  void operator()(void* p) const { std::free(p); }
};

// malloc (or calloc when `zero`) of at least one byte; large arrays are advised to use
// transparent huge pages. Throws std::bad_alloc.
void* allocateResultArray(size_t bytes, bool zero);

}  // namespace coiter
