#include "schedule/default_schedule.hpp"

#include <algorithm>

namespace coiter::schedule {

std::string defaultSchedule(const cin::Stmt& stmt) {
  if (stmt->kind != cin::StmtKind::Forall) return "";  // a scalar statement has no loop
  const std::string& var = cin::as<cin::ForallNode>(stmt).var;
  notation::TensorVarPtr result;
  bool indexedByVar = true;
  cin::forEachAssignment(stmt, [&](const cin::AssignNode& a) {
    if (a.lhs->tensor->temporary) return;
    result = a.lhs->tensor;
    const auto& idx = a.lhs->indices;
    indexedByVar = indexedByVar && std::find(idx.begin(), idx.end(), var) != idx.end();
  });
  if (!result) return "";
  bool dense = true;
  for (const auto& level : result->format.levels()) dense = dense && level->kind() == LevelKind::Dense;
  std::string races = "no_races";
  if (!indexedByVar) {
    if (!dense) return "";
    races = result->order() <= 1 ? "temporary" : "atomics";
  }
  return "parallelize(" + var + ",cpu_thread," + races + ")";
}

}  // namespace coiter::schedule
