#include "autosched/enumerate_candidates.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace coiter::autosched {

namespace {

bool contains(const std::vector<std::string>& vs, const std::string& v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

std::vector<std::string> minus(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const auto& v : a) {
    if (!contains(b, v)) out.push_back(v);
  }
  return out;
}

// Every order of `vars` (sorted by the statement's order first, so the walk is deterministic).
std::vector<std::vector<std::string>> orders(std::vector<std::string> vars, const std::vector<std::string>& rank) {
  auto pos = [&](const std::string& v) { return std::find(rank.begin(), rank.end(), v) - rank.begin(); };
  auto before = [&](const std::string& x, const std::string& y) { return pos(x) < pos(y); };
  std::sort(vars.begin(), vars.end(), before);
  std::vector<std::vector<std::string>> out;
  do out.push_back(vars);
  while (std::next_permutation(vars.begin(), vars.end(), before));
  return out;
}

// The access with the level types of `format` over its modes in binding order when the
// format's own mode order would traverse a level without random access before the levels
// above it are bound (the paper's transposing reformat, §6.8: linear, so outside the
// asymptotic cost).
ProgramAccess concordantAccess(const std::string& tensor, const std::vector<std::string>& indices, const Format& format,
                               const std::vector<std::string>& binding) {
  ProgramAccess a;
  a.tensor = tensor;
  a.indices = indices;
  a.format = format;
  auto boundAt = [&](const std::string& v) { return std::find(binding.begin(), binding.end(), v) - binding.begin(); };
  auto walks = [](const LevelType& level) {
    std::vector<Protocol> offered = offeredProtocols(level);
    return std::find(offered.begin(), offered.end(), Protocol::Locate) == offered.end();
  };
  std::vector<std::string> vars = a.levelVars();
  bool concordant = true;
  for (size_t k = 0; k < vars.size(); ++k) {
    if (!walks(*format.levels()[k])) continue;
    for (size_t above = 0; above < k; ++above) concordant = concordant && boundAt(vars[above]) < boundAt(vars[k]);
  }
  if (!concordant) {
    std::vector<int> modes(indices.size());
    for (size_t m = 0; m < modes.size(); ++m) modes[m] = static_cast<int>(m);
    std::sort(modes.begin(), modes.end(), [&](int x, int y) { return boundAt(indices[x]) < boundAt(indices[y]); });
    a.format = Format(format.levels(), modes);
    a.transposed = true;
  }
  return a;
}

ProgramAccess readAccess(const std::string& tensor, const std::vector<std::string>& indices, const Format& format,
                         const std::vector<std::string>& binding) {
  ProgramAccess a = concordantAccess(tensor, indices, format, binding);
  for (const auto& level : a.format.levels()) {
    a.patterned = a.patterned || !level->locatesEveryCoordinate();
    a.protocols.push_back(offeredProtocols(*level).front());
  }
  return a;
}

// The result, like a read, is transposed where its own mode order would append a level
// before the levels above it are bound (the kernel then computes the transpose, which is
// converted back: the paper's reformat of writes, §6.8).
ProgramAccess writeAccess(const std::string& tensor, const std::vector<std::string>& indices, const Format& format,
                          const std::vector<std::string>& binding) {
  return concordantAccess(tensor, indices, format, binding);
}

// A level offering both walk and locate (hashed) is located where another access walks the
// same variable and walked otherwise, as coiter's iteration lattices decide: an unordered
// level is never merged with another iterator (lattice/iteration_lattice.hpp).
void resolveProtocols(Candidate& c) {
  std::vector<ProgramAccess*> reads;
  for (auto& f : c.consumer.factors) reads.push_back(&f);
  if (c.grouped) {
    for (auto& f : c.producer.factors) reads.push_back(&f);
  }
  auto onlyWalks = [](const ProgramAccess& a, size_t k) { return offeredProtocols(*a.format.levels()[k]).size() == 1; };
  for (ProgramAccess* a : reads) {
    std::vector<std::string> vars = a->levelVars();
    for (size_t k = 0; k < vars.size(); ++k) {
      if (onlyWalks(*a, k)) continue;
      bool walkedElsewhere = false;
      for (ProgramAccess* b : reads) {
        std::vector<std::string> bVars = b->levelVars();
        for (size_t m = 0; m < bVars.size(); ++m) {
          walkedElsewhere = walkedElsewhere ||
                            (b != a && bVars[m] == vars[k] && onlyWalks(*b, m) && b->protocols[m] == Protocol::Walk);
        }
      }
      a->protocols[k] = walkedElsewhere ? Protocol::Locate : Protocol::Walk;
    }
  }
}

std::string freshTensorName(const ProductStatement& s) {
  std::set<std::string> taken{s.result->name};
  for (const auto& f : s.factors) taken.insert(f.tensor->name);
  std::string name = "w";
  for (int k = 0; taken.count(name); ++k) name = "w" + std::to_string(k);
  return name;
}

// The formats coiter offers a workspace over n variables: a scalar, dense arrays, and over
// one variable compressed and hashed lists; a sparse matrix workspace (between two kernels)
// as dense rows of compressed lists.
std::vector<Format> workspaceFormats(size_t n) {
  if (n == 0) return {Format({}, {})};
  std::vector<Format> out{Format::parse(std::string(n, 'd'))};
  if (n == 1) {
    out.push_back(Format::parse("s"));
    out.push_back(Format::parse("h"));
  } else {
    out.push_back(Format::parse("d" + std::string(n - 1, 's')));
  }
  return out;
}

struct Builder {
  const ProductStatement& s;
  std::string workspace;
  std::set<std::string> seen;
  Universe& out;

  void add(Candidate c) {
    resolveProtocols(c);
    if (seen.insert(c.toString()).second) out.candidates.push_back(std::move(c));
  }

  std::vector<ProgramAccess> reads(const std::vector<int>& factors, const std::vector<std::string>& binding) const {
    std::vector<ProgramAccess> out;
    for (int f : factors) {
      out.push_back(readAccess(s.factors[f].tensor->name, s.factors[f].indices, s.factors[f].tensor->format, binding));
    }
    return out;
  }

  void ungrouped(const std::vector<std::string>& order) {
    Candidate c;
    c.outer = order;
    c.consumer.lhs = writeAccess(s.result->name, s.resultIndices, s.result->format, order);
    std::vector<int> all;
    for (size_t f = 0; f < s.factors.size(); ++f) all.push_back(static_cast<int>(f));
    c.consumer.factors = reads(all, order);
    c.accessOrder = order;
    add(std::move(c));
  }

  void grouped(const std::vector<int>& group, const std::vector<int>& rest, const std::vector<std::string>& outer,
               const std::vector<std::string>& producerLoops, const std::vector<std::string>& consumerLoops,
               const std::vector<std::string>& wsVars, const Format& wsFormat) {
    Candidate c;
    c.grouped = true;
    c.outer = outer;
    c.groupedFactors = group;
    c.workspace = workspace;
    c.workspaceVars = wsVars;
    c.workspaceFormat = wsFormat;
    std::vector<std::string> producerBinding = outer, consumerBinding = outer;
    producerBinding.insert(producerBinding.end(), producerLoops.begin(), producerLoops.end());
    consumerBinding.insert(consumerBinding.end(), consumerLoops.begin(), consumerLoops.end());
    c.producer.loops = producerLoops;
    c.producer.lhs = writeAccess(workspace, wsVars, wsFormat, producerBinding);
    c.producer.factors = reads(group, producerBinding);
    c.consumer.loops = consumerLoops;
    c.consumer.lhs = writeAccess(s.result->name, s.resultIndices, s.result->format, consumerBinding);
    c.consumer.factors = reads(rest, consumerBinding);
    c.consumer.factors.push_back(readAccess(workspace, wsVars, wsFormat, consumerBinding));
    c.accessOrder = producerBinding;
    for (const auto& v : consumerLoops) {
      if (!contains(c.accessOrder, v)) c.accessOrder.push_back(v);
    }
    add(std::move(c));
  }
};

// A where-grouping with its loops placed: `outer` around the where (as a set; its orders
// are enumerated later).
struct Placement {
  std::vector<int> group, rest;
  std::vector<std::string> outer, producer, consumer, wsVars;
  int depth() const { return static_cast<int>(outer.size() + std::max(producer.size(), consumer.size())); }
};

}  // namespace

Universe enumerateCandidates(const ProductStatement& s) {
  Universe u;
  const size_t n = s.factors.size();
  const std::vector<std::string>& vars = s.vars;
  std::vector<Placement> placements;
  // Where-groupings: the workspace multiplies a proper subset of two or more factors (§6.2;
  // with commutativity, any subset). A workspace for the whole right-hand side only copies
  // into the result: that is the paper's reformatting of writes (§6.8), which coiter does
  // itself (a result scattered out of order gets an automatic workspace, cin/workspaces.hpp;
  // one appended against its mode order is written transposed, writeAccess above). Loops go
  // outside the where or into it (§6.3): a loop inside
  // goes to the producer if the grouped factors use its variable, to the consumer if the
  // result or the other factors do; the workspace is indexed by the variables inside that
  // both sides use (§6.5).
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    Placement p;
    for (size_t f = 0; f < n; ++f) (mask >> f & 1u ? p.group : p.rest).push_back(static_cast<int>(f));
    if (p.group.size() < 2 || p.rest.empty()) continue;
    std::vector<std::string> groupVars = s.varsOf(p.group);
    std::vector<std::string> consumerVars = s.varsOf(p.rest);
    for (const auto& v : s.resultIndices) {
      if (!contains(consumerVars, v)) consumerVars.push_back(v);
    }
    for (unsigned outerMask = 0; outerMask < (1u << vars.size()); ++outerMask) {
      Placement q = p;
      for (size_t k = 0; k < vars.size(); ++k) {
        if (outerMask >> k & 1u) q.outer.push_back(vars[k]);
      }
      q.producer = minus(groupVars, q.outer);
      q.consumer = minus(consumerVars, q.outer);
      for (const auto& v : q.producer) {
        if (contains(q.consumer, v)) q.wsVars.push_back(v);
      }
      placements.push_back(q);
    }
  }
  u.minimumDepth = static_cast<int>(vars.size());  // the ungrouped nest
  for (const auto& p : placements) u.minimumDepth = std::min(u.minimumDepth, p.depth());

  Builder b{s, freshTensorName(s), {}, u};
  if (static_cast<int>(vars.size()) == u.minimumDepth) {
    for (const auto& order : orders(vars, vars)) b.ungrouped(order);
  }
  for (const auto& p : placements) {
    if (p.depth() != u.minimumDepth) continue;
    for (const auto& outer : orders(p.outer, vars)) {
      for (const auto& producer : orders(p.producer, vars)) {
        // The workspace's modes follow the producer's loops, so it is written in order.
        std::vector<std::string> wsVars;
        for (const auto& v : producer) {
          if (contains(p.wsVars, v)) wsVars.push_back(v);
        }
        for (const auto& consumer : orders(p.consumer, vars)) {
          for (const auto& format : workspaceFormats(wsVars.size())) {
            b.grouped(p.group, p.rest, outer, producer, consumer, wsVars, format);
          }
        }
      }
    }
  }
  // What the minimum-depth filter left out, counted as the universe would hold them.
  auto factorial = [](size_t k) {
    size_t f = 1;
    for (size_t m = 2; m <= k; ++m) f *= m;
    return f;
  };
  if (static_cast<int>(vars.size()) != u.minimumDepth) u.deeper += factorial(vars.size());
  for (const auto& p : placements) {
    if (p.depth() == u.minimumDepth) continue;
    u.deeper += factorial(p.outer.size()) * factorial(p.producer.size()) * factorial(p.consumer.size()) *
                workspaceFormats(p.wsVars.size()).size();
  }
  return u;
}

}  // namespace coiter::autosched
