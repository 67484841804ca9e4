#include "schedule/apply_schedule.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "util/errors.hpp"
#include "util/text.hpp"

namespace coiter::schedule {

using namespace cin;
namespace nt = coiter::notation;

namespace {

// TACO spells units, race strategies and kinds in CamelCase (CPUThread, NoRaces, MaxExact,
// Insert); coiter in snake_case. Either is accepted.
std::string snakeCase(const std::string& word) {
  std::string out;
  for (size_t k = 0; k < word.size(); ++k) {
    char c = word[k];
    bool upper = std::isupper(static_cast<unsigned char>(c));
    bool wordStart = upper && k > 0 && k + 1 < word.size() && std::islower(static_cast<unsigned char>(word[k + 1]));
    if (wordStart && out.back() != '_') out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Every forall variable of s, outermost first.
void loopsOf(const Stmt& s, std::vector<std::string>& out) {
  switch (s->kind) {
    case StmtKind::Assign: return;
    case StmtKind::Forall: out.push_back(as<ForallNode>(s).var); return loopsOf(as<ForallNode>(s).body, out);
    case StmtKind::Where: loopsOf(as<WhereNode>(s).consumer, out); return loopsOf(as<WhereNode>(s).producer, out);
    case StmtKind::Sequence: loopsOf(as<SequenceNode>(s).define, out); return loopsOf(as<SequenceNode>(s).mutate, out);
  }
}

// Rebuilds s with `fn` applied to the (first) maximal chain of directly nested foralls for
// which `matches` holds; `done` reports whether one was found. While `fn` runs, `around` holds
// the loops that enclose the chain, outermost first.
Stmt rewriteChain(const Stmt& s, const std::function<bool(const ForallChain&)>& matches,
                  const std::function<Stmt(const ForallChain&)>& fn, bool& done, std::vector<std::string>& around) {
  if (done) return s;
  switch (s->kind) {
    case StmtKind::Assign: return s;
    case StmtKind::Where: {
      const auto& w = as<WhereNode>(s);
      Stmt c = rewriteChain(w.consumer, matches, fn, done, around);
      Stmt p = rewriteChain(w.producer, matches, fn, done, around);
      return where(c, p);
    }
    case StmtKind::Sequence: {
      const auto& q = as<SequenceNode>(s);
      Stmt d = rewriteChain(q.define, matches, fn, done, around);
      Stmt m = rewriteChain(q.mutate, matches, fn, done, around);
      return sequence(d, m);
    }
    case StmtKind::Forall: break;
  }
  ForallChain chain = forallChain(s);
  if (matches(chain)) {
    done = true;
    return fn(chain);
  }
  around.insert(around.end(), chain.vars.begin(), chain.vars.end());
  Stmt body = rewriteChain(chain.body, matches, fn, done, around);
  around.resize(around.size() - chain.vars.size());
  return nestForalls(chain.vars, body);
}

Stmt rewriteChain(const Stmt& s, const std::function<bool(const ForallChain&)>& matches,
                  const std::function<Stmt(const ForallChain&)>& fn, bool& done) {
  std::vector<std::string> around;
  return rewriteChain(s, matches, fn, done, around);
}

class Scheduler {
 public:
  Scheduler(const Stmt& stmt, Target target) {
    out_.stmt = stmt;
    out_.target = target;
  }

  ScheduledStatement run(const Schedule& schedule) {
    for (const auto& c : schedule.commands) {
      command_ = c.toString();
      if (c.name == "reorder")
        reorder(c);
      else if (c.name == "split" || c.name == "divide")
        split(c);
      else if (c.name == "bound")
        bound(c);
      else if (c.name == "precompute")
        precompute(c);
      else if (c.name == "parallelize")
        parallelize(c);
      else if (c.name == "unroll")
        unroll(c);
      else if (c.name == "assemble")
        assemble(c);
      else if (c.name == "fuse")
        fuse(c);
      else if (c.name == "pos")
        pos(c);
      else
        fail(
            "unknown command (expected reorder, split, divide, pos, fuse, precompute, bound, unroll, "
            "parallelize or assemble)");
    }
    std::vector<std::string> loops;
    loopsOf(out_.stmt, loops);
    for (const auto& [var, tags] : out_.tags) {
      if (!contains(loops, var)) {
        throw ScheduleError("schedule: '" + var + "' was tagged (" + tags.toString() +
                            ") but is no longer a loop of the statement (it was split, bounded or precomputed "
                            "afterwards); tag the loops that replaced it");
      }
    }
    return out_;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw ScheduleError(command_ + ": " + why); }

  void arity(const Command& c, size_t low, size_t high) const {
    if (c.args.size() < low || c.args.size() > high) {
      fail("expected " + (low == high ? std::to_string(low) : std::to_string(low) + " to " + std::to_string(high)) +
           " arguments, got " + std::to_string(c.args.size()));
    }
  }

  const std::string& word(const Command& c, size_t k) const {
    if (c.args[k].isList) fail("argument " + std::to_string(k + 1) + " must be a single name, not a list");
    return c.args[k].text;
  }

  int64_t positive(const Command& c, size_t k) const {
    const std::string& text = word(c, k);
    bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                               [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
    if (!digits || text.size() > 15 || std::stoll(text) <= 0) fail("'" + text + "' is not a positive integer");
    return std::stoll(text);
  }

  std::vector<std::string> loops() const {
    std::vector<std::string> out;
    loopsOf(out_.stmt, out);
    return out;
  }

  // Every index variable in use: loops and the accesses' indices.
  std::set<std::string> knownVariables() const {
    std::set<std::string> out;
    for (const auto& v : loops()) out.insert(v);
    forEachAssignment(out_.stmt, [&](const AssignNode& a) {
      for (const auto& v : a.lhs->indices) out.insert(v);
      for (const auto& v : nt::indexVariables(a.rhs)) out.insert(v);
    });
    for (const auto& r : out_.relations) {
      for (const auto& v : {r.parent, r.outer, r.inner, r.bounded}) {
        if (!v.empty()) out.insert(v);
      }
    }
    return out;
  }

  void requireLoop(const std::string& var) const {
    if (contains(loops(), var)) return;
    if (knownVariables().count(var)) {
      fail("'" + var + "' is not a loop of the statement (it was split, bounded or precomputed away)");
    }
    std::string names;
    for (const auto& v : loops()) names += (names.empty() ? "" : ", ") + v;
    fail("unknown index variable '" + var + "' (the loops are " + names + ")");
  }

  void requireFresh(const std::string& var) const {
    if (var.empty() || !(std::isalpha(static_cast<unsigned char>(var[0])) || var[0] == '_')) {
      fail("'" + var + "' is not a valid index variable name");
    }
    if (knownVariables().count(var)) fail("'" + var + "' is already an index variable of the statement");
  }

  // Replaces the forall of `var` by the foralls `replacement` (outermost first).
  void replaceLoop(const std::string& var, const std::vector<std::string>& replacement) {
    bool done = false;
    out_.stmt = rewriteChain(
        out_.stmt, [&](const ForallChain& c) { return contains(c.vars, var); },
        [&](const ForallChain& c) {
          std::vector<std::string> vars;
          for (const auto& v : c.vars) {
            if (v == var)
              vars.insert(vars.end(), replacement.begin(), replacement.end());
            else
              vars.push_back(v);
          }
          return nestForalls(vars, c.body);
        },
        done);
  }

  void reorder(const Command& c) {
    if (c.args.size() < 2) fail("name at least two loops");
    std::vector<std::string> order;
    for (size_t k = 0; k < c.args.size(); ++k) {
      requireLoop(word(c, k));
      if (contains(order, word(c, k))) fail("'" + word(c, k) + "' is named twice");
      order.push_back(word(c, k));
    }
    bool done = false;
    out_.stmt = rewriteChain(
        out_.stmt,
        [&](const ForallChain& chain) {
          return std::all_of(order.begin(), order.end(), [&](const std::string& v) { return contains(chain.vars, v); });
        },
        [&](const ForallChain& chain) {
          std::vector<std::string> vars = chain.vars;
          size_t next = 0;
          for (auto& v : vars) {
            if (contains(order, v)) v = order[next++];
          }
          return nestForalls(vars, chain.body);
        },
        done);
    if (!done) {
      // Moving a loop out of a where would need its consumer to distribute over the
      // producer's reduction (Kjolstad's thesis, ch. 6): coiter does not rewrite wheres yet.
      fail(
          "the loops are not directly nested (a where statement separates them, e.g. the temporary of a "
          "reduction); only directly nested loops can be reordered");
    }
    // (A split's inner loop may move outside its outer loop: a strided walk, whose conditions
    // the legality check decides. A divide's may not: its blocks are sized in the outer loop.)
    for (const auto& r : out_.relations) {
      if (r.kind != RelationKind::Divide) continue;
      // (Either loop may have been bounded since: the bound is the same loop.)
      auto all = loops();
      auto find = [&](const std::string& var) {
        return std::find_if(all.begin(), all.end(), [&](const std::string& l) { return out_.loopOf(l) == var; });
      };
      auto outer = find(r.outer), inner = find(r.inner);
      if (outer != all.end() && inner != all.end() && inner < outer) {
        fail("'" + *inner + "' iterates inside one block of '" + *outer + "' (" + r.toString() +
             "), so it cannot move outside it");
      }
    }
  }

  void split(const Command& c) {
    arity(c, 4, 4);
    const std::string &parent = word(c, 0), &outer = word(c, 1), &inner = word(c, 2);
    requireLoop(parent);
    requireFresh(outer);
    requireFresh(inner);
    if (outer == inner) fail("the two new variables must differ");
    IndexRelation r;
    r.kind = c.name == "split" ? RelationKind::Split : RelationKind::Divide;
    r.parent = parent;
    r.outer = outer;
    r.inner = inner;
    r.size = positive(c, 3);
    replaceLoop(parent, {outer, inner});
    out_.relations.push_back(r);
  }

  void bound(const Command& c) {
    arity(c, 4, 4);
    const std::string &parent = word(c, 0), &bounded = word(c, 1);
    std::string kind = snakeCase(word(c, 3));
    requireLoop(parent);
    requireFresh(bounded);
    if (kind != "max_exact" && kind != "max_constraint") {
      fail("unknown bound kind '" + kind + "' (expected max_exact or max_constraint)");
    }
    IndexRelation r;
    r.kind = RelationKind::Bound;
    r.parent = parent;
    r.bounded = bounded;
    r.size = positive(c, 2);
    r.exact = kind == "max_exact";
    replaceLoop(parent, {bounded});
    out_.relations.push_back(r);
  }

  bool hasFixedSize(const std::string& var) const {
    const IndexRelation* r = out_.relationOf(var);
    if (r && r->kind == RelationKind::Precompute) return hasFixedSize(r->parent);
    return r && ((r->kind == RelationKind::Split && r->inner == var) || r->kind == RelationKind::Bound);
  }

  // Whether one of `vars` (original index variables) is iterated by `loop`, itself or through
  // the relations that derive it (a split's loops iterate i, a fused loop i and j).
  bool iterates(const std::string& loop, const std::vector<std::string>& vars) const {
    auto bound = out_.boundVariables(loop);
    return std::any_of(bound.begin(), bound.end(), [&](const std::string& v) { return contains(vars, v); });
  }

  void fuse(const Command& c) {
    arity(c, 3, 3);
    const std::string &outer = word(c, 0), &inner = word(c, 1), &fused = word(c, 2);
    requireLoop(outer);
    requireLoop(inner);
    requireFresh(fused);
    bool done = false;
    out_.stmt = rewriteChain(
        out_.stmt,
        [&](const ForallChain& chain) {
          auto at = std::find(chain.vars.begin(), chain.vars.end(), outer);
          return at != chain.vars.end() && at + 1 != chain.vars.end() && *(at + 1) == inner;
        },
        [&](const ForallChain& chain) {
          std::vector<std::string> vars;
          for (const auto& v : chain.vars) {
            if (v == outer)
              vars.push_back(fused);
            else if (v != inner)
              vars.push_back(v);
          }
          return nestForalls(vars, chain.body);
        },
        done);
    if (!done) fail("loop '" + inner + "' is not directly inside loop '" + outer + "'");
    IndexRelation r;
    r.kind = RelationKind::Fuse;
    r.parent = outer;
    r.second = inner;
    r.bounded = fused;
    out_.relations.push_back(r);
  }

  void pos(const Command& c) {
    arity(c, 3, 3);
    const std::string &var = word(c, 0), &positions = word(c, 1);
    std::string access = withoutSpaces(word(c, 2));
    requireLoop(var);
    requireFresh(positions);
    // The access must be read by the statement, with its level(s) indexed by the loop.
    std::vector<std::string> levels;
    bool found = false;
    forEachAssignment(out_.stmt, [&](const AssignNode& a) {
      nt::forEachSubexpression(a.rhs, [&](const nt::Expr& e) {
        if (found || e->kind != nt::ExprKind::Access || withoutSpaces(nt::toString(e)) != access) return;
        found = true;
        levels = nt::levelIndices(static_cast<const nt::AccessNode&>(*e));
      });
    });
    if (!found) fail("'" + access + "' is not an operand access of the statement");
    std::vector<std::string> bound = out_.boundVariables(var);
    auto first = std::search(levels.begin(), levels.end(), bound.begin(), bound.end());
    if (first == levels.end()) {
      fail("the levels of " + access + " are not indexed by " +
           (bound.size() == 1 ? "'" + bound[0] + "'" : "the fused variables, in storage order"));
    }
    IndexRelation r;
    r.kind = RelationKind::Pos;
    r.parent = var;
    r.bounded = positions;
    r.access = access;
    replaceLoop(var, {positions});
    out_.relations.push_back(r);
  }

  void parallelize(const Command& c) {
    arity(c, 3, 4);
    const std::string& var = word(c, 0);
    std::string unit = snakeCase(word(c, 1)), races = snakeCase(word(c, 2));
    requireLoop(var);
    LoopTags& tags = out_.tags[var];
    bool gpu = unit == "gpu_block" || unit == "gpu_warp" || unit == "gpu_thread";
    if (gpu && out_.target != Target::Cuda) fail("unit '" + unit + "' runs on a GPU; it needs target='cuda'");
    if (!gpu && out_.target == Target::Cuda && (unit == "cpu_thread" || unit == "cpu_vector")) {
      fail("unit '" + unit + "' runs on the CPU; with target='cuda' use gpu_block, gpu_warp or gpu_thread");
    }
    if (unit == "cpu_thread") {
      tags.unit = ParallelUnit::CpuThread;
    } else if (unit == "cpu_vector") {
      // A vectorizer handles a runtime trip count with a remainder loop: any loop that
      // lowers to one for loop may be vectorized (legality.hpp checks that it does).
      tags.unit = ParallelUnit::CpuVector;
    } else if (gpu) {
      tags.unit = unit == "gpu_block"  ? ParallelUnit::GpuBlock
                  : unit == "gpu_warp" ? ParallelUnit::GpuWarp
                                       : ParallelUnit::GpuThread;
    } else {
      fail("unknown unit '" + unit + "' (expected cpu_thread, cpu_vector, gpu_block, gpu_warp or gpu_thread)");
    }
    static const std::vector<std::pair<std::string, RaceStrategy>> strategies = {
        {"no_races", RaceStrategy::NoRaces},
        {"ignore_races", RaceStrategy::IgnoreRaces},
        {"atomics", RaceStrategy::Atomics},
        {"temporary", RaceStrategy::Temporary},
        {"parallel_reduction", RaceStrategy::ParallelReduction}};
    auto it = std::find_if(strategies.begin(), strategies.end(), [&](const auto& s) { return s.first == races; });
    if (it == strategies.end()) {
      fail("unknown race strategy '" + races +
           "' (expected no_races, ignore_races, atomics, temporary or "
           "parallel_reduction)");
    }
    tags.races = it->second;
    if (c.args.size() == 4) {
      // Optional chunking: "static", "dynamic", or "dynamic:16" / "static:64".
      std::string how = word(c, 3);
      size_t colon = how.find(':');
      std::string kind = how.substr(0, colon);
      if (kind != "static" && kind != "dynamic")
        fail("unknown chunking '" + how + "' (expected static or dynamic[:size])");
      tags.dynamic = kind == "dynamic";
      if (colon != std::string::npos) {
        std::string size = how.substr(colon + 1);
        bool digits =
            !size.empty() && size.size() < 12 &&
            std::all_of(size.begin(), size.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
        if (!digits || std::stoll(size) <= 0) fail("chunk size '" + size + "' is not a positive integer");
        tags.chunk = std::stoll(size);
      }
    }
  }

  void unroll(const Command& c) {
    arity(c, 2, 2);
    const std::string& var = word(c, 0);
    requireLoop(var);
    int64_t factor = positive(c, 1);
    if (!hasFixedSize(var))
      fail("loop '" + var + "' has no fixed size; split it (or bound it) and unroll the inner loop");
    if (factor > 1024) fail("unroll factor " + std::to_string(factor) + " is too large (at most 1024)");
    out_.tags[var].unroll = static_cast<int>(factor);
  }

  void assemble(const Command& c) {
    arity(c, 2, 2);
    const std::string& tensor = word(c, 0);
    std::string how = snakeCase(word(c, 1));
    if (how != "append" && how != "insert" && how != "two_pass")
      fail("unknown strategy '" + how + "' (expected append, insert or two_pass)");
    bool found = false;
    forEachAssignment(out_.stmt, [&](const AssignNode& a) {
      found = found || (!a.lhs->tensor->temporary && a.lhs->tensor->name == tensor);
    });
    if (!found) fail("'" + tensor + "' is not the result of the statement");
    out_.assembly[tensor] = how;
  }

  // --- precompute ------------------------------------------------------------------------

  // The path from e down to the subexpression printed as `text`: the nodes passed through.
  static bool findPath(const nt::Expr& e, const std::string& text, std::vector<nt::Expr>& path) {
    path.push_back(e);
    if (withoutSpaces(nt::toString(e)) == text) return true;
    if (e->kind == nt::ExprKind::Negate) {
      if (findPath(static_cast<const nt::NegateNode&>(*e).a, text, path)) return true;
    } else if (e->kind == nt::ExprKind::Binary) {
      const auto& b = static_cast<const nt::BinaryNode&>(*e);
      if (findPath(b.a, text, path) || findPath(b.b, text, path)) return true;
    }
    path.pop_back();
    return false;
  }

  static nt::Expr replaceAlong(const std::vector<nt::Expr>& path, size_t k, const nt::Expr& by) {
    if (k + 1 == path.size()) return by;
    const nt::Expr& e = path[k];
    const nt::Expr& next = path[k + 1];
    if (e->kind == nt::ExprKind::Negate) return nt::negate(replaceAlong(path, k + 1, by));
    const auto& b = static_cast<const nt::BinaryNode&>(*e);
    if (b.a == next) return nt::binary(*b.op, replaceAlong(path, k + 1, by), b.b);
    return nt::binary(*b.op, b.a, replaceAlong(path, k + 1, by));
  }

  static nt::Expr renameIndices(const nt::Expr& e, const std::map<std::string, std::string>& names) {
    switch (e->kind) {
      case nt::ExprKind::Access: {
        const auto& a = static_cast<const nt::AccessNode&>(*e);
        std::vector<std::string> indices;
        for (const auto& v : a.indices) indices.push_back(names.count(v) ? names.at(v) : v);
        auto renamed = nt::access(a.tensor, indices);
        if (a.levelVars.empty()) return renamed;
        std::vector<std::string> levelVars;
        for (const auto& v : a.levelVars) levelVars.push_back(names.count(v) ? names.at(v) : v);
        return nt::accessWithLevels(*renamed, levelVars);
      }
      case nt::ExprKind::Negate: return nt::negate(renameIndices(static_cast<const nt::NegateNode&>(*e).a, names));
      case nt::ExprKind::Binary: {
        const auto& b = static_cast<const nt::BinaryNode&>(*e);
        return nt::binary(*b.op, renameIndices(b.a, names), renameIndices(b.b, names));
      }
      default: return e;
    }
  }

  // Whether summing (with `reduction`) over a loop can move from around the whole
  // right-hand side to around `path.back()` alone: every operator on the way must
  // distribute over the reduction.
  static bool distributes(const std::vector<nt::Expr>& path, const nt::Operator* reduction) {
    for (size_t k = 0; k + 1 < path.size(); ++k) {
      const nt::Expr& e = path[k];
      if (reduction != &nt::addOp()) return false;  // only sums distribute through operators here
      if (e->kind == nt::ExprKind::Negate) continue;
      const auto& b = static_cast<const nt::BinaryNode&>(*e);
      if (b.op == &nt::mulOp()) continue;
      if (b.op == &nt::divOp() && b.a == path[k + 1]) continue;
      return false;
    }
    return true;
  }

  void precompute(const Command& c) {
    arity(c, 3, 4);
    std::string text = withoutSpaces(word(c, 0));
    auto listOf = [&](size_t k) {
      return c.args[k].isList ? c.args[k].items : std::vector<std::string>{c.args[k].text};
    };
    std::vector<std::string> ivars = listOf(1), wsvars = listOf(2);
    if (ivars.size() != wsvars.size()) fail("the loop and workspace variable lists differ in length");
    std::string format = workspaceFormat(c.args.size() == 4 ? word(c, 3) : "dense");
    if (ivars.size() > 1 && format != "d") fail("a hashed or compressed workspace is over one index variable");
    if (format != "d" && out_.isDerived(ivars.front())) {
      fail("a workspace over a derived loop ('" + ivars.front() +
           "') is a dense array of its block; hashed and "
           "compressed workspaces are over an index variable of the statement");
    }
    std::set<std::string> used;
    for (size_t k = 0; k < wsvars.size(); ++k) {
      if (wsvars[k] != ivars[k]) requireFresh(wsvars[k]);
      if (!used.insert(wsvars[k]).second) fail("workspace variable '" + wsvars[k] + "' is named twice");
    }
    bool done = false;
    std::vector<std::string> around;
    out_.stmt = rewriteChain(
        out_.stmt,
        [&](const ForallChain& chain) {
          if (chain.body->kind != StmtKind::Assign) return false;
          std::vector<nt::Expr> path;
          return findPath(as<AssignNode>(chain.body).rhs, text, path);
        },
        [&](const ForallChain& chain) { return precomputeIn(chain, around, text, ivars, wsvars, format); }, done,
        around);
    if (!done) {
      std::string candidates;
      forEachAssignment(out_.stmt, [&](const AssignNode& a) {
        nt::forEachSubexpression(a.rhs, [&](const nt::Expr& e) {
          if (e->kind == nt::ExprKind::Binary || e->kind == nt::ExprKind::Access) {
            candidates += (candidates.empty() ? "" : ", ") + nt::toString(e);
          }
        });
      });
      fail("the expression is not a subexpression of an assignment directly inside loops (candidates: " + candidates +
           ")");
    }
  }

  // The level format of a workspace: dense (the default), hashed or compressed.
  std::string workspaceFormat(const std::string& name) {
    if (name == "dense" || name == "d") return "d";
    if (name == "hashed" || name == "h") return "h";
    if (name == "compressed" || name == "sparse" || name == "s") return "s";
    fail("unknown workspace format '" + name + "' (expected dense, hashed or compressed)");
  }

  // `around`: the loops that enclose the chain.
  Stmt precomputeIn(const ForallChain& chain, const std::vector<std::string>& around, const std::string& text,
                    const std::vector<std::string>& ivars, const std::vector<std::string>& wsvars,
                    const std::string& format) {
    const auto& a = as<AssignNode>(chain.body);
    std::vector<nt::Expr> path;
    findPath(a.rhs, text, path);
    nt::Expr e = path.back();
    for (const auto& v : ivars) {
      if (!contains(chain.vars, v)) fail("'" + v + "' is not a loop around " + nt::toString(e));
    }
    std::vector<std::string> eVars = nt::indexVariables(e);
    for (const auto& v : ivars) {
      if (!iterates(v, eVars)) fail("the expression does not use '" + v + "' (nor a variable it is derived from)");
    }
    auto workspace = nt::makeTensorVar(
        "ws" + std::to_string(workspaces_++),
        ivars.empty() ? Format({}, {}) : Format::parse(format == "d" ? std::string(ivars.size(), 'd') : format),
        e->type, DType::Int64, true);
    auto wConsumer = nt::access(workspace, ivars);
    nt::Expr consumerRhs = replaceAlong(path, 0, wConsumer);
    // (Workspace variables may be derived loops: the consumer then iterates what they bind.)
    std::vector<std::string> consumerVars = a.lhs->indices;
    for (const auto& v : nt::indexVariables(consumerRhs)) {
      for (const auto& b : out_.boundVariables(v)) consumerVars.push_back(b);
    }
    std::vector<std::string> outer, producerLoops;
    for (const auto& v : chain.vars) {
      if (contains(ivars, v))
        producerLoops.push_back(v);
      else if (iterates(v, eVars) && !iterates(v, consumerVars))
        producerLoops.push_back(v);
      else
        outer.push_back(v);
    }
    std::vector<std::string> reduced;  // loops that move from the consumer into the producer
    for (const auto& v : producerLoops) {
      if (!contains(ivars, v)) reduced.push_back(v);
    }
    if (!reduced.empty()) {
      if (!a.accumulate) fail("the statement does not reduce over " + reduced.front());
      if (!distributes(path, a.accumulate)) {
        fail("an operator around " + nt::toString(e) + " does not distribute over the reduction " + a.accumulate->name +
             " (the workspace would change the result)");
      }
    }
    std::map<std::string, std::string> rename;
    for (size_t k = 0; k < ivars.size(); ++k) {
      rename[ivars[k]] = wsvars[k];
      // A derived loop renamed for the producer iterates as the consumer's does: the
      // accesses name the original variables it binds, so only the loop is renamed.
      if (wsvars[k] != ivars[k] && out_.isDerived(ivars[k])) {
        IndexRelation r;
        r.kind = RelationKind::Precompute;
        r.parent = ivars[k];
        r.bounded = wsvars[k];
        out_.relations.push_back(r);
      }
    }
    std::vector<std::string> producerNames;
    for (const auto& v : producerLoops) producerNames.push_back(rename.count(v) ? rename.at(v) : v);
    auto wProducer = nt::access(workspace, wsvars);
    Stmt producer = nestForalls(producerNames,
                                assign(wProducer, renameIndices(e, rename), reduced.empty() ? nullptr : a.accumulate));
    // The consumer writes each result entry once when no reduction loop is left around it
    // (in the chain, or enclosing it: an earlier precompute may have left one outside).
    auto inResult = [&](const std::string& v) { return iterates(v, a.lhs->indices); };
    bool once = !reduced.empty() && std::all_of(outer.begin(), outer.end(), inResult) &&
                std::all_of(around.begin(), around.end(), inResult) &&
                std::all_of(ivars.begin(), ivars.end(), inResult);
    // The consumer's loops nest as they did in the statement (a result is appended in order).
    std::vector<std::string> consumerLoops;
    for (const auto& v : chain.vars) {
      if (contains(ivars, v)) consumerLoops.push_back(v);
    }
    Stmt consumer = nestForalls(consumerLoops, assign(a.lhs, consumerRhs, once ? nullptr : a.accumulate));
    return nestForalls(outer, where(consumer, producer));
  }

  ScheduledStatement out_;
  std::string command_;
  int workspaces_ = 0;
};

}  // namespace

ScheduledStatement applySchedule(const Stmt& stmt, const Schedule& schedule, Target target) {
  return Scheduler(stmt, target).run(schedule);
}

}  // namespace coiter::schedule
