#include "codegen/llvm/llvm_atomic_update.hpp"

#include <llvm/IR/Function.h>

namespace coiter {
namespace {

using llvm::AtomicOrdering;
using llvm::AtomicRMWInst;

// A compare-and-swap loop on the element's bits:
//   old = *address; do { new = op(old, value) } while (!cmpxchg(address, old, new));
void compareAndSwapLoop(llvm::IRBuilder<>& b, ir::BinaryOp op, DType elem, llvm::Value* address, Scalar value) {
  llvm::Type* valueType = value.re->getType();
  llvm::Type* bits = b.getIntNTy(valueType->getPrimitiveSizeInBits());
  llvm::Align align(dtypeSize(elem));
  llvm::LoadInst* initial = b.CreateAlignedLoad(bits, address, align, "atomic.initial");
  initial->setAtomic(AtomicOrdering::Monotonic);
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::Function* function = before->getParent();
  llvm::BasicBlock* retry = llvm::BasicBlock::Create(b.getContext(), "atomic.retry", function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "atomic.done", function);
  b.CreateBr(retry);
  b.SetInsertPoint(retry);
  llvm::PHINode* old = b.CreatePHI(bits, 2, "atomic.old");
  old->addIncoming(initial, before);
  Scalar updated = emitBinary(b, op, elem, {b.CreateBitCast(old, valueType)}, value);
  llvm::Value* exchange = b.CreateAtomicCmpXchg(address, old, b.CreateBitCast(updated.re, bits), align,
                                                AtomicOrdering::Monotonic, AtomicOrdering::Monotonic);
  old->addIncoming(b.CreateExtractValue(exchange, 0), b.GetInsertBlock());
  b.CreateCondBr(b.CreateExtractValue(exchange, 1), done, retry);
  b.SetInsertPoint(done);
}

AtomicRMWInst::BinOp integerMinMax(ir::BinaryOp op, DType elem) {
  bool isSigned = isSignedInteger(elem);
  if (op == ir::BinaryOp::Min) return isSigned ? AtomicRMWInst::Min : AtomicRMWInst::UMin;
  return isSigned ? AtomicRMWInst::Max : AtomicRMWInst::UMax;
}

}  // namespace

void emitAtomicUpdate(llvm::IRBuilder<>& b, ir::BinaryOp op, DType elem, llvm::Value* address, Scalar value) {
  bool floating = isFloat(elem) || isComplex(elem);
  if (op != ir::BinaryOp::Add && op != ir::BinaryOp::Min && op != ir::BinaryOp::Max)
    failCodegen(std::string("atomic ") + ir::binaryOpName(op));
  if (!isInteger(elem) && !floating) failCodegen("atomic update of " + dtypeName(elem));
  llvm::MaybeAlign natural;  // the data layout's alignment of the value's type
  if (op == ir::BinaryOp::Add) {
    AtomicRMWInst::BinOp add = floating ? AtomicRMWInst::FAdd : AtomicRMWInst::Add;
    b.CreateAtomicRMW(add, address, value.re, natural, AtomicOrdering::Monotonic);
    if (value.im) {
      llvm::Value* imag = b.CreateConstInBoundsGEP1_64(value.im->getType(), address, 1);
      b.CreateAtomicRMW(add, imag, value.im, natural, AtomicOrdering::Monotonic);
    }
    return;
  }
  if (isComplex(elem)) failCodegen(std::string("atomic ") + ir::binaryOpName(op) + " of complex");
  if (floating) return compareAndSwapLoop(b, op, elem, address, value);
  b.CreateAtomicRMW(integerMinMax(op, elem), address, value.re, natural, AtomicOrdering::Monotonic);
}

}  // namespace coiter
