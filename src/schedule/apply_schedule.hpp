// Applies a schedule's commands, in order, to a concrete statement (taco-core.md §5). Each
// command checks its preconditions and throws ScheduleError naming the command and the
// condition that failed; a schedule that applies never changes what the statement computes.
// Conditions that need iteration lattices (what a loop coiterates, races in the generated
// code) are checked by the lowerer when it meets the tagged loop.
#pragma once
#include "schedule/schedule.hpp"
#include "schedule/scheduled_statement.hpp"
#include "util/target.hpp"

namespace coiter::schedule {

// `target` decides which parallel units the schedule may name (cpu_* or gpu_*).
ScheduledStatement applySchedule(const cin::Stmt& stmt, const Schedule& schedule, Target target = Target::Cpu);

}  // namespace coiter::schedule
