#include "format/level_type.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/errors.hpp"

namespace coiter {

bool LevelProperties::operator==(const LevelProperties& o) const {
  return full == o.full && ordered == o.ordered && unique == o.unique && branchless == o.branchless &&
         compact == o.compact;
}

std::shared_ptr<const LevelType> LevelType::configure(const LevelOptions& options) const {
  auto configurable = configurableProperties();
  auto allowed = [&](const char* prop, int value) {
    if (value < 0) return false;
    if (std::find(configurable.begin(), configurable.end(), prop) == configurable.end())
      throw FormatError("the " + name() + " level's '" + prop + "' property cannot be configured");
    return true;
  };
  std::shared_ptr<LevelType> copy = clone();
  if (allowed("ordered", options.ordered)) copy->props_.ordered = options.ordered != 0;
  if (allowed("unique", options.unique)) copy->props_.unique = options.unique != 0;
  if (allowed("full", options.full)) copy->props_.full = options.full != 0;
  if (allowed("compact", options.compact)) copy->props_.compact = options.compact != 0;
  if (options.buckets != 0) {
    if (kind() != LevelKind::Hashed) throw FormatError("only hashed levels take a bucket count, not " + name());
    if (options.buckets < 0) throw FormatError("hashed level: bucket count must be positive");
    copy->buckets_ = options.buckets;
  }
  return copy;
}

std::string LevelType::repr() const {
  const LevelProperties& defaults = defaults_;
  std::string args;
  auto add = [&](const char* prop, bool value, bool def) {
    if (value == def) return;
    if (!args.empty()) args += ", ";
    args += std::string(prop) + "=" + (value ? "True" : "False");
  };
  add("full", props_.full, defaults.full);
  add("ordered", props_.ordered, defaults.ordered);
  add("unique", props_.unique, defaults.unique);
  add("compact", props_.compact, defaults.compact);
  if (buckets_ != 0) {
    if (!args.empty()) args += ", ";
    args += "buckets=" + std::to_string(buckets_);
  }
  return args.empty() ? name() : name() + "(" + args + ")";
}

bool LevelType::operator==(const LevelType& other) const {
  return kind() == other.kind() && name() == other.name() && props_ == other.props_ && buckets_ == other.buckets_;
}

void LevelType::find(const LevelStorage& s, int64_t parent, int64_t coord, std::vector<int64_t>& out) const {
  ExpandOutput children;
  expand(s, {parent}, children);
  for (size_t k = 0; k < children.coord.size(); ++k)
    if (children.coord[k] == coord) out.push_back(children.childPos[k]);
}

void LevelType::childStarts(const LevelStorage&, int64_t, int64_t*) const {
  throw std::logic_error(name() + " level: its children are not runs in parent order");
}

void LevelType::coordinatesAt(const LevelStorage&, int64_t, int64_t, int64_t*) const {
  throw std::logic_error(name() + " level: its coordinates are not known from the position alone");
}

LevelTypePtr makeLevelType(LevelKind kind) {
  switch (kind) {
    case LevelKind::Dense: return denseLevel();
    case LevelKind::Compressed: return compressedLevel();
    case LevelKind::Singleton: return singletonLevel();
    case LevelKind::Hashed: return hashedLevel();
    case LevelKind::Range: return rangeLevel();
    case LevelKind::Offset: return offsetLevel();
    case LevelKind::External: break;
  }
  throw FormatError("unknown level kind");
}

}  // namespace coiter
