#include "schedule/default_schedule.hpp"

#include <algorithm>

namespace coiter::schedule {

std::string defaultSchedule(const cin::Stmt& stmt) {
  if (stmt->kind != cin::StmtKind::Forall) return "";  // a scalar statement has no loop
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
          if (map[m].kind == LevelCoordinate::Kind::BlockOffset && map[m].mode == map[k].mode) blockRows.push_back(vars[m]);
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
  for (const auto& level : result->format.levels()) dense = dense && level->kind() == LevelKind::Dense;
  std::string races = "no_races";
  if (!indexedByVar || repeats) {
    if (!dense) return "";
    races = result->order() <= 1 ? "temporary" : "atomics";
  }
  return "parallelize(" + var + ",cpu_thread," + races + ")";
}

}  // namespace coiter::schedule
