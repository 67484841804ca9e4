#include "jit/signature.hpp"

#include <cstdio>
#include <map>

namespace coiter {

using namespace notation;

namespace {

// Renames tensors T0, T1, ... and index variables i0, i1, ... in order of appearance.
struct Renamer {
  std::map<const TensorVar*, TensorVarPtr> tensors;
  std::map<std::string, std::string> vars;
  bool keepIndexNames = false;
  std::string description;  // formats and types of the renamed tensors, in order

  TensorVarPtr tensor(const TensorVarPtr& t) {
    auto it = tensors.find(t.get());
    if (it != tensors.end()) return it->second;
    std::string name = "T" + std::to_string(tensors.size());
    auto renamed = makeTensorVar(name, t->format, t->dtype, t->indexType, t->temporary);
    tensors[t.get()] = renamed;
    description += " " + name + ":" + t->format.repr() + ":" + dtypeName(t->dtype) + ":" + dtypeName(t->indexType);
    return renamed;
  }
  std::string var(const std::string& v) {
    if (keepIndexNames) return v;
    auto it = vars.find(v);
    if (it != vars.end()) return it->second;
    std::string name = "i" + std::to_string(vars.size());
    vars[v] = name;
    return name;
  }
  std::shared_ptr<const AccessNode> access(const AccessNode& a) {
    TensorVarPtr t = tensor(a.tensor);
    std::vector<std::string> indices;
    for (const auto& v : a.indices) indices.push_back(var(v));
    return notation::access(t, indices);
  }
  Expr expr(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Access: return access(static_cast<const AccessNode&>(*e));
      case ExprKind::Literal: return e;
      case ExprKind::Negate: return negate(expr(static_cast<const NegateNode&>(*e).a));
      case ExprKind::Binary: {
        const auto& b = static_cast<const BinaryNode&>(*e);
        Expr x = expr(b.a);
        Expr y = expr(b.b);
        return binary(*b.op, x, y);
      }
      case ExprKind::Reduce: {
        const auto& r = static_cast<const ReduceNode&>(*e);
        std::string v = var(r.var);
        return reduce(*r.op, v, expr(r.body));
      }
    }
    return e;
  }
};

}  // namespace

std::string hashHex(const void* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t k = 0; k < size; ++k) {
    h ^= bytes[k];
    h *= 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

Signature signatureOf(const Assignment& a, const std::string& options, bool keepIndexNames) {
  Renamer r;
  r.keepIndexNames = keepIndexNames;
  auto lhs = r.access(*a.lhs);
  Expr rhs = r.expr(a.rhs);
  // Literal types matter (a weak int literal and a strong one print alike).
  std::string canonical = toString(Assignment{lhs, rhs, a.accumulate}) + " |" + r.description + " | rhs type " +
                          dtypeName(a.rhs->type) + " | " + options;
  return Signature{canonical, hashHex(canonical.data(), canonical.size())};
}

}  // namespace coiter
