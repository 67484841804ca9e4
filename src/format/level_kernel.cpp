// The defaults of LevelType's kernel capabilities (a level that offers none of them), and the
// pieces level types share.
#include "format/level_kernel.hpp"

#include "format/level_type.hpp"
#include "util/errors.hpp"

namespace coiter {

using namespace ir;

namespace {

Var lookup(const std::map<std::string, Var>& vars, const std::string& name) {
  auto it = vars.find(name);
  return it == vars.end() ? nullptr : it->second;
}

}  // namespace

Var LevelKernelVars::array(const std::string& name) const { return lookup(arrays, name); }
Var LevelKernelVars::capacity(const std::string& name) const { return lookup(capacities, name); }
Var LevelKernelVars::scalar(const std::string& name) const { return lookup(scalars, name); }
Var LevelKernelVars::scratchArray(const std::string& name) const { return lookup(scratch, name); }

Buffer& AssembledLevel::array(const std::string& name) const {
  auto it = arrays.find(name);
  if (it == arrays.end()) throw CoiterError("assembly: the kernel returned no '" + name + "' array");
  return *it->second;
}

Expr locateInExtent(const LevelKernelVars& vars, const Expr& parent, const Expr& coord, LevelCode& code) {
  Var p = makeVar(code.freshName(code.name), ir::scalar(DType::Int64));
  code.out.push_back(declare(p, binary(BinaryOp::Add, binary(BinaryOp::Mul, parent, vars.extent), coord)));
  return ir::ref(p);
}

PositionRange positionsOfParent(const LevelParent& parent) {
  if (parent.top) return {intLit(0), intLit(1), true};
  if (parent.runEnd) return {parent.position, parent.runEnd, false};
  return {parent.position, binary(BinaryOp::Add, parent.position, intLit(1)), true};
}

Stmt appendCoordinateToCrd(const LevelKernelVars& vars, const Expr& position, const Expr& coord, bool roomReserved,
                           DType indexType) {
  Var crd = vars.array("crd");
  Stmt room = roomReserved ? nullptr : grow(crd, vars.capacity("crd"), binary(BinaryOp::Add, position, intLit(1)));
  return block({room, store(crd, position, cast(ir::scalar(indexType), coord))});
}

Stmt reserveCrd(const LevelKernelVars& vars, const Expr& entries) {
  return grow(vars.array("crd"), vars.capacity("crd"), entries);
}

std::optional<PositionRange> LevelType::positionRange(const LevelKernelVars&, const LevelParent&) const {
  return std::nullopt;
}

Expr LevelType::locate(const LevelKernelVars&, const Expr&, const Expr&, LevelCode&) const { return nullptr; }

Stmt LevelType::appendCoordinate(const LevelKernelVars&, const Expr&, const Expr&, bool, DType) const {
  throw CompileError("lowering: a " + name() + " level is not appended to");
}

Stmt LevelType::reserveAppends(const LevelKernelVars&, const Expr&) const {
  throw CompileError("lowering: a " + name() + " level is not appended to");
}

Stmt LevelType::endSegment(const LevelKernelVars&, const Expr&, const Expr&, DType) const {
  throw CompileError("lowering: a " + name() + " level has no segments to end");
}

Stmt LevelType::countIntoSegment(const LevelKernelVars&, const Expr&, const Expr&, DType) const {
  throw CompileError("lowering: a " + name() + " level has no segments to count");
}

Stmt LevelType::openSegments(const LevelKernelVars&, const Expr&, const Expr&, LevelCode&) const {
  throw CompileError("lowering: a " + name() + " level has no segments to open");
}

int64_t LevelType::finishAssembly(const AssembledLevel&, LevelStorage&) const {
  throw CompileError("a " + name() + " level cannot be computed by a kernel");
}

std::map<std::string, int64_t> LevelType::insertScalars(int64_t) const {
  throw CompileError("a " + name() + " level is not inserted into");
}

std::map<std::string, int64_t> LevelType::largerInsertScalars(const std::map<std::string, int64_t>&) const {
  throw CompileError("a " + name() + " level is not inserted into");
}

int64_t LevelType::insertArrayStart(const std::string&) const { return 0; }

int64_t LevelType::fullestSegment(const LevelStorage&, int64_t) const {
  throw CompileError("a " + name() + " level is not inserted into");
}

Stmt LevelType::startInserts(const LevelKernelVars&, const Expr&) const { return nullptr; }

Expr LevelType::insert(const LevelKernelVars&, const Expr&, const Expr&, LevelCode&) const {
  throw CompileError("lowering: a " + name() + " level is not inserted into");
}

Expr LevelType::insertsFull(const LevelKernelVars&) const { return nullptr; }

}  // namespace coiter
