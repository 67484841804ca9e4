// Singleton level: one child per parent, at the parent's own position; crd[p] is its
// coordinate (taco-core.md §1.6). A non-compact singleton (ELL's column level) may leave a
// parent without a child, marked by crd[p] == -1.
#include "format/levels/level_checks.hpp"

namespace coiter {
namespace {

class SingletonLevel final : public LevelType {
 public:
  SingletonLevel() : LevelType({false, true, true, true, true}) {}
  LevelKind kind() const override { return LevelKind::Singleton; }
  std::string name() const override { return "singleton"; }
  LevelCapabilities capabilities() const override { return {false, true, false, true, false}; }
  char letter() const override {
    if (!props_.ordered || props_.full || !props_.compact) return 0;
    return props_.unique ? 'q' : 'c';
  }
  std::vector<std::string> arrayNames() const override { return {"crd"}; }
  std::vector<std::string> scalarNames() const override { return {}; }
  std::vector<std::string> configurableProperties() const override {
    return {"full", "ordered", "unique", "compact"};
  }

  PackOutput pack(const PackInput& in) const override {
    PackOutput out;
    const IndexVector& c = *in.coords;
    std::vector<int64_t>& crd = out.arrays["crd"];
    crd.assign(static_cast<size_t>(in.parentCount), -1);
    if (props_.compact && static_cast<int64_t>(in.parents->size()) != in.parentCount)
      throw FormatError(in.where + ": a compact singleton level needs a child under every "
                        "parent position, but some are empty; use a compressed level or "
                        "singleton(compact=False)");
    for (const PackNode& node : *in.parents) {
      // Entries under one parent are sorted by this level's coordinate: first == last
      // means they all share it.
      if (c[node.lo] != c[node.hi - 1])
        throw FormatError(in.where + ": a singleton level holds one coordinate per parent, "
                          "but parent position " + std::to_string(node.pos) +
                          " has coordinates " + std::to_string(c[node.lo]) + " and " +
                          std::to_string(c[node.hi - 1]) + "; use a compressed level");
      crd[node.pos] = c[node.lo];
      out.children.push_back(node);
    }
    out.positionCount = in.parentCount;
    return out;
  }

  void expand(const LevelStorage& s, const std::vector<int64_t>& parents,
              ExpandOutput& out) const override {
    const Buffer& crd = s.array("crd");
    for (size_t k = 0; k < parents.size(); ++k) {
      int64_t c = crd.index(parents[k]);
      if (c >= 0) out.push(parents[k], c, static_cast<int64_t>(k));
    }
  }

  void find(const LevelStorage& s, int64_t parent, int64_t coord,
            std::vector<int64_t>& out) const override {
    if (coord >= 0 && s.array("crd").index(parent) == coord) out.push_back(parent);
  }

  int64_t countPositions(const LevelStorage&, int64_t parentCount) const override {
    return parentCount;
  }

  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent,
                   const std::string& where) const override {
    const Buffer& crd = checkedArray(s, "crd", parentCount, where);
    checkRange(crd, props_.compact ? 0 : -1, extent, "crd", where);
    return parentCount;
  }

 protected:
  std::shared_ptr<LevelType> clone() const override {
    return std::make_shared<SingletonLevel>(*this);
  }
};

}  // namespace

LevelTypePtr singletonLevel() { return std::make_shared<SingletonLevel>(); }

}  // namespace coiter
