#include "format/format.hpp"

#include <algorithm>
#include <numeric>

#include "util/errors.hpp"

namespace coiter {

std::string LevelCoordinate::repr() const {
  std::string m = "i" + std::to_string(mode);
  switch (kind) {
    case Kind::Mode: return m;
    case Kind::BlockIndex: return m + " / " + std::to_string(factor);
    case Kind::BlockOffset: return m + " % " + std::to_string(factor);
    case Kind::Diagonal: return "i" + std::to_string(factor) + " - " + m;
    case Kind::Slot: return "slot(" + m + ")";
  }
  return m;
}

Format::Format(std::vector<LevelTypePtr> levels, std::vector<int> modeOrder)
    : levels_(std::move(levels)), modeOrder_(std::move(modeOrder)) {
  order_ = static_cast<int>(levels_.size());
  for (const auto& l : levels_)
    if (!l) throw FormatError("a format's levels must be level types");
  for (const auto& l : levels_)
    if (l->kind() == LevelKind::Range || l->kind() == LevelKind::Offset)
      throw FormatError("range and offset levels are only available through the \"dia\" format");
  if (modeOrder_.empty()) {
    modeOrder_.resize(order_);
    std::iota(modeOrder_.begin(), modeOrder_.end(), 0);
  }
  std::vector<int> sorted = modeOrder_;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = static_cast<int>(sorted.size()) == order_;
  for (int k = 0; permutation && k < order_; ++k) permutation = sorted[k] == k;
  if (!permutation) {
    std::string given;
    for (int m : modeOrder_) given += (given.empty() ? "" : ",") + std::to_string(m);
    throw FormatError("mode order (" + given + ") is not a permutation of 0.." + std::to_string(order_ - 1));
  }
  for (int m : modeOrder_) levelMap_.push_back(LevelCoordinate::ofMode(m));
}

Format::Format(std::vector<LevelTypePtr> levels, int order, std::vector<LevelCoordinate> map, std::string name)
    : levels_(std::move(levels)), levelMap_(std::move(map)), order_(order), name_(std::move(name)) {
  modeOrder_.resize(order_);
  std::iota(modeOrder_.begin(), modeOrder_.end(), 0);
}

Format Format::parse(const std::string& text) {
  std::string letters = text, order;
  auto colon = text.find(':');
  if (colon != std::string::npos) {
    letters = text.substr(0, colon);
    order = text.substr(colon + 1);
  }
  std::vector<LevelTypePtr> levels;
  for (size_t k = 0; k < letters.size(); ++k) {
    LevelOptions nonUnique;
    nonUnique.unique = 0;
    switch (letters[k]) {
      case 'd': levels.push_back(denseLevel()); break;
      case 's': levels.push_back(compressedLevel()); break;
      case 'u': levels.push_back(compressedLevel()->configure(nonUnique)); break;
      case 'q': levels.push_back(singletonLevel()); break;
      case 'c': levels.push_back(singletonLevel()->configure(nonUnique)); break;
      case 'h': levels.push_back(hashedLevel()); break;
      default:
        throw FormatError("unknown format string '" + text + "': character '" + std::string(1, letters[k]) +
                          "' at column " + std::to_string(k + 1) +
                          " is not a level letter (d, s, u, q, c, h) nor is the string a "
                          "format name (dense, csr, csc, dcsr, dcsc, coo, csf, dia, ell, bcsr)");
    }
  }
  if (levels.empty()) throw FormatError("empty format string '" + text + "'");
  std::vector<int> modeOrder;
  if (colon != std::string::npos) {
    size_t start = 0;
    while (start <= order.size()) {
      size_t comma = order.find(',', start);
      std::string item = order.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
        throw FormatError("bad mode order '" + order + "' in format string '" + text + "'");
      modeOrder.push_back(std::stoi(item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (modeOrder.size() != levels.size())
      throw FormatError("format string '" + text + "' has " + std::to_string(levels.size()) +
                        " levels but a mode order of " + std::to_string(modeOrder.size()));
  }
  return Format(levels, modeOrder);
}

bool Format::isName(const std::string& name) {
  static const char* names[] = {"dense", "csr", "csc", "dcsr", "dcsc", "coo", "csf", "dia", "ell", "bcsr"};
  return std::find_if(std::begin(names), std::end(names), [&](const char* n) { return name == n; }) != std::end(names);
}

Format Format::named(const std::string& name, int order) {
  auto needOrder = [&](int required) {
    if (order != required)
      throw FormatError("format \"" + name + "\" describes order-" + std::to_string(required) + " tensors, not order " +
                        std::to_string(order));
  };
  if (order < 0) throw FormatError("negative tensor order");
  if (name == "dense") return order == 0 ? Format(std::vector<LevelTypePtr>{}) : parse(std::string(order, 'd'));
  if (name == "csr") {
    needOrder(2);
    return parse("ds");
  }
  if (name == "csc") {
    needOrder(2);
    return parse("ds:1,0");
  }
  if (name == "dcsr") {
    needOrder(2);
    return parse("ss");
  }
  if (name == "dcsc") {
    needOrder(2);
    return parse("ss:1,0");
  }
  if (name == "coo") {
    if (order < 1) throw FormatError("format \"coo\" needs order >= 1");
    if (order == 1) return parse("s");
    return parse("u" + std::string(order - 2, 'c') + "q");
  }
  if (name == "csf") {
    if (order < 1) throw FormatError("format \"csf\" needs order >= 1");
    return parse(std::string(order, 's'));
  }
  if (name == "dia") {
    needOrder(2);
    return dia();
  }
  if (name == "ell") {
    needOrder(2);
    return ell();
  }
  if (name == "bcsr") throw FormatError("format \"bcsr\" needs a block shape: use ct.bcsr((rows, cols))");
  throw FormatError("unknown format name '" + name + "'");
}

Format Format::bcsr(int64_t blockRows, int64_t blockCols) {
  if (blockRows <= 0 || blockCols <= 0)
    throw FormatError("bcsr block shape must be positive, got (" + std::to_string(blockRows) + ", " +
                      std::to_string(blockCols) + ")");
  return Format({denseLevel(), compressedLevel(), denseLevel(), denseLevel()}, 2,
                {LevelCoordinate::blockIndex(0, blockRows), LevelCoordinate::blockIndex(1, blockCols),
                 LevelCoordinate::blockOffset(0, blockRows), LevelCoordinate::blockOffset(1, blockCols)},
                "bcsr");
}

Format Format::dia() {
  return Format({denseLevel(), rangeLevel(), offsetLevel()}, 2,
                {LevelCoordinate::diagonal(0, 1), LevelCoordinate::ofMode(0), LevelCoordinate::ofMode(1)}, "dia");
}

Format Format::ell() {
  LevelOptions padded;
  padded.compact = 0;
  return Format({denseLevel(), denseLevel(), singletonLevel()->configure(padded)}, 2,
                {LevelCoordinate::slot(0), LevelCoordinate::ofMode(0), LevelCoordinate::ofMode(1)}, "ell");
}

std::string Format::str() const {
  if (name_ == "bcsr")
    return "bcsr((" + std::to_string(levelMap_[0].factor) + ", " + std::to_string(levelMap_[1].factor) + "))";
  if (!name_.empty()) return name_;
  std::string letters;
  for (const auto& l : levels_) {
    if (!l->letter()) return "";
    letters += l->letter();
  }
  bool identity = true;
  for (int k = 0; k < order_; ++k) identity = identity && modeOrder_[k] == k;
  if (identity) return letters;
  std::string order;
  for (int m : modeOrder_) order += (order.empty() ? "" : ",") + std::to_string(m);
  return letters + ":" + order;
}

std::string Format::repr() const {
  std::string s = str();
  if (!s.empty()) return "Format('" + s + "')";
  std::string levels;
  for (const auto& l : levels_) levels += (levels.empty() ? "" : ", ") + l->repr();
  std::string order;
  for (int m : modeOrder_) order += (order.empty() ? "" : ", ") + std::to_string(m);
  if (order_ == 1) order += ",";
  return "Format([" + levels + "], mode_order=(" + order + "))";
}

bool Format::operator==(const Format& o) const {
  if (order_ != o.order_ || levels_.size() != o.levels_.size() || !(levelMap_ == o.levelMap_)) return false;
  for (size_t k = 0; k < levels_.size(); ++k)
    if (!(*levels_[k] == *o.levels_[k])) return false;
  return true;
}

std::vector<int64_t> Format::levelExtents(const std::vector<int64_t>& shape) const {
  std::vector<int64_t> extents;
  for (const auto& lc : levelMap_) {
    switch (lc.kind) {
      case LevelCoordinate::Kind::Mode: extents.push_back(shape[lc.mode]); break;
      case LevelCoordinate::Kind::BlockIndex: extents.push_back(shape[lc.mode] / lc.factor); break;
      case LevelCoordinate::Kind::BlockOffset: extents.push_back(lc.factor); break;
      default: extents.push_back(-1);
    }
  }
  return extents;
}

bool Format::isAllDense() const {
  return !hasDerivedLevels() &&
         std::all_of(levels_.begin(), levels_.end(), [](const LevelTypePtr& l) { return l->properties().full; });
}

bool Format::levelHasArray(int level, const std::string& name) const {
  auto arrays = levels_[level]->kernelArrays();
  return std::any_of(arrays.begin(), arrays.end(), [&](const LevelKernelArray& a) { return a.name == name; });
}

int Format::partnerLevel(int level, LevelCoordinate::Kind kind) const {
  for (size_t k = 0; k < levelMap_.size(); ++k) {
    if (levelMap_[k].kind == kind && levelMap_[k].mode == levelMap_[level].mode) return static_cast<int>(k);
  }
  return -1;
}

Format::Restriction Format::restrictionAt(int level, int entered) const {
  using K = LevelCoordinate::Kind;
  const LevelCoordinate& own = levelMap_[level];
  if (own.kind == K::BlockOffset) return {Restriction::Kind::ToKnownBlock, partnerLevel(level, K::BlockIndex)};
  if (own.kind == K::BlockIndex) return {Restriction::Kind::ToBlockOfKnownOffset, partnerLevel(level, K::BlockOffset)};
  if (level >= 1 && level + 1 < static_cast<int>(levelMap_.size()) && levelHasArray(level + 1, "offset") &&
      entered == level) {
    return {Restriction::Kind::ToDiagonalRows, -1};
  }
  return {};
}

bool Format::holdsDuplicates() const {
  for (size_t k = 0; k < levels_.size(); ++k) {
    if (levels_[k]->properties().unique) continue;
    bool branchlessBelow = true;
    for (size_t b = k + 1; b < levels_.size(); ++b)
      branchlessBelow = branchlessBelow && levels_[b]->properties().branchless;
    if (branchlessBelow) return true;
  }
  return false;
}

void Format::checkShape(const std::vector<int64_t>& shape) const {
  if (static_cast<int>(shape.size()) != order_)
    throw ShapeError("format " + (str().empty() ? repr() : str()) + " describes order-" + std::to_string(order_) +
                     " tensors, but the shape has " + std::to_string(shape.size()) + " modes");
  for (size_t m = 0; m < shape.size(); ++m)
    if (shape[m] < 0) throw ShapeError("negative extent " + std::to_string(shape[m]) + " in mode " + std::to_string(m));
  for (const auto& lc : levelMap_)
    if (lc.kind == LevelCoordinate::Kind::BlockIndex && shape[lc.mode] % lc.factor != 0)
      throw ShapeError("bcsr: mode " + std::to_string(lc.mode) + " extent " + std::to_string(shape[lc.mode]) +
                       " is not a multiple of the block size " + std::to_string(lc.factor));
}

std::string Format::resultAssemblyProblem() const {
  if (hasDerivedLevels()) {
    return "a " + str() +
           " result cannot be assembled by a kernel; compute it in another format (csr, dense) "
           "and convert it with asformat()";
  }
  // Appended levels come in groups: a compressed level and the singletons below it. Dense
  // levels may lie above, between and below the groups (an appended entry then owns a dense
  // block of the positions below it).
  LevelAssembly previous = LevelAssembly::Located;
  for (const auto& level : levels_) {
    LevelAssembly assembly = level->assembly();
    switch (assembly) {
      case LevelAssembly::Located:
      case LevelAssembly::Appended:
      case LevelAssembly::Inserted: break;
      case LevelAssembly::AppendedBelow:
        if (!isAppended(previous)) return "a " + level->name() + " level must follow a compressed level";
        break;
      case LevelAssembly::None: return "a " + level->name() + " level cannot be computed by a kernel";
    }
    previous = assembly;
  }
  return "";
}

bool Format::insertsResultLevel(int k) const {
  if (levels_[k]->assembly() != LevelAssembly::Inserted || k + 1 != order_ || hasDerivedLevels()) return false;
  for (int above = 0; above < k; ++above)
    if (levels_[above]->assembly() != LevelAssembly::Located) return false;
  return true;
}

bool Format::fillsRowsInTwoPasses() const {
  if (order_ < 2 || levels_[order_ - 1]->assembly() != LevelAssembly::Appended) return false;
  for (int above = 0; above + 1 < order_; ++above)
    if (levels_[above]->assembly() != LevelAssembly::Located) return false;
  return true;
}

Format Format::resultAssemblyFormat() const {
  std::vector<LevelTypePtr> levels = levels_;
  bool changed = false;
  for (int k = 0; k < order_; ++k) {
    if (levels_[k]->assembly() != LevelAssembly::Inserted || insertsResultLevel(k)) continue;
    levels[k] = compressedLevel();
    changed = true;
  }
  return changed ? Format(levels, modeOrder_) : *this;
}

}  // namespace coiter
