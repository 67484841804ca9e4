// Element types of value and index buffers, with a dispatcher that calls a generic
// lambda with a typed null pointer so typed loops are written once for all dtypes.
#pragma once
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/errors.hpp"

namespace coiter {

enum class DType {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float32,
  Float64,
  Complex64,
  Complex128
};

size_t dtypeSize(DType t);
std::string dtypeName(DType t);                // NumPy's name: "float64", "int32", ...
DType dtypeFromName(const std::string& name);  // throws DTypeError for unsupported names
bool isIndexDType(DType t);                    // int32 or int64
bool isInteger(DType t);                       // signed/unsigned integer types (not bool)
bool isFloat(DType t);
bool isComplex(DType t);

// Calls f(static_cast<T*>(nullptr)) with T the C++ type of t.
template <typename F>
decltype(auto) dispatchDType(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(static_cast<bool*>(nullptr));
    case DType::Int8: return f(static_cast<int8_t*>(nullptr));
    case DType::Int16: return f(static_cast<int16_t*>(nullptr));
    case DType::Int32: return f(static_cast<int32_t*>(nullptr));
    case DType::Int64: return f(static_cast<int64_t*>(nullptr));
    case DType::UInt8: return f(static_cast<uint8_t*>(nullptr));
    case DType::UInt16: return f(static_cast<uint16_t*>(nullptr));
    case DType::UInt32: return f(static_cast<uint32_t*>(nullptr));
    case DType::UInt64: return f(static_cast<uint64_t*>(nullptr));
    case DType::Float32: return f(static_cast<float*>(nullptr));
    case DType::Float64: return f(static_cast<double*>(nullptr));
    case DType::Complex64: return f(static_cast<std::complex<float>*>(nullptr));
    case DType::Complex128: return f(static_cast<std::complex<double>*>(nullptr));
  }
  throw DTypeError("unknown dtype");
}

// NumPy's addition for sum-of-duplicates: bool addition is logical or.
template <typename T>
inline T addValues(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else
    return static_cast<T>(a + b);
}

}  // namespace coiter
