// Small text helpers shared by the schedule parser and the passes that match its text.
#pragma once
#include <cctype>
#include <string>

namespace coiter {

// `s` with all whitespace removed: schedules and accesses are compared in this form.
inline std::string withoutSpaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

}  // namespace coiter
