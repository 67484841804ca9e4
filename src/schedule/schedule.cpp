#include "schedule/schedule.hpp"

#include <cctype>

#include "util/errors.hpp"
#include "util/text.hpp"

namespace coiter::schedule {

namespace {

// Splits `text` at `separator` where it is not nested inside (), [] or {}.
std::vector<std::string> splitTopLevel(const std::string& text, char separator, const std::string& context) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth < 0) throw ScheduleError("schedule: unbalanced '" + std::string(1, c) + "' in " + context);
    }
    if (c == separator && depth == 0) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (depth != 0) throw ScheduleError("schedule: unclosed bracket in " + context);
  parts.push_back(current);
  return parts;
}

Argument parseArgument(const std::string& text, const std::string& command) {
  Argument arg;
  if (text.empty()) throw ScheduleError("schedule: empty argument in " + command);
  if (text.front() == '[') {
    if (text.back() != ']') throw ScheduleError("schedule: malformed list '" + text + "' in " + command);
    arg.isList = true;
    std::string inner = text.substr(1, text.size() - 2);
    if (!inner.empty()) {
      for (const auto& item : splitTopLevel(inner, ',', command)) {
        if (item.empty()) throw ScheduleError("schedule: empty list item in " + command);
        arg.items.push_back(item);
      }
    }
    arg.text = "[";
    for (size_t k = 0; k < arg.items.size(); ++k) arg.text += (k ? "," : "") + arg.items[k];
    arg.text += "]";
    return arg;
  }
  arg.text = text;
  return arg;
}

}  // namespace

std::string Command::toString() const {
  std::string out = name + "(";
  for (size_t k = 0; k < args.size(); ++k) out += (k ? "," : "") + args[k].text;
  return out + ")";
}

std::string Schedule::toString() const {
  std::string out;
  for (size_t k = 0; k < commands.size(); ++k) out += (k ? ";" : "") + commands[k].toString();
  return out;
}

Schedule parseSchedule(const std::string& text) {
  std::string normalized;
  for (char c : text) normalized += c == '\n' ? ';' : c;
  normalized = withoutSpaces(normalized);
  Schedule schedule;
  for (const auto& part : splitTopLevel(normalized, ';', "'" + text + "'")) {
    if (part.empty()) continue;
    size_t open = part.find('(');
    if (open == std::string::npos || part.back() != ')' || open == 0) {
      throw ScheduleError("schedule: expected name(arguments), got '" + part + "'");
    }
    Command command;
    command.name = part.substr(0, open);
    for (char c : command.name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
        throw ScheduleError("schedule: '" + command.name + "' is not a command name");
      }
    }
    std::string inner = part.substr(open + 1, part.size() - open - 2);
    if (!inner.empty()) {
      for (const auto& a : splitTopLevel(inner, ',', command.name))
        command.args.push_back(parseArgument(a, command.name));
    }
    schedule.commands.push_back(std::move(command));
  }
  return schedule;
}

}  // namespace coiter::schedule
