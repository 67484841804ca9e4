// The numeric semantics of ir.hpp in LLVM IR. Operations are emitted branch-free (selects,
// not branches) wherever a special case needs handling, so loops containing them still
// vectorize.
#include "codegen/llvm/llvm_scalar_ops.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "util/errors.hpp"

namespace coiter {
namespace {

using ir::BinaryOp;
namespace Intrinsic = llvm::Intrinsic;

class ScalarOps {
 public:
  explicit ScalarOps(llvm::IRBuilder<>& b) : b_(b) {}

  Scalar binary(BinaryOp op, DType t, Scalar x, Scalar y) {
    if (isComplex(t)) return complexBinary(op, x, y);
    if (isFloat(t)) return {floatBinary(op, x.re, y.re)};
    if (t == DType::Bool) return {boolBinary(op, x.re, y.re)};
    return {intBinary(op, isSignedInteger(t), x.re, y.re)};
  }

  Scalar unary(ir::UnaryOp op, DType t, Scalar x) {
    if (op == ir::UnaryOp::Not) {
      if (t != DType::Bool) failCodegen("logical not of " + dtypeName(t));
      return {b_.CreateNot(x.re)};
    }
    if (isComplex(t)) return {b_.CreateFNeg(x.re), b_.CreateFNeg(x.im)};
    if (isFloat(t)) return {b_.CreateFNeg(x.re)};
    if (isInteger(t)) return {b_.CreateNeg(x.re)};  // wraps for unsigned, as NumPy
    failCodegen("negation of " + dtypeName(t));
  }

  Scalar cast(DType from, DType to, Scalar x) {
    if (isComplex(to)) {
      DType part = componentOf(to);
      if (isComplex(from)) {
        DType fromPart = componentOf(from);
        return {convert(x.re, fromPart, part), convert(x.im, fromPart, part)};
      }
      return {convert(x.re, from, part), llvm::ConstantFP::get(registerType(b_.getContext(), part), 0.0)};
    }
    if (isComplex(from)) failCodegen("cast from complex to " + dtypeName(to));
    return {convert(x.re, from, to)};
  }

 private:
  [[noreturn]] void unsupported(BinaryOp op, const char* kind) {
    failCodegen(std::string(ir::binaryOpName(op)) + " is not defined on " + kind + " operands");
  }
  llvm::Value* boolBinary(BinaryOp op, llvm::Value* x, llvm::Value* y) {
    switch (op) {
      // NumPy: bool + bool is or, bool * bool is and; minimum/maximum are and/or too.
      case BinaryOp::Add:
      case BinaryOp::Or:
      case BinaryOp::Max: return b_.CreateOr(x, y);
      case BinaryOp::Mul:
      case BinaryOp::And:
      case BinaryOp::Min: return b_.CreateAnd(x, y);
      default:
        if (ir::isComparison(op)) return intBinary(op, false, x, y);  // false < true
        unsupported(op, "bool");  // NumPy rejects bool subtraction; division yields floats
    }
  }
  llvm::Value* intBinary(BinaryOp op, bool isSigned, llvm::Value* x, llvm::Value* y) {
    switch (op) {
      case BinaryOp::Add: return b_.CreateAdd(x, y);
      case BinaryOp::Sub: return b_.CreateSub(x, y);
      case BinaryOp::Mul: return b_.CreateMul(x, y);
      case BinaryOp::Div:
      case BinaryOp::Rem: return intDivision(op, isSigned, x, y);
      case BinaryOp::Min: return b_.CreateBinaryIntrinsic(isSigned ? Intrinsic::smin : Intrinsic::umin, x, y);
      case BinaryOp::Max: return b_.CreateBinaryIntrinsic(isSigned ? Intrinsic::smax : Intrinsic::umax, x, y);
      case BinaryOp::Eq: return b_.CreateICmpEQ(x, y);
      case BinaryOp::Ne: return b_.CreateICmpNE(x, y);
      case BinaryOp::Lt: return isSigned ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y);
      case BinaryOp::Le: return isSigned ? b_.CreateICmpSLE(x, y) : b_.CreateICmpULE(x, y);
      case BinaryOp::Gt: return isSigned ? b_.CreateICmpSGT(x, y) : b_.CreateICmpUGT(x, y);
      case BinaryOp::Ge: return isSigned ? b_.CreateICmpSGE(x, y) : b_.CreateICmpUGE(x, y);
      case BinaryOp::And: return b_.CreateAnd(x, y);  // bitwise
      case BinaryOp::Or: return b_.CreateOr(x, y);
    }
    unsupported(op, "integer");
  }
  // C leaves x / 0 and INT_MIN / -1 undefined and x86 traps on both, which would kill the
  // host Python process. They are given NumPy's results instead (x / 0 == x % 0 == 0,
  // INT_MIN / -1 == INT_MIN, INT_MIN % -1 == 0) by dividing by 1 in those cases; the
  // selects are branch-free, so loops containing a division still vectorize.
  llvm::Value* intDivision(BinaryOp op, bool isSigned, llvm::Value* x, llvm::Value* y) {
    auto* ty = llvm::cast<llvm::IntegerType>(x->getType());
    llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
    llvm::Value* one = llvm::ConstantInt::get(ty, 1);
    llvm::Value* byZero = b_.CreateICmpEQ(y, zero);
    llvm::Value* replace = byZero;
    if (isSigned) {
      llvm::Value* minValue = llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(ty->getBitWidth()));
      llvm::Value* minusOne = llvm::ConstantInt::getSigned(ty, -1);
      llvm::Value* overflow = b_.CreateAnd(b_.CreateICmpEQ(x, minValue), b_.CreateICmpEQ(y, minusOne));
      replace = b_.CreateOr(byZero, overflow);
    }
    llvm::Value* divisor = b_.CreateSelect(replace, one, y);
    if (op == BinaryOp::Rem) return isSigned ? b_.CreateSRem(x, divisor) : b_.CreateURem(x, divisor);
    llvm::Value* quotient = isSigned ? b_.CreateSDiv(x, divisor) : b_.CreateUDiv(x, divisor);
    return b_.CreateSelect(byZero, zero, quotient);
  }
  llvm::Value* floatBinary(BinaryOp op, llvm::Value* x, llvm::Value* y) {
    switch (op) {
      case BinaryOp::Add: return b_.CreateFAdd(x, y);
      case BinaryOp::Sub: return b_.CreateFSub(x, y);
      case BinaryOp::Mul: return b_.CreateFMul(x, y);
      case BinaryOp::Div: return b_.CreateFDiv(x, y);
      case BinaryOp::Rem: return b_.CreateFRem(x, y);     // C's fmod: truncated, like integers
      case BinaryOp::Min: return b_.CreateMinimum(x, y);  // NaN-propagating, like np.minimum
      case BinaryOp::Max: return b_.CreateMaximum(x, y);
      case BinaryOp::Eq: return b_.CreateFCmpOEQ(x, y);
      case BinaryOp::Ne: return b_.CreateFCmpUNE(x, y);  // NaN != NaN, as in C
      case BinaryOp::Lt: return b_.CreateFCmpOLT(x, y);
      case BinaryOp::Le: return b_.CreateFCmpOLE(x, y);
      case BinaryOp::Gt: return b_.CreateFCmpOGT(x, y);
      case BinaryOp::Ge: return b_.CreateFCmpOGE(x, y);
      case BinaryOp::And:
      case BinaryOp::Or: break;
    }
    unsupported(op, "floating-point");
  }
  Scalar complexBinary(BinaryOp op, Scalar x, Scalar y) {
    switch (op) {
      case BinaryOp::Add: return {b_.CreateFAdd(x.re, y.re), b_.CreateFAdd(x.im, y.im)};
      case BinaryOp::Sub: return {b_.CreateFSub(x.re, y.re), b_.CreateFSub(x.im, y.im)};
      case BinaryOp::Mul:  // the textbook product, as NumPy computes it
        return {b_.CreateFSub(b_.CreateFMul(x.re, y.re), b_.CreateFMul(x.im, y.im)),
                b_.CreateFAdd(b_.CreateFMul(x.re, y.im), b_.CreateFMul(x.im, y.re))};
      case BinaryOp::Div: return complexDivision(x, y);
      case BinaryOp::Eq: return {b_.CreateAnd(b_.CreateFCmpOEQ(x.re, y.re), b_.CreateFCmpOEQ(x.im, y.im))};
      case BinaryOp::Ne: return {b_.CreateOr(b_.CreateFCmpUNE(x.re, y.re), b_.CreateFCmpUNE(x.im, y.im))};
      case BinaryOp::Max:
      case BinaryOp::Min: return complexMinMax(op == BinaryOp::Max, x, y);
      default: unsupported(op, "complex");
    }
  }
  // NumPy's maximum/minimum of complex values (the C printer's helper, as selects): an operand
  // with a NaN part propagates (the first if both have one), else the lexicographic order of
  // (real, imaginary) decides.
  Scalar complexMinMax(bool max, Scalar x, Scalar y) {
    auto hasNan = [&](Scalar v) { return b_.CreateOr(b_.CreateFCmpUNO(v.re, v.re), b_.CreateFCmpUNO(v.im, v.im)); };
    llvm::Value* beyond = max ? b_.CreateFCmpOGT(x.re, y.re) : b_.CreateFCmpOLT(x.re, y.re);
    llvm::Value* tie =
        b_.CreateAnd(b_.CreateFCmpOEQ(x.re, y.re), max ? b_.CreateFCmpOGE(x.im, y.im) : b_.CreateFCmpOLE(x.im, y.im));
    llvm::Value* ordered = b_.CreateOr(beyond, tie);
    llvm::Value* takeX = b_.CreateOr(hasNan(x), b_.CreateAnd(b_.CreateNot(hasNan(y)), ordered));
    return {b_.CreateSelect(takeX, x.re, y.re), b_.CreateSelect(takeX, x.im, y.im)};
  }
  // Smith's algorithm exactly as NumPy implements complex division: it scales by the larger
  // component of the divisor, so |y|^2 never overflows (1e300 / (1e300 + 1e300i) is 0.5 -
  // 0.5i, not 0), and a zero divisor gives NumPy's inf/nan components. Both branches are
  // computed and selected, which keeps loops branch-free for the vectorizer.
  Scalar complexDivision(Scalar x, Scalar y) {
    llvm::Type* ty = x.re->getType();
    llvm::Value* one = llvm::ConstantFP::get(ty, 1.0);
    llvm::Value* zero = llvm::ConstantFP::get(ty, 0.0);
    llvm::Value* absRe = b_.CreateUnaryIntrinsic(Intrinsic::fabs, y.re);
    llvm::Value* absIm = b_.CreateUnaryIntrinsic(Intrinsic::fabs, y.im);
    // |y.re| >= |y.im|: ratio = y.im / y.re.
    llvm::Value* ratioA = b_.CreateFDiv(y.im, y.re);
    llvm::Value* scaleA = b_.CreateFDiv(one, b_.CreateFAdd(y.re, b_.CreateFMul(y.im, ratioA)));
    llvm::Value* reA = b_.CreateFMul(b_.CreateFAdd(x.re, b_.CreateFMul(x.im, ratioA)), scaleA);
    llvm::Value* imA = b_.CreateFMul(b_.CreateFSub(x.im, b_.CreateFMul(x.re, ratioA)), scaleA);
    // |y.re| < |y.im|: ratio = y.re / y.im.
    llvm::Value* ratioB = b_.CreateFDiv(y.re, y.im);
    llvm::Value* scaleB = b_.CreateFDiv(one, b_.CreateFAdd(y.im, b_.CreateFMul(y.re, ratioB)));
    llvm::Value* reB = b_.CreateFMul(b_.CreateFAdd(b_.CreateFMul(x.re, ratioB), x.im), scaleB);
    llvm::Value* imB = b_.CreateFMul(b_.CreateFSub(b_.CreateFMul(x.im, ratioB), x.re), scaleB);
    // y == 0: x.re / 0 and x.im / 0 (inf or nan per component).
    llvm::Value* byZero = b_.CreateAnd(b_.CreateFCmpOEQ(absRe, zero), b_.CreateFCmpOEQ(absIm, zero));
    llvm::Value* reZ = b_.CreateFDiv(x.re, absRe);
    llvm::Value* imZ = b_.CreateFDiv(x.im, absRe);
    // Ordered >=, like C's >= in NumPy's version: a NaN divisor takes the second branch.
    llvm::Value* first = b_.CreateFCmpOGE(absRe, absIm);
    return {b_.CreateSelect(byZero, reZ, b_.CreateSelect(first, reA, reB)),
            b_.CreateSelect(byZero, imZ, b_.CreateSelect(first, imA, imB))};
  }

  // C conversions between bool, integer and floating-point types.
  llvm::Value* convert(llvm::Value* x, DType from, DType to) {
    if (from == to) return x;
    llvm::Type* ty = registerType(b_.getContext(), to);
    if (to == DType::Bool) {
      // NaN converts to true, as in C.
      if (isFloat(from)) return b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
      return b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
    }
    bool fromSigned = isSignedInteger(from);  // bool converts as unsigned 0/1
    if (isFloat(to)) {
      if (isFloat(from)) return b_.CreateFPCast(x, ty);
      return fromSigned ? b_.CreateSIToFP(x, ty) : b_.CreateUIToFP(x, ty);
    }
    if (isFloat(from)) return isSignedInteger(to) ? b_.CreateFPToSI(x, ty) : b_.CreateFPToUI(x, ty);
    return b_.CreateIntCast(x, ty, fromSigned);
  }

  llvm::IRBuilder<>& b_;
};

}  // namespace

[[noreturn]] void failCodegen(const std::string& message) { throw CompileError("LLVM codegen: " + message); }

bool isSignedInteger(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}

DType componentOf(DType complex) { return complex == DType::Complex64 ? DType::Float32 : DType::Float64; }

llvm::Type* registerType(llvm::LLVMContext& context, DType t) {
  switch (t) {
    case DType::Bool: return llvm::Type::getInt1Ty(context);
    case DType::Int8:
    case DType::UInt8: return llvm::Type::getInt8Ty(context);
    case DType::Int16:
    case DType::UInt16: return llvm::Type::getInt16Ty(context);
    case DType::Int32:
    case DType::UInt32: return llvm::Type::getInt32Ty(context);
    case DType::Int64:
    case DType::UInt64: return llvm::Type::getInt64Ty(context);
    case DType::Float32: return llvm::Type::getFloatTy(context);
    case DType::Float64: return llvm::Type::getDoubleTy(context);
    case DType::Complex64:
    case DType::Complex128: return registerType(context, componentOf(t));
  }
  failCodegen("unknown dtype");
}

Scalar emitBinary(llvm::IRBuilder<>& b, BinaryOp op, DType operands, Scalar x, Scalar y) {
  return ScalarOps(b).binary(op, operands, x, y);
}

Scalar emitUnary(llvm::IRBuilder<>& b, ir::UnaryOp op, DType operand, Scalar x) {
  return ScalarOps(b).unary(op, operand, x);
}

Scalar emitCast(llvm::IRBuilder<>& b, DType from, DType to, Scalar x) { return ScalarOps(b).cast(from, to, x); }

}  // namespace coiter
