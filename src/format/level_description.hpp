// How an error message names a level ("level 1 (compressed) of a csr tensor"). Validation runs
// at every kernel call on every level of every operand and almost never fails, so the text is
// built only when a message needs it: formatting it eagerly was a fifth of a small kernel
// call's fixed cost.
#pragma once
#include <functional>
#include <string>
#include <utility>

namespace coiter {

class LevelDescription {
 public:
  // A description already at hand (packing names the level it builds).
  LevelDescription(std::string text) : text_(std::move(text)) {}  // NOLINT(google-explicit-constructor)
  // A description built on demand.
  explicit LevelDescription(std::function<std::string()> build) : build_(std::move(build)) {}

  std::string str() const { return build_ ? build_() : text_; }

 private:
  std::string text_;
  std::function<std::string()> build_;
};

inline std::string operator+(const LevelDescription& where, const std::string& rest) { return where.str() + rest; }
inline std::string operator+(const LevelDescription& where, const char* rest) { return where.str() + rest; }

}  // namespace coiter
