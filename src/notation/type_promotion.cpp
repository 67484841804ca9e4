#include "notation/type_promotion.hpp"

#include "memory/dtype.hpp"

namespace coiter::notation {

namespace {

enum Kind { kBool = 0, kInt = 1, kFloat = 2, kComplex = 3 };

Kind kindOf(DType t) {
  if (t == DType::Bool) return kBool;
  if (isInteger(t)) return kInt;
  if (isFloat(t)) return kFloat;
  return kComplex;
}

bool isUnsigned(DType t) { return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64; }

int bits(DType t) { return static_cast<int>(dtypeSize(t)) * 8; }

DType signedOfBits(int b) {
  switch (b) {
    case 8: return DType::Int8;
    case 16: return DType::Int16;
    case 32: return DType::Int32;
    default: return DType::Int64;
  }
}

DType realPart(DType t) {
  if (t == DType::Complex64) return DType::Float32;
  if (t == DType::Complex128) return DType::Float64;
  return t;
}

DType complexOf(DType real) { return real == DType::Float32 ? DType::Complex64 : DType::Complex128; }

DType promoteIntegers(DType a, DType b) {
  if (isUnsigned(a) == isUnsigned(b)) return bits(a) >= bits(b) ? a : b;
  DType s = isUnsigned(a) ? b : a;
  DType u = isUnsigned(a) ? a : b;
  if (bits(s) > bits(u)) return s;
  if (bits(u) < 64) return signedOfBits(2 * bits(u));
  return DType::Float64;  // uint64 with any signed integer
}

// The float type that holds every value of an integer type as NumPy sees it.
DType floatFor(DType integer) { return bits(integer) <= 16 ? DType::Float32 : DType::Float64; }

}  // namespace

DType promoteTypes(DType a, DType b) {
  if (a == b) return a;
  Kind ka = kindOf(a), kb = kindOf(b);
  if (ka == kBool) return b;
  if (kb == kBool) return a;
  if (ka == kComplex || kb == kComplex) return complexOf(promoteTypes(realPart(a), realPart(b)));
  if (ka == kInt && kb == kInt) return promoteIntegers(a, b);
  if (ka == kFloat && kb == kFloat) return bits(a) >= bits(b) ? a : b;
  DType f = ka == kFloat ? a : b;
  DType i = ka == kFloat ? b : a;
  return promoteTypes(f, floatFor(i));
}

DType promoteOperands(DType a, bool aWeak, DType b, bool bWeak) {
  if (aWeak == bWeak) return promoteTypes(a, b);
  DType array = aWeak ? b : a;
  DType scalar = aWeak ? a : b;
  Kind ks = kindOf(scalar), ka = kindOf(array);
  if (ks <= ka) return array;
  if (ks == kComplex && ka == kFloat) return complexOf(array);
  return scalar;  // the scalar's default type: int64, float64 or complex128
}

DType trueDivisionType(DType t) {
  Kind k = kindOf(t);
  return (k == kBool || k == kInt) ? DType::Float64 : t;
}

}  // namespace coiter::notation
