#include "memory/dtype.hpp"

namespace coiter {

size_t dtypeSize(DType t) {
  return dispatchDType(t, [](auto* p) { return sizeof(*p); });
}

namespace {
struct NamedDType {
  const char* name;
  DType type;
};
constexpr NamedDType kNames[] = {{"bool", DType::Bool},
                                 {"int8", DType::Int8},
                                 {"int16", DType::Int16},
                                 {"int32", DType::Int32},
                                 {"int64", DType::Int64},
                                 {"uint8", DType::UInt8},
                                 {"uint16", DType::UInt16},
                                 {"uint32", DType::UInt32},
                                 {"uint64", DType::UInt64},
                                 {"float32", DType::Float32},
                                 {"float64", DType::Float64},
                                 {"complex64", DType::Complex64},
                                 {"complex128", DType::Complex128}};
}  // namespace

std::string dtypeName(DType t) {
  for (const auto& n : kNames)
    if (n.type == t) return n.name;
  return "unknown";
}

DType dtypeFromName(const std::string& name) {
  for (const auto& n : kNames)
    if (name == n.name) return n.type;
  throw DTypeError("unsupported dtype '" + name +
                   "': coiter supports bool, int8..int64, uint8..uint64, float32, float64, "
                   "complex64 and complex128");
}

bool isIndexDType(DType t) { return t == DType::Int32 || t == DType::Int64; }
bool isInteger(DType t) {
  switch (t) {
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return true;
    default: return false;
  }
}
bool isFloat(DType t) { return t == DType::Float32 || t == DType::Float64; }
bool isComplex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }

}  // namespace coiter
