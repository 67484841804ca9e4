// Lowers one ir::Function to LLVM IR: control flow, variables, memory, parallel loops and the
// calling convention; the arithmetic itself is in llvm_scalar_ops, atomic updates in
// llvm_atomic_update. Every IR variable lives in an alloca of its function's entry block
// (SROA/mem2reg turn them into SSA values), so statements translate one by one without any SSA
// bookkeeping here.
//
// A Parallel loop is outlined: its body becomes an internal function
//     void kernel.parallel.i(ptr closure, i64 begin, i64 end, i64 thread)
// that runs the loop over [begin, end), and the kernel calls coiter_rt_parallel_for with it
// (runtime/parallel_runtime.hpp). The closure is a struct on the kernel's stack holding the
// values of the variables the body uses but does not declare (ir::freeVariables); the body
// never assigns them (ir/parallel_rules.hpp), so copies are as good as the variables.
#include "codegen/llvm/llvm_codegen.hpp"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/llvm/llvm_atomic_update.hpp"
#include "codegen/llvm/llvm_scalar_ops.hpp"
#include "codegen/llvm/llvm_vector_width.hpp"
#include "ir/distinct_buffers.hpp"
#include "ir/free_variables.hpp"
#include "ir/parallel_rules.hpp"
#include "runtime/runtime_functions.hpp"

namespace coiter {
namespace {

using ir::DeclareNode;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;
using ir::Type;
using ir::Var;
namespace Intrinsic = llvm::Intrinsic;

// cond ? a : b as a conditional move. The IR's selects are where the lowering chose not to
// branch (merges select each operand's value by whether it is at the coordinate, which is
// as unpredictable as the patterns' interleaving), but x86 without AVX-512 has no
// conditional move between floating-point registers and lowers a select of floats to a
// branch. So floats are selected as integers of their width; the selected bits pass through
// an empty asm statement the optimizer cannot see through, or it would fold the select back
// onto the floats (it is marked as touching no memory, so loads around it still combine).
// Selects are marked unpredictable, or code generation would turn one with
// a loaded operand into a branch around the load.
llvm::Value* unpredictableSelect(llvm::IRBuilder<>& b, llvm::Value* cond, llvm::Value* a, llvm::Value* x) {
  llvm::Value* chosen = b.CreateSelect(cond, a, x);
  if (auto* select = llvm::dyn_cast<llvm::SelectInst>(chosen))  // (unless it folded)
    select->setMetadata(llvm::LLVMContext::MD_unpredictable, llvm::MDBuilder(b.getContext()).createUnpredictable());
  return chosen;
}

llvm::Value* selectWithoutBranch(llvm::IRBuilder<>& b, llvm::Value* cond, llvm::Value* a, llvm::Value* x) {
  llvm::Type* type = a->getType();
  if (!type->isFloatingPointTy()) return unpredictableSelect(b, cond, a, x);
  llvm::Type* bits = b.getIntNTy(type->getPrimitiveSizeInBits());
  llvm::Value* chosen = unpredictableSelect(b, cond, b.CreateBitCast(a, bits), b.CreateBitCast(x, bits));
  auto* opaque =
      llvm::InlineAsm::get(llvm::FunctionType::get(bits, {bits}, false), "", "=r,0", /*hasSideEffects=*/false);
  llvm::CallInst* passed = b.CreateCall(opaque, {chosen});
  // It touches no memory: without saying so, the optimizer must assume the call may write
  // anywhere and reload every array after it (in a merge, the very coordinates just read).
  passed->setDoesNotAccessMemory();
  passed->setDoesNotThrow();
  passed->addFnAttr(llvm::Attribute::WillReturn);
  return b.CreateBitCast(passed, type);
}

class KernelBuilder {
 public:
  KernelBuilder(const ir::Function& f, llvm::Module& module)
      : fn_(f), ctx_(module.getContext()), module_(module), b_(ctx_) {}

  void build(const llvm::TargetMachine& target) {
    targetCpu_ = target.getTargetCPU().str();
    targetFeatures_ = target.getTargetFeatureString().str();
    // (Whole entries: "+avx512fp16" is another feature.)
    maskedShortSegments_ = ("," + targetFeatures_ + ",").find(",+avx512f,") != std::string::npos;
    vectorWidth_ = preferredVectorWidth(fn_.body);
    auto* ptrTy = llvm::PointerType::getUnqual(ctx_);
    auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {ptrTy, ptrTy}, false);
    startFunction(llvm::Function::Create(type, llvm::Function::ExternalLinkage, fn_.name, module_));
    // Pointer slots are not marked noalias: a grown output may alias another parameter.
    pointerSlots_ = fs_.func->getArg(0);
    integerSlots_ = fs_.func->getArg(1);
    pointerSlots_->setName("pointer_slots");
    integerSlots_->setName("integer_slots");
    bufferGroups_ = ir::distinctBufferGroups(fn_);
    for (const ir::Param& p : fn_.params) loadParam(p);
    kernelFunction_ = fs_.func;
    declareOwnedBlocks(fn_.body);
    emit(fn_.body);
    markDistinctBuffers();

    llvm::BasicBlock* last = b_.GetInsertBlock();
    if (!last->getTerminator()) {
      // Only the dead block opened after a trailing Return may be left open.
      if (last == fs_.entry || !llvm::pred_empty(last)) failCodegen(fn_.name + ": body does not end with a Return");
      b_.CreateUnreachable();
    }
  }

 private:
  // What is being generated for one LLVM function: the kernel, or an outlined loop body.
  struct FunctionState {
    llvm::Function* func = nullptr;
    llvm::BasicBlock* entry = nullptr;
    llvm::BasicBlock* oom = nullptr;
    std::unordered_map<const ir::VarNode*, llvm::AllocaInst*> slots;
    std::vector<llvm::BasicBlock*> loopExits;  // innermost last, for Break
    // The outlined body's `thread` argument; null in the kernel, outside any parallel loop.
    llvm::Value* thread = nullptr;
  };

  // Makes `func` the function being generated, with an empty entry block.
  void startFunction(llvm::Function* func) {
    // Without the host CPU on the function, TargetTransformInfo reports a baseline x86-64
    // and the loop vectorizer would pick SSE2 widths.
    func->addFnAttr("target-cpu", targetCpu_);
    func->addFnAttr("target-features", targetFeatures_);
    func->addFnAttr(llvm::Attribute::NoUnwind);
    func->addFnAttr("prefer-vector-width", vectorWidth_);
    fs_ = FunctionState{};
    fs_.func = func;
    fs_.entry = llvm::BasicBlock::Create(ctx_, "entry", func);
    b_.SetInsertPoint(fs_.entry);
  }
  // ---- types ---------------------------------------------------------------------------------
  // The type of one element in memory: bool is a byte (NumPy/C++ layout), complex a pair.
  llvm::Type* memoryType(Type t) {
    if (t.pointer) return llvm::PointerType::getUnqual(ctx_);
    if (t.elem == DType::Bool) return b_.getInt8Ty();
    if (isComplex(t.elem)) return llvm::ArrayType::get(registerType(ctx_, t.elem), 2);
    return registerType(ctx_, t.elem);
  }

  // ---- memory --------------------------------------------------------------------------------
  // Element loads and stores of every buffer are recorded here with the group of buffers
  // that may share its memory (ir/distinct_buffers.hpp), then given one alias scope per
  // group, and declared not to alias the other groups' scopes, once every access is known.
  template <typename Access>
  Access* note(const Var* buffer, Access* access) {
    if (!buffer) return access;
    auto group = bufferGroups_.find(buffer->get());
    if (group != bufferGroups_.end()) bufferAccesses_.emplace_back(access, group->second);
    return access;
  }
  void markDistinctBuffers() {
    if (bufferAccesses_.empty()) return;
    llvm::MDBuilder md(ctx_);
    llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(fn_.name);
    std::unordered_map<const ir::VarNode*, llvm::MDNode*> scopes;
    std::vector<const ir::VarNode*> order;  // first access first: deterministic metadata
    for (const auto& [inst, group] : bufferAccesses_) {
      if (scopes.emplace(group, nullptr).second) {
        scopes[group] = md.createAnonymousAliasScope(domain, group->name);
        order.push_back(group);
      }
    }
    for (const auto& [inst, group] : bufferAccesses_) {
      std::vector<llvm::Metadata*> others;
      for (const ir::VarNode* other : order) {
        if (other != group) others.push_back(scopes[other]);
      }
      inst->setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(ctx_, {scopes[group]}));
      if (!others.empty()) inst->setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(ctx_, others));
    }
  }

  // `buffer`: the buffer whose element is at `address`, if any (its accesses are noted).
  Scalar loadValue(Type t, llvm::Value* address, const Var* buffer = nullptr) {
    auto load = [&](llvm::Type* type, llvm::Value* at) { return note(buffer, b_.CreateLoad(type, at)); };
    if (t.pointer) return {load(memoryType(t), address)};
    if (t.elem == DType::Bool) return {b_.CreateICmpNE(load(b_.getInt8Ty(), address), b_.getInt8(0))};
    if (isComplex(t.elem)) {
      llvm::Type* part = registerType(ctx_, t.elem);
      return {load(part, address), load(part, b_.CreateConstInBoundsGEP1_64(part, address, 1))};
    }
    return {load(registerType(ctx_, t.elem), address)};
  }
  void storeValue(Type t, llvm::Value* address, Scalar v, const Var* buffer = nullptr) {
    if (!t.pointer && t.elem == DType::Bool) {
      note(buffer, b_.CreateStore(b_.CreateZExt(v.re, b_.getInt8Ty()), address));
    } else if (!t.pointer && isComplex(t.elem)) {
      note(buffer, b_.CreateStore(v.re, address));
      llvm::Type* part = registerType(ctx_, t.elem);
      note(buffer, b_.CreateStore(v.im, b_.CreateConstInBoundsGEP1_64(part, address, 1)));
    } else {
      note(buffer, b_.CreateStore(v.re, address));
    }
  }
  llvm::Value* elementAddress(const Var& buffer, const Expr& index) {
    if (!buffer->type.pointer) failCodegen("indexing non-pointer " + buffer->name);
    llvm::Value* base = b_.CreateLoad(memoryType(buffer->type), slotOf(buffer));
    return b_.CreateInBoundsGEP(memoryType(ir::scalar(buffer->type.elem)), base, {toInt64(index)});
  }

  // ---- variables -----------------------------------------------------------------------------
  // A Declare inside a loop body runs once per iteration but names one variable, so the
  // alloca is created on first sight and reused.
  llvm::AllocaInst* declareSlot(const Var& v) {
    auto [it, inserted] = fs_.slots.try_emplace(v.get(), nullptr);
    if (inserted) {
      llvm::IRBuilder<> top(fs_.entry, fs_.entry->begin());
      it->second = top.CreateAlloca(isBoolScalar(v->type) ? b_.getInt1Ty() : memoryType(v->type), nullptr, v->name);
    }
    return it->second;
  }
  llvm::AllocaInst* slotOf(const Var& v) {
    auto it = fs_.slots.find(v.get());
    if (it == fs_.slots.end()) failCodegen("variable " + v->name + " used before its declaration");
    return it->second;
  }
  // A bool variable lives in an i1 slot (only arrays of bools are bytes): as a byte, every
  // loop that updates a flag would test and re-widen it at each iteration.
  static bool isBoolScalar(Type t) { return !t.pointer && t.elem == DType::Bool; }
  Scalar readVar(const Var& v) {
    if (isBoolScalar(v->type)) return {b_.CreateLoad(b_.getInt1Ty(), slotOf(v))};
    return loadValue(v->type, slotOf(v));
  }
  void writeVar(const Var& v, Scalar value) {
    if (isBoolScalar(v->type)) {
      b_.CreateStore(value.re, slotOf(v));
      return;
    }
    storeValue(v->type, slotOf(v), value);
  }

  // ---- parameters and returns ----------------------------------------------------------------
  void loadParam(const ir::Param& p) {
    const Type& t = p.var->type;
    llvm::AllocaInst* slot = declareSlot(p.var);
    if (t.pointer) {
      llvm::Value* from = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), pointerSlots_, p.slot);
      b_.CreateStore(b_.CreateLoad(b_.getPtrTy(), from, p.var->name), slot);
    } else {
      if (!isInteger(t.elem)) failCodegen("parameter " + p.var->name + " must be a pointer or an integer");
      llvm::Value* from = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), integerSlots_, p.slot);
      llvm::Value* wide = b_.CreateLoad(b_.getInt64Ty(), from, p.var->name);
      b_.CreateStore(b_.CreateTrunc(wide, registerType(ctx_, t.elem)), slot);
    }
  }
  void writeBackAndReturn(int32_t status) {
    for (const ir::Param& p : fn_.params) {
      if (!p.writeBack) continue;
      llvm::Value* value = readVar(p.var).re;
      if (p.var->type.pointer) {
        b_.CreateStore(value, b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), pointerSlots_, p.slot));
      } else {
        llvm::Value* wide = b_.CreateIntCast(value, b_.getInt64Ty(), isSignedInteger(p.var->type.elem));
        b_.CreateStore(wide, b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), integerSlots_, p.slot));
      }
    }
    b_.CreateRet(b_.getInt32(status));
  }
  // All allocation failures share one exit; it reads the variables at the time of failure,
  // frees the blocks the kernel allocated and still owns, and writes back the parameters.
  llvm::BasicBlock* outOfMemoryBlock() {
    if (!fs_.oom) {
      llvm::IRBuilderBase::InsertPointGuard keep(b_);
      fs_.oom = llvm::BasicBlock::Create(ctx_, "out_of_memory", fs_.func);
      b_.SetInsertPoint(fs_.oom);
      freeOwnedBlocks();
      writeBackAndReturn(ir::kOutOfMemory);
    }
    return fs_.oom;
  }
  // One cleanup for every early return (out of memory, interrupted, a structure mismatch):
  // the blocks the kernel allocated and still owns.
  void freeOwnedBlocks() {
    if (fs_.func != kernelFunction_) return;  // (outlined loop bodies allocate nothing)
    for (const auto& [buffer, slot] : ownedBlocks_) {
      b_.CreateCall(libc("free", b_.getVoidTy(), {b_.getPtrTy()}), {b_.CreateLoad(b_.getPtrTy(), slot)});
    }
  }
  // For each buffer the kernel allocates, a slot holding its block while the kernel owns it:
  // null before its Allocate and after its Free (a buffer variable may later point elsewhere).
  void declareOwnedBlocks(const Stmt& body) {
    for (const Var& buffer : ir::allocatedBuffers(body)) {
      llvm::IRBuilder<> top(fs_.entry, fs_.entry->begin());
      llvm::AllocaInst* slot = top.CreateAlloca(b_.getPtrTy(), nullptr, "owned." + buffer->name);
      b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slot);
      ownedBlocks_.emplace_back(buffer.get(), slot);
    }
  }
  llvm::AllocaInst* ownedBlock(const ir::VarNode* buffer) {
    for (const auto& [b, slot] : ownedBlocks_) {
      if (b == buffer) return slot;
    }
    return nullptr;
  }
  // Statements after a Return or Break are unreachable but must still have a block to go to.
  void startDeadBlock() { b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "dead", fs_.func)); }

  // ---- expressions ---------------------------------------------------------------------------
  // Pointer-valued expressions are references to pointer variables (and selects of them).
  Scalar emit(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Literal: return literal(ir::as<ir::LiteralNode>(e));
      case ExprKind::VarRef: return readVar(ir::as<ir::VarRefNode>(e).var);
      case ExprKind::Load: {
        auto& n = ir::as<ir::LoadNode>(e);
        return loadValue(n.type, elementAddress(n.buffer, n.index), &n.buffer);
      }
      case ExprKind::Binary: return binary(ir::as<ir::BinaryNode>(e));
      case ExprKind::Unary: return unary(ir::as<ir::UnaryNode>(e));
      case ExprKind::Cast: return castExpr(ir::as<ir::CastNode>(e));
      case ExprKind::Select: {
        auto& n = ir::as<ir::SelectNode>(e);
        llvm::Value* c = condition(n.cond);
        Scalar x = emit(n.a), y = emit(n.b);
        return {selectWithoutBranch(b_, c, x.re, y.re), x.im ? selectWithoutBranch(b_, c, x.im, y.im) : nullptr};
      }
      case ExprKind::ThreadId: return {fs_.thread ? fs_.thread : b_.getInt64(0)};
      case ExprKind::NumThreads: return {b_.CreateCall(runtime(RuntimeFunction::NumThreads, b_.getInt64Ty(), {}))};
      case ExprKind::InterruptRequested: {
        // The runtime's flag itself is the symbol (an absolute address); volatile, so a loop
        // reads it at every check instead of once.
        llvm::Constant* flag =
            module_.getOrInsertGlobal(runtimeFunction(RuntimeFunction::InterruptFlag).name, b_.getInt32Ty());
        llvm::LoadInst* value = b_.CreateLoad(b_.getInt32Ty(), flag, /*isVolatile=*/true);
        return {b_.CreateICmpNE(value, b_.getInt32(0))};
      }
    }
    failCodegen("unknown expression kind");
  }
  // The branch of an If or While. A load on the right of `and`/`or` is reached only when the
  // left does not decide (`p < end && crd[p] == c`: crd[end] may lie past the array), so
  // those operands branch in turn; anything else is one condition.
  void branchOn(const Expr& e, llvm::BasicBlock* whenTrue, llvm::BasicBlock* whenFalse) {
    if (e->kind == ir::ExprKind::Binary) {
      const auto& b = ir::as<ir::BinaryNode>(e);
      if ((b.op == ir::BinaryOp::And || b.op == ir::BinaryOp::Or) && ir::readsMemory(b.b)) {
        llvm::BasicBlock* right = llvm::BasicBlock::Create(ctx_, "cond.rhs", fs_.func);
        if (b.op == ir::BinaryOp::And) {
          branchOn(b.a, right, whenFalse);
        } else {
          branchOn(b.a, whenTrue, right);
        }
        b_.SetInsertPoint(right);
        branchOn(b.b, whenTrue, whenFalse);
        return;
      }
    }
    b_.CreateCondBr(condition(e), whenTrue, whenFalse);
  }
  llvm::Value* condition(const Expr& e) {
    if (e->type != ir::scalar(DType::Bool)) failCodegen("condition of type " + dtypeName(e->type.elem));
    return emit(e).re;
  }
  // Any integer (or bool) expression as an i64, extended per its signedness.
  llvm::Value* toInt64(const Expr& e) {
    DType t = e->type.elem;
    if (e->type.pointer || (!isInteger(t) && t != DType::Bool)) failCodegen("index of type " + dtypeName(t));
    return b_.CreateIntCast(emit(e).re, b_.getInt64Ty(), isSignedInteger(t));
  }
  Scalar emitAs(const Expr& e, Type t, const char* what) {
    if (e->type != t) {
      failCodegen(std::string(what) + " has type " + dtypeName(e->type.elem) + ", expected " + dtypeName(t.elem));
    }
    return emit(e);
  }

  Scalar literal(const ir::LiteralNode& n) {
    DType t = n.type.elem;
    if (n.type.pointer) failCodegen("pointer literal");
    if (t == DType::Bool) return {b_.getInt1(n.intValue != 0)};
    if (isInteger(t)) {
      return {llvm::ConstantInt::get(registerType(ctx_, t), static_cast<uint64_t>(n.intValue), isSignedInteger(t))};
    }
    llvm::Type* part = registerType(ctx_, t);
    if (isComplex(t)) return {llvm::ConstantFP::get(part, n.real), llvm::ConstantFP::get(part, n.imag)};
    return {llvm::ConstantFP::get(part, n.real)};
  }

  Scalar binary(const ir::BinaryNode& n) {
    Scalar x = emit(n.a);
    Scalar y = emit(n.b);
    return emitBinary(b_, n.op, n.a->type.elem, x, y);
  }
  Scalar unary(const ir::UnaryNode& n) {
    if (n.a->type.pointer) failCodegen("unary operator on pointer");
    return emitUnary(b_, n.op, n.a->type.elem, emit(n.a));
  }
  Scalar castExpr(const ir::CastNode& n) {
    if (n.type.pointer || n.a->type.pointer) failCodegen("cast involving a pointer");
    return emitCast(b_, n.a->type.elem, n.type.elem, emit(n.a));
  }

  // v = v + e on a floating-point scalar: a sum whose terms may be added in any order.
  static bool isReduction(const ir::AssignNode& n) {
    if (n.value->kind != ir::ExprKind::Binary || !isFloat(n.var->type.elem)) return false;
    const auto& add = ir::as<ir::BinaryNode>(n.value);
    return add.op == ir::BinaryOp::Add && add.a->kind == ir::ExprKind::VarRef &&
           ir::as<ir::VarRefNode>(add.a).var == n.var;
  }

  // ---- statements ----------------------------------------------------------------------------
  void emit(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Block:
        for (const Stmt& inner : ir::as<ir::BlockNode>(s).stmts) emit(inner);
        return;
      case StmtKind::Declare: {
        auto& n = ir::as<DeclareNode>(s);
        llvm::AllocaInst* slot = declareSlot(n.var);
        // A declaration without an initial value starts at zero (null for pointers), so a
        // pointer parameter written back before assignment is never garbage.
        if (n.init)
          storeValue(n.var->type, slot, emitAs(n.init, n.var->type, n.var->name.c_str()));
        else
          b_.CreateStore(llvm::Constant::getNullValue(memoryType(n.var->type)), slot);
        return;
      }
      case StmtKind::Assign: {
        auto& n = ir::as<ir::AssignNode>(s);
        llvm::IRBuilder<>::FastMathFlagGuard flags(b_);
        if (isReduction(n)) {
          // Reassociated (vectorized into partial sums), but not contracted into fused
          // multiply-adds: a scalar loop's sum is one dependent chain, whose step is an add's
          // latency (2 cycles on Golden Cove, 3 on Zen 4) without contraction but an FMA's (4)
          // with it (docs/compiler.md, "Sums into scalar accumulators").
          // Inside a masked short segment (segmentLoop), the sum is one vector step per eight
          // entries, not a chain: there a contracted multiply-add is one instruction fewer
          // and no longer on a chain.
          llvm::FastMathFlags reassociate;
          reassociate.setAllowReassoc();
          if (contractSums_) reassociate.setAllowContract();
          b_.setFastMathFlags(reassociate);
        }
        writeVar(n.var, emitAs(n.value, n.var->type, n.var->name.c_str()));
        return;
      }
      case StmtKind::Store: {
        auto& n = ir::as<ir::StoreNode>(s);
        Type elem = ir::scalar(n.buffer->type.elem);
        Scalar value = emitAs(n.value, elem, "stored value");
        storeValue(elem, elementAddress(n.buffer, n.index), value, &n.buffer);
        return;
      }
      case StmtKind::For: return forLoop(ir::as<ir::ForNode>(s));
      case StmtKind::While: return whileLoop(ir::as<ir::WhileNode>(s));
      case StmtKind::If: return ifThen(ir::as<ir::IfNode>(s));
      case StmtKind::Break:
        if (fs_.loopExits.empty()) failCodegen("break outside a loop");
        b_.CreateBr(fs_.loopExits.back());
        startDeadBlock();
        return;
      case StmtKind::Comment: return;
      case StmtKind::Allocate: return allocate(ir::as<ir::AllocateNode>(s));
      case StmtKind::Free: {
        auto& n = ir::as<ir::FreeNode>(s);
        b_.CreateCall(libc("free", b_.getVoidTy(), {b_.getPtrTy()}), {readVar(n.buffer).re});
        if (llvm::AllocaInst* owned = ownedBlock(n.buffer.get()))
          b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), owned);
        return;
      }
      case StmtKind::Grow: return grow(ir::as<ir::GrowNode>(s));
      case StmtKind::Call: return runtimeCall(ir::as<ir::CallNode>(s));
      case StmtKind::AtomicUpdate: {
        auto& n = ir::as<ir::AtomicUpdateNode>(s);
        DType elem = n.buffer->type.elem;
        Scalar value = emitAs(n.value, ir::scalar(elem), "atomic update value");
        emitAtomicUpdate(b_, n.op, elem, elementAddress(n.buffer, n.index), value);
        return;
      }
      case StmtKind::Prefetch: {
        auto& n = ir::as<ir::PrefetchNode>(s);
        // llvm.prefetch(address, read, high locality, data cache). A prefetch may point past
        // what the kernel checked (a coordinate ahead, not yet validated): its address is a
        // plain GEP, not an inbounds one, whose out-of-range result would be poison.
        if (!n.buffer->type.pointer) failCodegen("prefetching non-pointer " + n.buffer->name);
        llvm::Value* base = b_.CreateLoad(memoryType(n.buffer->type), slotOf(n.buffer));
        llvm::Value* address = b_.CreateGEP(memoryType(ir::scalar(n.buffer->type.elem)), base, {toInt64(n.index)});
        b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {b_.getPtrTy()},
                           {address, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
        return;
      }
      case StmtKind::Return:
        if (ir::as<ir::ReturnNode>(s).status != ir::kOk) freeOwnedBlocks();
        writeBackAndReturn(ir::as<ir::ReturnNode>(s).status);
        startDeadBlock();
        return;
    }
    failCodegen("unknown statement kind");
  }

  void forLoop(const ir::ForNode& n) {
    DType t = n.var->type.elem;
    if (n.var->type.pointer || !isInteger(t)) failCodegen("loop variable " + n.var->name + " is not an integer");
    llvm::Value* begin = emitAs(n.begin, n.var->type, "loop begin").re;
    llvm::Value* end = emitAs(n.end, n.var->type, "loop end").re;
    // Parallel loops do not nest: inside an outlined body, a parallel loop runs serially.
    bool insideParallelLoop = fs_.thread != nullptr;
    if (n.schedule.kind == ir::LoopKind::Parallel && !insideParallelLoop) return parallelLoop(n, begin, end);
    if (n.schedule.segment && n.schedule.kind == ir::LoopKind::Serial && n.schedule.unroll == 0 &&
        accumulates(n.body) && !prefetches(n.body))
      return segmentLoop(n, begin, end);
    serialLoop(n, begin, end, loopHints(n.schedule));
  }
  // A segment's loop that sums into a scalar accumulator (a CSR row's dot product) runs as the
  // plain vectorized loop when the segment has kVectorSegment entries or more. Shorter
  // segments do not fill that loop's vectors, and their length varies from row to row:
  //   - where the CPU has AVX-512's masked loads and gathers, a short segment runs as masked
  //     vector steps: at most kMaskedStep entries as one step with no loop (maskedStep), 9 to
  //     15 as a masked vector loop (the vectorizer's tail folding) of two steps, whatever the
  //     length, so the branch that ends a scalar loop after 3, 5 or 6 entries is not
  //     mispredicted from row to row. CSR SpMV, one thread, Sapphire Rapids, SciPy's time
  //     over coiter's, scalar -> tail-folded loop for all short segments (python -m
  //     benchmarks.spmv_pairs, two runs each): banded rows of about 8 (200,000) 0.74 -> 1.32;
  //     a 5-point Poisson matrix (rows of 5, which a scalar loop predicts) 0.66-0.68 ->
  //     0.64-0.65. CG on a random SPD matrix of 10,000 rows of 6 to 22: 0.83 -> 1.17-1.20
  //     (python -m benchmarks.cg_solve). That loop -> one step up to 8 entries, with
  //     contracted sums (2026-11-28): Poisson 0.65 -> 0.72-0.76, banded rows of 8 1.31-1.37
  //     -> 1.39-1.44; CG on the Poisson matrix of 10^4 rows 0.77-0.83 -> 0.84-0.92.
  //   - elsewhere it runs as a scalar loop: there the vectorizer's cost model does not gather
  //     for it (AVX2's gathers are slow), and each vectorized segment would pay for loading
  //     its elements into lanes and the horizontal sum at its end.
  static constexpr int64_t kVectorSegment = 16;
  // Segments of rows of one length (equalSegments) shorter than this run as a scalar loop.
  // Banded CSR SpMV, 10,000 rows, one thread, Sapphire Rapids, SciPy's time over coiter's,
  // masked step -> scalar loop: rows of 1 0.32 -> 0.60, 2 0.43 -> 0.69, 3 0.53 -> 0.73, 4
  // 0.66 -> 0.79, 5 0.77 -> 0.74, 6 1.03 -> 0.92, 8 1.10 -> 0.84; 12 to 15 lose as well.
  static constexpr int64_t kScalarEqualSegment = 5;
  void segmentLoop(const ir::ForNode& n, llvm::Value* begin, llvm::Value* end) {
    bool isSigned = isSignedInteger(n.var->type.elem);
    llvm::Value* entries = b_.CreateSub(end, begin);
    llvm::Value* least = llvm::ConstantInt::get(entries->getType(), kVectorSegment);
    // (An empty range's difference wraps for unsigned bounds: the vector loop then runs zero times.)
    llvm::Value* isLong = isSigned ? b_.CreateICmpSGE(entries, least) : b_.CreateICmpUGE(entries, least);
    llvm::BasicBlock* vector = llvm::BasicBlock::Create(ctx_, "segment.long", fs_.func);
    llvm::BasicBlock* scalar = llvm::BasicBlock::Create(ctx_, "segment.short", fs_.func);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx_, "segment.end", fs_.func);
    b_.CreateCondBr(isLong, vector, scalar);
    b_.SetInsertPoint(vector);
    serialLoop(n, begin, end, loopHints(n.schedule));
    b_.CreateBr(join);
    b_.SetInsertPoint(scalar);
    if (!maskedShortSegments_) {
      serialLoop(n, begin, end, loopHints(n.schedule, SegmentLoop::Scalar));
    } else {
      // (A body that is not straight-line, such as one that breaks at a bad coordinate,
      // stays a scalar loop, whose sum must not contract.)
      contractSums_ = masksSteps(n);
      if (contractSums_ && n.schedule.equalSegments) {
        // Rows of one length (guard_coordinates.cpp, rowsByLength): a scalar loop of so few
        // entries predicts its exit and costs less than a masked step.
        llvm::BasicBlock* more = whenFewer(entries, isSigned, kScalarEqualSegment, "segment.few");
        contractSums_ = false;
        serialLoop(n, begin, end, loopHints(n.schedule, SegmentLoop::Scalar));
        contractSums_ = true;
        b_.CreateBr(join);
        b_.SetInsertPoint(more);
      }
      if (contractSums_) {
        llvm::BasicBlock* masked = whenFewer(entries, isSigned, kMaskedStep + 1, "segment.step");
        maskedStep(n, begin, end);
        b_.CreateBr(join);
        b_.SetInsertPoint(masked);
      }
      serialLoop(n, begin, end, loopHints(n.schedule, SegmentLoop::Masked));
      contractSums_ = false;
    }
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }
  // Branches on `entries < bound` (compared as the loop's variable, signed or not): continues
  // in a new block `name` where it holds, and returns the block for where it does not.
  llvm::BasicBlock* whenFewer(llvm::Value* entries, bool isSigned, int64_t bound, const char* name) {
    llvm::Value* limit = llvm::ConstantInt::get(entries->getType(), bound);
    llvm::Value* fewer = isSigned ? b_.CreateICmpSLT(entries, limit) : b_.CreateICmpULT(entries, limit);
    llvm::BasicBlock* taken = llvm::BasicBlock::Create(ctx_, name, fs_.func);
    llvm::BasicBlock* otherwise = llvm::BasicBlock::Create(ctx_, "segment.more", fs_.func);
    b_.CreateCondBr(fewer, taken, otherwise);
    b_.SetInsertPoint(taken);
    return otherwise;
  }
  // A segment of at most kMaskedStep entries as one masked vector step with no loop around
  // it: the body runs for positions begin + t, t = 0 .. kMaskedStep - 1, each under
  // `begin + t < end`. The vectorizer turns that loop of constant trip count into one step
  // whose mask is a compare against the lane numbers, where tail folding's loop builds its
  // mask from the induction variable at every step and branches back. 5-point Poisson
  // SpMV of 10^4 rows, one thread, kernel alone in a C harness: 43 -> 39 us with
  // contraction, 34-36.6 us with this; SciPy's loop 31-32 us.
  static constexpr int64_t kMaskedStep = 8;
  void maskedStep(const ir::ForNode& n, llvm::Value* begin, llvm::Value* end) {
    bool isSigned = isSignedInteger(n.var->type.elem);
    llvm::Type* type = begin->getType();
    llvm::AllocaInst* slot = declareSlot(n.var);
    llvm::BasicBlock* before = b_.GetInsertBlock();
    llvm::BasicBlock* lane = llvm::BasicBlock::Create(ctx_, "step.lane", fs_.func);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "step.body", fs_.func);
    llvm::BasicBlock* latch = llvm::BasicBlock::Create(ctx_, "step.latch", fs_.func);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "step.end", fs_.func);
    b_.CreateBr(lane);
    b_.SetInsertPoint(lane);
    llvm::PHINode* t = b_.CreatePHI(type, 2, "step.t");
    t->addIncoming(llvm::ConstantInt::get(type, 0), before);
    // No wrap: the segment holds more than t entries when the body runs.
    llvm::Value* position = b_.CreateAdd(begin, t, "", !isSigned, isSigned);
    b_.CreateStore(position, slot);
    b_.CreateCondBr(isSigned ? b_.CreateICmpSLT(position, end) : b_.CreateICmpULT(position, end), body, latch);
    b_.SetInsertPoint(body);
    emit(n.body);
    b_.CreateBr(latch);
    b_.SetInsertPoint(latch);
    llvm::Value* next = b_.CreateAdd(t, llvm::ConstantInt::get(type, 1), "", true, true);
    t->addIncoming(next, latch);
    llvm::BranchInst* back =
        b_.CreateCondBr(b_.CreateICmpULT(next, llvm::ConstantInt::get(type, kMaskedStep)), lane, exit);
    back->setMetadata(llvm::LLVMContext::MD_loop, loopHints(n.schedule, SegmentLoop::OneStep));
    b_.SetInsertPoint(exit);
  }
  // Whether segmentLoop runs the short segments of loop `n` as masked steps (maskedStep): on
  // AVX-512, for a straight-line body over 64-bit positions (a step's last lanes lie past the
  // segment's end, where 64 bits cannot wrap).
  bool masksSteps(const ir::ForNode& n) const {
    DType t = n.var->type.elem;
    return maskedShortSegments_ && (t == DType::Int64 || t == DType::UInt64) && straightLine(n.body);
  }
  // Whether `s` is straight-line code (no loops, breaks, calls or allocation), which the
  // vectorizer can run under a mask.
  static bool straightLine(const Stmt& s) {
    return !holds(s, [](const Stmt& t) {
      switch (t->kind) {
        case StmtKind::Block:
        case StmtKind::Declare:
        case StmtKind::Assign:
        case StmtKind::Store:
        case StmtKind::If:
        case StmtKind::Comment: return false;
        default: return true;
      }
    });
  }
  // Whether `s` sums into a floating-point scalar (an Assign that isReduction reassociates).
  static bool accumulates(const Stmt& s) {
    return holds(s,
                 [](const Stmt& t) { return t->kind == StmtKind::Assign && isReduction(ir::as<ir::AssignNode>(t)); });
  }
  // Whether `s` prefetches. Rows that prefetch what they gather (far apart, power-law) keep the
  // one loop: picking a loop by each row's length there cost more (rows of varying length) than
  // the scalar loop saved (power-law 200,000 rows, one thread: 0.80-0.84x SciPy with both
  // loops, 0.83-0.91x with one; thread CPU time, alternating runs on a loaded machine).
  static bool prefetches(const Stmt& s) {
    return holds(s, [](const Stmt& t) { return t->kind == StmtKind::Prefetch; });
  }
  template <typename Test>
  static bool holds(const Stmt& s, const Test& test) {
    if (!s) return false;
    if (test(s)) return true;
    bool found = false;
    ir::forEachChildStmt(s, [&](const Stmt& child) { found = found || holds(child, test); });
    return found;
  }
  void serialLoop(const ir::ForNode& n, llvm::Value* begin, llvm::Value* end, llvm::MDNode* hints) {
    bool isSigned = isSignedInteger(n.var->type.elem);
    llvm::AllocaInst* slot = declareSlot(n.var);
    b_.CreateStore(begin, slot);
    llvm::BasicBlock* cond = llvm::BasicBlock::Create(ctx_, "for.cond", fs_.func);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "for.body", fs_.func);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "for.end", fs_.func);
    b_.CreateBr(cond);
    b_.SetInsertPoint(cond);
    llvm::Value* i = b_.CreateLoad(slot->getAllocatedType(), slot);
    b_.CreateCondBr(isSigned ? b_.CreateICmpSLT(i, end) : b_.CreateICmpULT(i, end), body, exit);
    b_.SetInsertPoint(body);
    fs_.loopExits.push_back(exit);
    emit(n.body);
    fs_.loopExits.pop_back();
    // i < end held on entry to the body, so i + 1 cannot wrap; the flag lets SCEV compute
    // trip counts (and vectorize) for 32-bit loop variables used as indices.
    llvm::Value* current = b_.CreateLoad(slot->getAllocatedType(), slot);
    llvm::Value* one = llvm::ConstantInt::get(current->getType(), 1);
    b_.CreateStore(b_.CreateAdd(current, one, "", /*HasNUW=*/!isSigned, /*HasNSW=*/isSigned), slot);
    llvm::BranchInst* latch = b_.CreateBr(cond);
    if (hints) latch->setMetadata(llvm::LLVMContext::MD_loop, hints);
    b_.SetInsertPoint(exit);
  }
  // How segmentLoop runs a short segment; Default: as the schedule says (any other loop).
  // OneStep: maskedStep's loop of constant trip count.
  enum class SegmentLoop { Default, Scalar, Masked, OneStep };
  // The schedule's hints for the loop optimizers (vectorize, unroll count), as the loop ID
  // that LLVM reads from the latch branch; null when there are none.
  llvm::MDNode* loopHints(const ir::LoopSchedule& schedule, SegmentLoop segment = SegmentLoop::Default) {
    llvm::SmallVector<llvm::Metadata*, 3> hints{nullptr};  // operand 0: the loop ID itself
    auto hint = [&](const char* name, llvm::Constant* value) {
      hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, name), llvm::ConstantAsMetadata::get(value)}));
    };
    if (schedule.kind == ir::LoopKind::Vectorized) hint("llvm.loop.vectorize.enable", b_.getTrue());
    if (segment == SegmentLoop::Scalar) hint("llvm.loop.vectorize.enable", b_.getFalse());
    if (segment == SegmentLoop::Masked) {
      // Tail folding: every step masked, no scalar remainder loop. The cost model still
      // picks the width (from prefer-vector-width) or leaves the loop scalar.
      hint("llvm.loop.vectorize.enable", b_.getTrue());
      hint("llvm.loop.vectorize.predicate.enable", b_.getTrue());
    }
    if (segment == SegmentLoop::OneStep) {
      // Vectorized (the cost model picks the width: eight doubles at a preferred width of
      // 512 bits) and not unrolled first: fully unrolled before the vectorizer runs, the
      // lanes would be eight guarded scalar steps.
      hint("llvm.loop.vectorize.enable", b_.getTrue());
      hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
    }
    if (schedule.unroll > 0 && schedule.kind != ir::LoopKind::Parallel) {
      hint("llvm.loop.unroll.count", b_.getInt32(schedule.unroll));
    } else {
      // No runtime unrolling: the loops whose trip count is known only at run time are
      // mostly over a sparse segment (a row's nonzeros), short and of varying length, where
      // the unrolled body's remainder loop costs a second mispredicted exit per segment
      // (CSR SpMV ran 12 % slower than SciPy's plain loop, and at its speed without).
      // Constant trip counts are still unrolled fully, and the vectorizer still interleaves.
      hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.runtime.disable")}));
    }
    // A segment's loop is not interleaved: interleaving four vectors makes the vector loop
    // start at sixteen entries, so rows of 5 to 15 ran wholly in the scalar remainder (CSR
    // SpMV of a 5-point Poisson matrix, one thread: 0.49x SciPy's speed interleaved, 0.77x
    // not; banded rows of 8: 0.70x against 0.90-0.94x). Long rows lose nothing measurable:
    // their loads, not the additions, bound them.
    if (schedule.segment) hint("llvm.loop.interleave.count", b_.getInt32(1));
    if (hints.size() == 1) return nullptr;
    llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, hints);
    id->replaceOperandWith(0, id);
    return id;
  }

  // ---- parallel loops ------------------------------------------------------------------------
  void parallelLoop(const ir::ForNode& n, llvm::Value* begin, llvm::Value* end) {
    std::vector<Var> captured;
    for (const Var& v : ir::freeVariables(n.body)) {
      if (v != n.var) captured.push_back(v);
    }
    std::vector<llvm::Type*> fields;
    for (const Var& v : captured) fields.push_back(memoryType(v->type));
    llvm::StructType* closureType = llvm::StructType::get(ctx_, fields);
    llvm::AllocaInst* closure;
    {
      llvm::IRBuilder<> top(fs_.entry, fs_.entry->begin());
      closure = top.CreateAlloca(closureType, nullptr, "closure");
    }
    for (size_t k = 0; k < captured.size(); ++k) {
      const Var& v = captured[k];
      storeValue(v->type, b_.CreateStructGEP(closureType, closure, k), readVar(v));
    }
    llvm::Function* body = outlineBody(n, captured, closureType);
    bool isSigned = isSignedInteger(n.var->type.elem);
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::FunctionCallee parallelFor = runtime(RuntimeFunction::ParallelFor, b_.getVoidTy(),
                                               {b_.getPtrTy(), b_.getPtrTy(), i64, i64, i64, b_.getInt32Ty()});
    b_.CreateCall(parallelFor,
                  {body, closure, b_.CreateIntCast(begin, i64, isSigned), b_.CreateIntCast(end, i64, isSigned),
                   b_.getInt64(n.schedule.chunk), b_.getInt32(n.schedule.dynamic ? 1 : 0)});
  }
  // void <kernel>.parallel.<var>(ptr closure, i64 begin, i64 end, i64 thread): the loop of `n`
  // over [begin, end), with the captured variables loaded from the closure.
  llvm::Function* outlineBody(const ir::ForNode& n, const std::vector<Var>& captured, llvm::StructType* closureType) {
    llvm::Type* i64 = b_.getInt64Ty();
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), i64, i64, i64}, false);
    auto* body =
        llvm::Function::Create(type, llvm::Function::InternalLinkage, fn_.name + ".parallel." + n.var->name, module_);
    llvm::IRBuilderBase::InsertPointGuard keepPosition(b_);
    FunctionState kernel = std::move(fs_);
    startFunction(body);
    llvm::Value* closure = body->getArg(0);
    closure->setName("closure");
    for (size_t k = 0; k < captured.size(); ++k) {
      const Var& v = captured[k];
      llvm::Value* field = b_.CreateStructGEP(closureType, closure, k);
      storeValue(v->type, declareSlot(v), loadValue(v->type, field));
    }
    fs_.thread = body->getArg(3);
    fs_.thread->setName("thread");
    body->getArg(1)->setName("begin");
    body->getArg(2)->setName("end");
    llvm::Type* varType = registerType(ctx_, n.var->type.elem);
    serialLoop(n, b_.CreateTrunc(body->getArg(1), varType), b_.CreateTrunc(body->getArg(2), varType),
               loopHints(n.schedule));
    b_.CreateRetVoid();
    fs_ = std::move(kernel);
    return body;
  }

  void whileLoop(const ir::WhileNode& n) {
    llvm::BasicBlock* cond = llvm::BasicBlock::Create(ctx_, "while.cond", fs_.func);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "while.body", fs_.func);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "while.end", fs_.func);
    b_.CreateBr(cond);
    b_.SetInsertPoint(cond);
    branchOn(n.cond, body, exit);
    b_.SetInsertPoint(body);
    fs_.loopExits.push_back(exit);
    emit(n.body);
    fs_.loopExits.pop_back();
    b_.CreateBr(cond);
    b_.SetInsertPoint(exit);
  }
  void ifThen(const ir::IfNode& n) {
    llvm::BasicBlock* then = llvm::BasicBlock::Create(ctx_, "if.then", fs_.func);
    llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "if.end", fs_.func);
    llvm::BasicBlock* otherwise = n.otherwise ? llvm::BasicBlock::Create(ctx_, "if.else", fs_.func) : merge;
    branchOn(n.cond, then, otherwise);
    b_.SetInsertPoint(then);
    emit(n.then);
    b_.CreateBr(merge);
    if (n.otherwise) {
      b_.SetInsertPoint(otherwise);
      emit(n.otherwise);
      b_.CreateBr(merge);
    }
    b_.SetInsertPoint(merge);
  }

  // A call into coiter's runtime; the engine binds the symbol when it loads the kernel.
  void runtimeCall(const ir::CallNode& n) {
    std::vector<llvm::Type*> types;
    std::vector<llvm::Value*> args;
    for (const Expr& a : n.args) {
      llvm::Value* v = emit(a).re;
      types.push_back(v->getType());
      args.push_back(v);
    }
    b_.CreateCall(runtime(n.function, b_.getVoidTy(), types), args);
  }
  llvm::FunctionCallee runtime(RuntimeFunction f, llvm::Type* result, llvm::ArrayRef<llvm::Type*> args) {
    return libc(runtimeFunction(f).name.c_str(), result, args);
  }

  llvm::FunctionCallee libc(const char* name, llvm::Type* result, llvm::ArrayRef<llvm::Type*> args) {
    return module_.getOrInsertFunction(name, llvm::FunctionType::get(result, args, false));
  }
  // count * sizeof(elem) in bytes; an overflowing product becomes SIZE_MAX, which malloc and
  // the runtime reject, so it takes the out-of-memory path instead of under-allocating.
  llvm::Value* byteSize(llvm::Value* count, DType elem) {
    llvm::Value* product = b_.CreateBinaryIntrinsic(Intrinsic::umul_with_overflow, count, b_.getInt64(dtypeSize(elem)));
    return b_.CreateSelect(b_.CreateExtractValue(product, 1), b_.getInt64(UINT64_MAX),
                           b_.CreateExtractValue(product, 0));
  }
  void branchToOutOfMemoryIfNull(llvm::Value* pointer) {
    llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_, "alloc.ok", fs_.func);
    b_.CreateCondBr(b_.CreateIsNull(pointer), outOfMemoryBlock(), ok);
    b_.SetInsertPoint(ok);
  }
  void allocate(const ir::AllocateNode& n) {
    if (!n.buffer->type.pointer) failCodegen("allocating non-pointer " + n.buffer->name);
    // max(count, 1): malloc(0) may return null, which would read as failure. Unsigned, so a
    // negative count becomes huge and fails instead of allocating too little.
    llvm::Value* count = b_.CreateBinaryIntrinsic(Intrinsic::umax, toInt64(n.count), b_.getInt64(1));
    DType elem = n.buffer->type.elem;
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Value* p =
        n.zero ? b_.CreateCall(libc("calloc", b_.getPtrTy(), {i64, i64}), {count, b_.getInt64(dtypeSize(elem))})
               : b_.CreateCall(libc("malloc", b_.getPtrTy(), {i64}), {byteSize(count, elem)});
    branchToOutOfMemoryIfNull(p);
    writeVar(n.buffer, {p});
    if (llvm::AllocaInst* owned = ownedBlock(n.buffer.get())) b_.CreateStore(p, owned);
  }
  void grow(const ir::GrowNode& n) {
    if (!n.buffer->type.pointer) failCodegen("growing non-pointer " + n.buffer->name);
    if (n.capacity->type != ir::scalar(DType::Int64)) failCodegen("capacity " + n.capacity->name + " is not an int64");
    llvm::Value* needed = toInt64(n.needed);
    llvm::Value* capacity = readVar(n.capacity).re;
    llvm::BasicBlock* resize = llvm::BasicBlock::Create(ctx_, "grow", fs_.func);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "grow.end", fs_.func);
    b_.CreateCondBr(b_.CreateICmpSGT(needed, capacity), resize, done);
    b_.SetInsertPoint(resize);
    llvm::Value* doubled = b_.CreateShl(capacity, 1);
    llvm::Value* newCapacity = b_.CreateBinaryIntrinsic(Intrinsic::smax, needed, doubled);
    llvm::Value* bytes = byteSize(newCapacity, n.buffer->type.elem);
    llvm::FunctionCallee growArray =
        runtime(RuntimeFunction::GrowArray, b_.getPtrTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()});
    llvm::Value* p = b_.CreateCall(growArray, {readVar(n.buffer).re, byteSize(capacity, n.buffer->type.elem), bytes});
    // On failure the old buffer is untouched and still in the variable, so the caller
    // receives (and frees) it through the write-back.
    branchToOutOfMemoryIfNull(p);
    writeVar(n.buffer, {p});
    writeVar(n.capacity, {newCapacity});
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  const ir::Function& fn_;
  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  std::string targetCpu_;
  const char* vectorWidth_ = "256";  // the kernel's (llvm_vector_width.hpp)
  std::string targetFeatures_;
  bool contractSums_ = false;         // reductions being emitted may contract (masked short segments)
  bool maskedShortSegments_ = false;  // segmentLoop's short segments: masked vector loops
  llvm::Value* pointerSlots_ = nullptr;
  llvm::Value* integerSlots_ = nullptr;
  FunctionState fs_;
  llvm::Function* kernelFunction_ = nullptr;
  std::vector<std::pair<const ir::VarNode*, llvm::AllocaInst*>> ownedBlocks_;
  std::unordered_map<const ir::VarNode*, const ir::VarNode*> bufferGroups_;  // buffer -> its group
  std::vector<std::pair<llvm::Instruction*, const ir::VarNode*>> bufferAccesses_;
};

}  // namespace

std::unique_ptr<llvm::Module> generateModule(const ir::Function& f, llvm::LLVMContext& context,
                                             const llvm::TargetMachine& target) {
  if (!f.body) failCodegen(f.name + ": no body");
  auto module = std::make_unique<llvm::Module>(f.name, context);
  module->setTargetTriple(target.getTargetTriple().str());
  module->setDataLayout(target.createDataLayout());
  ir::checkParallelRules(f);
  KernelBuilder(f, *module).build(target);
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*module, &out)) failCodegen(f.name + ": invalid LLVM IR: " + out.str());
  return module;
}

}  // namespace coiter
