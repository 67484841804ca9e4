#include "schedule/default_schedule.hpp"

#include <algorithm>

#include "cin/result_pattern.hpp"

namespace coiter::schedule {

namespace {

// The outer loop's race strategy ("no_races", "atomics", "temporary"), or "" when no strategy
// makes it parallel.
std::string outerRaces(const cin::Stmt& stmt, bool gpu) {
  const std::string& var = cin::as<cin::ForallNode>(stmt).var;
  notation::TensorVarPtr result;
  bool indexedByVar = true;
  // An operand whose level for the loop's variable is not unique (COO's rows) may drive the
  // loop over its positions, which meets each coordinate once per entry: the iterations
  // then update the same result entries even when the result is indexed by the variable.
  bool repeats = false;
  // A block number determines a block of rows: a loop over it writes disjoint result
  // entries when the rows index the result (BCSR's block rows).
  std::vector<std::string> blockRows;
  cin::forEachAssignment(stmt, [&](const cin::AssignNode& a) {
    notation::forEachSubexpression(a.rhs, [&](const notation::Expr& e) {
      if (e->kind != notation::ExprKind::Access) return;
      const auto& access = static_cast<const notation::AccessNode&>(*e);
      std::vector<std::string> vars = notation::levelIndices(access);
      const auto& map = access.tensor->format.levelMap();
      for (size_t k = 0; k < vars.size() && !access.levelVars.empty(); ++k) {
        if (vars[k] != var || map[k].kind != LevelCoordinate::Kind::BlockIndex) continue;
        for (size_t m = 0; m < map.size(); ++m) {
          if (map[m].kind == LevelCoordinate::Kind::BlockOffset && map[m].mode == map[k].mode)
            blockRows.push_back(vars[m]);
        }
      }
      for (size_t k = 0; k < vars.size(); ++k) {
        repeats = repeats || (vars[k] == var && !access.tensor->format.levels()[k]->properties().unique);
      }
    });
    if (a.lhs->tensor->temporary) return;
    result = a.lhs->tensor;
    const auto& idx = a.lhs->indices;
    bool blocks = !blockRows.empty() && std::all_of(blockRows.begin(), blockRows.end(), [&](const std::string& v) {
      return std::find(idx.begin(), idx.end(), v) != idx.end();
    });
    indexedByVar = indexedByVar && (blocks || std::find(idx.begin(), idx.end(), var) != idx.end());
  });
  if (!result) return "";
  bool dense = true;
  for (const auto& level : result->format.levels()) dense = dense && level->assembly() == LevelAssembly::Located;
  if (indexedByVar && !repeats) return "no_races";
  if (!dense) return "";
  return result->order() <= 1 && !gpu ? "temporary" : "atomics";
}

// The variables of the foralls nested in one another from the top of `stmt`, through the
// producer of a where (the loop that computes a temporary, as a reduction does).
std::vector<std::string> loopNest(const cin::Stmt& stmt) {
  std::vector<std::string> vars;
  cin::Stmt s = stmt;
  while (s->kind == cin::StmtKind::Forall || s->kind == cin::StmtKind::Where) {
    if (s->kind == cin::StmtKind::Where) {
      s = cin::as<cin::WhereNode>(s).producer;
      continue;
    }
    vars.push_back(cin::as<cin::ForallNode>(s).var);
    s = cin::as<cin::ForallNode>(s).body;
  }
  return vars;
}

}  // namespace

std::string defaultSchedule(const cin::Stmt& stmt) {
  if (stmt->kind != cin::StmtKind::Forall) return "";  // a scalar statement has no loop
  std::string races = outerRaces(stmt, false);
  if (races.empty()) return "";
  return "parallelize(" + cin::as<cin::ForallNode>(stmt).var + ",cpu_thread," + races + ")";
}

namespace {

// The first operand access whose first two levels are the loops `outer` and `inner` and that
// `accepts`, as text; "" when there is none.
template <typename Accepts>
std::string accessOver(const cin::Stmt& stmt, const std::string& outer, const std::string& inner, Accepts accepts) {
  std::string found;
  cin::forEachAssignment(stmt, [&](const cin::AssignNode& a) {
    notation::forEachSubexpression(a.rhs, [&](const notation::Expr& e) {
      if (!found.empty() || e->kind != notation::ExprKind::Access) return;
      const auto& access = static_cast<const notation::AccessNode&>(*e);
      std::vector<std::string> vars = notation::levelIndices(access);
      if (vars.size() >= 2 && vars[0] == outer && vars[1] == inner && accepts(access)) found = notation::toString(e);
    });
  });
  return found;
}

// A CSR-like matrix iterated by rows: its first two levels dense, then compressed.
std::string rowMajorAccess(const cin::Stmt& stmt, const std::string& outer, const std::string& inner) {
  return accessOver(stmt, outer, inner, [](const notation::AccessNode& access) {
    const auto& levels = access.tensor->format.levels();
    return levels[0]->locatesEveryCoordinate() && levels[1]->storesSegments();
  });
}

}  // namespace

std::vector<std::string> defaultGpuSchedules(const cin::Stmt& stmt) {
  if (stmt->kind != cin::StmtKind::Forall) return {};
  std::vector<std::string> vars = loopNest(stmt);
  std::vector<std::string> candidates;
  auto balanced = [&](const std::string& access, int perChunk) {
    std::string f = vars[0] + vars[1] + "_nz", fp = f + "p";
    return "fuse(" + vars[0] + "," + vars[1] + "," + f + ");pos(" + f + "," + fp + "," + access + ");split(" + fp +
           "," + fp + "0," + fp + "1," + std::to_string(perChunk) + ");";
  };
  const std::string chunk = vars.size() >= 2 ? vars[0] + vars[1] + "_nzp0" : "";
  // A result keeping an operand's pattern (cin/result_pattern.hpp; SDDMM, a matrix scaled by
  // a vector) is filled at that operand's positions (CSR, COO, DCSR, ...): its nonzeros are
  // split evenly, 4 per thread, each thread computing its entries whole (SDDMM's sum in a
  // register) and storing them at their own positions, so without races or atomics.
  if (vars.size() >= 2) {
    if (const notation::AccessNode* pattern = cin::resultPatternOperand(stmt)) {
      std::string access =
          accessOver(stmt, vars[0], vars[1], [&](const notation::AccessNode& a) { return &a == pattern; });
      if (!access.empty()) candidates.push_back(balanced(access, 4) + "parallelize(" + chunk + ",gpu_thread,no_races)");
    }
  }
  std::string races = outerRaces(stmt, true);
  if (races.empty()) return candidates;
  std::string outer = "parallelize(" + vars[0] + ",gpu_thread," + races + ")";
  if (vars.size() < 2) return {outer};
  // Measured on an H200 (benchmarks/gpu.py): warps per row lose 10-20x on rows of power-law
  // lengths (one warp serializes a long row), so a CSR-like operand's nonzeros are split
  // evenly instead: 4 per thread (SpMV; 8 was slower on uniform rows), or 32 per warp with its
  // lanes over the remaining dense loop (SpMM; 8 per warp was 1.5x slower at 32 columns);
  // rows that chunks share are added atomically. In SpMM each lane walks the warp's chunk for
  // its own columns (the dense loop between the chunk and its nonzeros), so it sums a row's
  // products in a register and adds once per row, not once per nonzero (with 32 atomics per
  // nonzero, the chunks of one long row contended for its 32 addresses: 0.5x cuSPARSE on
  // power-law rows); where that order is illegal, the lanes add per nonzero.
  std::string access = rowMajorAccess(stmt, vars[0], vars[1]);
  if (!access.empty() && vars.size() == 2) {
    candidates.push_back(balanced(access, 4) + "parallelize(" + chunk + ",gpu_thread,atomics)");
  } else if (!access.empty()) {
    std::string chunks = balanced(access, 32), fp1 = vars[0] + vars[1] + "_nzp1";
    candidates.push_back(chunks + "reorder(" + chunk + "," + vars.back() + "," + fp1 + ");parallelize(" + chunk +
                         ",gpu_warp,ignore_races);parallelize(" + vars.back() + ",gpu_thread,atomics)");
    candidates.push_back(chunks + "parallelize(" + chunk + ",gpu_warp,atomics);parallelize(" + vars.back() +
                         ",gpu_thread,no_races)");
  }
  std::string warp = "parallelize(" + vars[0] + ",gpu_warp," + races + ")";
  candidates.push_back(warp + ";parallelize(" + vars[1] + ",gpu_thread,parallel_reduction)");
  candidates.push_back(warp + ";parallelize(" + vars.back() + ",gpu_thread,no_races)");
  candidates.push_back(outer);
  return candidates;
}

}  // namespace coiter::schedule
