// Bindings of the runtime's settings (the thread count of parallel kernels) and counters.
#include <pybind11/pybind11.h>

#include "runtime/parallel_runtime.hpp"
#include "runtime/result_memory.hpp"

namespace py = pybind11;

namespace coiter::bindings {

void bindRuntime(py::module_& m) {
  m.def("set_num_threads", &setNumThreads, py::arg("n"),
        R"(Set the number of threads that parallel kernels use.

The setting applies to the whole process, from the next kernel call on.

Parameters
----------
n : int
    The number of threads, at least 1.

Raises
------
ValueError
    If `n` is less than 1.
TypeError
    If `n` is not an integer.
)");
  m.def("get_num_threads", &getNumThreads,
        R"(Return the number of threads that parallel kernels use.

Initially the number of CPUs this process may run on, or ``OMP_NUM_THREADS`` when that
environment variable is set; `set_num_threads` changes it.

Returns
-------
int
)");
  m.def(
      "result_memory_stats",
      [] {
        py::dict stats;
        stats["fresh_bytes"] = freshResultBytes();
        stats["recycled_bytes"] = recycledResultBytes();
        return stats;
      },
      R"(Counters of the memory kernels' results are assembled in (internal: tests, benchmarks).

``fresh_bytes``: bytes of fresh memory mapped since the process started (each costs page
faults as it is first written); ``recycled_bytes``: bytes of released result memory kept for
reuse now.
)");
}

}  // namespace coiter::bindings
