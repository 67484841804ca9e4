#include "bindings/dense_arrays.hpp"

#include <limits>
#include <mutex>
#include <vector>

#include "util/errors.hpp"

namespace coiter::bindings {

std::shared_ptr<TensorStorage> wrapDense(const py::array& a, const std::optional<Format>& format) {
  int order = static_cast<int>(a.ndim());
  if (!(a.flags() & py::array::c_style) || !isNative(a)) throw SignatureError("the array needs converting");
  DType type;
  try {
    type = dtypeOf(a);
  } catch (const DTypeError& e) {
    throw SignatureError(e.what());
  }
  static std::vector<Format> denseFormats;  // the dense format of each order, made once
  static std::mutex denseFormatsMutex;
  Format dense;
  if (!format) {
    std::lock_guard<std::mutex> lock(denseFormatsMutex);
    while (static_cast<int>(denseFormats.size()) <= order) {
      denseFormats.push_back(Format::named("dense", static_cast<int>(denseFormats.size())));
    }
    dense = denseFormats[order];
  }
  std::vector<int64_t> shape(order);
  std::vector<LevelStorage> levels(order);
  int64_t size = 1;
  bool wide = false;
  for (int k = 0; k < order; ++k) {
    shape[k] = a.shape(k);
    size *= shape[k];
    levels[k].scalars["size"] = shape[k];
    wide = wide || shape[k] > std::numeric_limits<int32_t>::max();
  }
  auto storage =
      std::make_shared<TensorStorage>(format ? *format : dense, shape, type, wide ? DType::Int64 : DType::Int32,
                                      std::move(levels), borrowData(a, size));
  storage->validate();
  return storage;
}

}  // namespace coiter::bindings
