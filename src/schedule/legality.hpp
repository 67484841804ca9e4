// Whether a scheduled statement can be lowered, decided before lowering (docs/schedules.md,
// "Legality"). Applying a command checks what the command alone decides (its arguments, that
// its loops exist and nest as it needs); this checks every precondition that depends on the
// statement the commands made together: its final loop order, what each loop iterates, where
// its temporaries live, and the formats of its operands and result (Kjolstad's thesis, ch. 6). It walks
// the loops as lowering will, tracking which levels of every operand have positions and which
// index variables are bound; a derived loop's provenance (the original variables it iterates,
// the block it is restricted to) comes from the statement's relations (ScheduledStatement's
// rootOf and boundVariables, TACO's provenance graph). Lowering then only meets statements it
// can lower, and an autoscheduler can ask whether a schedule is legal without compiling it.
#pragma once
#include <string>

#include "schedule/scheduled_statement.hpp"

namespace coiter::schedule {

// The reason `s` cannot be lowered, naming the command whose precondition fails (or the loop
// order, for what no single command decides), or "" when it can. `s` is the statement as
// lowering receives it: the commands applied, automatic workspaces and scalar accumulators
// inserted. `assemble`: the kernel assembles its sparse result (false: it fills a given
// structure, whose loops over the result's entries run serially). `resultKeepsPattern`: a
// result that keeps an operand's pattern (cin/result_pattern.hpp) is taken to be lowered so,
// not appended (false: as lowering must when it finds otherwise).
std::string legalityProblem(const ScheduledStatement& s, bool assemble = true, bool resultKeepsPattern = true);

}  // namespace coiter::schedule
