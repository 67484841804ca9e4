// The scheduling language (docs/reference.md, "Schedules"; Kjolstad's thesis, ch. 6) as data: a list of commands with
// textual arguments, in the order they are applied. Its canonical text,
//     split(i,i0,i1,32);parallelize(i0,cpu_thread,no_races)
// is what Python's ct.Schedule produces, what the signature cache keys on, and what
// `parseSchedule` reads back. Applying a schedule is apply_schedule.hpp's job.
#pragma once
#include <string>
#include <vector>

namespace coiter::schedule {

// One argument: a word (an index variable, a number, a name, an expression as text) or a
// bracketed list of words.
struct Argument {
  std::string text;                // the word; for lists, the canonical "[a,b]"
  std::vector<std::string> items;  // lists only
  bool isList = false;
};

struct Command {
  std::string name;
  std::vector<Argument> args;
  std::string toString() const;  // canonical: no spaces, lists in brackets
};

struct Schedule {
  std::vector<Command> commands;
  bool empty() const { return commands.empty(); }
  std::string toString() const;  // commands joined by ';'
};

// Reads the text form: commands separated by ';' (or newlines), arguments by ',', lists in
// brackets; whitespace is insignificant. Throws ScheduleError on malformed text.
Schedule parseSchedule(const std::string& text);

}  // namespace coiter::schedule
