// Applies a schedule's commands, in order, to a concrete statement (Kjolstad's thesis, ch. 6). Each
// command checks its preconditions and throws ScheduleError naming the command and the
// condition that failed; a schedule that applies never changes what the statement computes.
// Conditions that depend on the statement the commands make together (what a loop iterates
// in the final loop order, races, where temporaries live) are checked before lowering, on the
// whole scheduled statement (legality.hpp).
#pragma once
#include "schedule/schedule.hpp"
#include "schedule/scheduled_statement.hpp"
#include "util/target.hpp"

namespace coiter::schedule {

// `target` decides which parallel units the schedule may name (cpu_* or gpu_*).
ScheduledStatement applySchedule(const cin::Stmt& stmt, const Schedule& schedule, Target target = Target::Cpu);

}  // namespace coiter::schedule
