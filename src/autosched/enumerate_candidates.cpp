#include "autosched/enumerate_candidates.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "autosched/lower_candidate.hpp"
#include "lattice/iteration_lattice.hpp"

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

// The segment a read level adds to a loop's iteration lattice, as the lowerer makes it
// (lower/lower_forall.cpp): from the level type, or for a workspace that precompute keeps as
// a list its list of touched coordinates.
lattice::Segment segmentOf(const ProgramAccess& a, size_t level, bool workspaceList) {
  lattice::Segment seg;
  seg.name = a.tensor + std::to_string(level + 1);
  if (workspaceList) {
    seg.iterable = true;
    return seg;
  }
  const LevelType& type = *a.format.levels()[level];
  LevelCapabilities caps = type.capabilities();
  seg.iterable = !type.locatesEveryCoordinate() && (caps.positionIterate || caps.coordinateIterate);
  seg.ordered = type.properties().ordered;
  seg.locatable = caps.locate;
  seg.full = type.properties().full;
  return seg;
}

// Each read level's protocol as coiter's iteration lattice of its loop decides it (the top
// point's iterators walk, its locators locate): a level offering both walk and locate (hashed)
// is located beside another iterator, an unordered one is never merged, a loop appending to a
// result iterates no unordered level; precompute's workspace over one variable is walked (its
// list), one over several located (an array).
void resolveProtocols(Candidate& c) {
  std::vector<ProgramAccess*> consumerReads, producerReads, allReads;
  for (auto& f : c.consumer.factors) consumerReads.push_back(&f);
  if (c.grouped) {
    for (auto& f : c.producer.factors) producerReads.push_back(&f);
  }
  allReads = consumerReads;
  allReads.insert(allReads.end(), producerReads.begin(), producerReads.end());
  auto resolve = [&](const std::string& var, const std::vector<ProgramAccess*>& reads, const ProgramAccess* write) {
    std::vector<lattice::Segment> segments(1);
    segments[0].name = "U_" + var;
    segments[0].dimension = segments[0].iterable = segments[0].full = segments[0].ordered = true;
    std::vector<std::pair<ProgramAccess*, size_t>> owners{{nullptr, 0}};
    lattice::DomainExprPtr domain;
    for (ProgramAccess* a : reads) {
      std::vector<std::string> vars = a->levelVars();
      for (size_t k = 0; k < vars.size(); ++k) {
        if (vars[k] != var) continue;
        bool workspace = c.grouped && a->tensor == c.workspace;
        if (workspace && c.precomputed && vars.size() > 1) continue;  // an array, located
        segments.push_back(segmentOf(*a, k, workspace && c.precomputed));
        owners.push_back({a, k});
        auto leaf = lattice::segmentDomain(static_cast<int>(segments.size()) - 1);
        domain = domain ? lattice::intersection(domain, leaf) : leaf;
      }
    }
    if (!domain) return;   // no level of this loop is read: it iterates its dimension
    bool appends = false;  // the loop appends to its nest's result at this variable
    if (write) {
      std::vector<std::string> vars = write->levelVars();
      for (size_t k = 0; k < vars.size(); ++k) {
        appends = appends || (vars[k] == var && !write->format.levels()[k]->locatesEveryCoordinate());
      }
    }
    lattice::IterationLattice lattice = lattice::IterationLattice::build(domain, segments, 0, appends);
    const lattice::LatticePoint& top = lattice.points().front();
    for (size_t s = 1; s < owners.size(); ++s) {
      bool iterated = std::find(top.iterators.begin(), top.iterators.end(), static_cast<int>(s)) != top.iterators.end();
      owners[s].first->protocols[owners[s].second] = iterated ? Protocol::Walk : Protocol::Locate;
    }
  };
  for (const auto& v : c.outer) resolve(v, allReads, &c.consumer.lhs);
  for (const auto& v : c.consumer.loops) resolve(v, consumerReads, &c.consumer.lhs);
  for (const auto& v : c.producer.loops) resolve(v, producerReads, c.precomputed ? nullptr : &c.producer.lhs);
}

std::string freshTensorName(const ProductStatement& s) {
  std::set<std::string> taken{s.result->name};
  for (const auto& f : s.factors) taken.insert(f.tensor->name);
  std::string name = "w";
  for (int k = 0; taken.count(name); ++k) name = "w" + std::to_string(k);
  return name;
}

// The formats coiter offers a workspace over n variables: a scalar, dense arrays, and over
// one variable compressed and hashed lists; a sparse workspace of several modes (between two
// kernels) as dense rows of compressed lists, and over three or more also as a dense array of
// compressed lists, whose leading modes a consumer can locate rather than merge (SpMTTKRP's
// w(k,l,j) = C(k,j) * D(l,j), located at each nonzero (k,l) of B).
std::vector<Format> workspaceFormats(size_t n) {
  if (n == 0) return {Format({}, {})};
  std::vector<Format> out{Format::parse(std::string(n, 'd'))};
  if (n == 1) {
    out.push_back(Format::parse("s"));
    out.push_back(Format::parse("h"));
    return out;
  }
  out.push_back(Format::parse("d" + std::string(n - 1, 's')));
  if (n > 2) out.push_back(Format::parse(std::string(n - 1, 'd') + "s"));
  return out;
}

struct Builder {
  const ProductStatement& s;
  std::string workspace;
  const CandidateVisitor& visit;
  std::set<std::string> seen;
  bool stopped = false;  // the visitor asked for no more candidates

  void add(Candidate c) {
    c.precomputed = c.grouped && precomputeProblem(s, c).empty();
    resolveProtocols(c);
    if (seen.insert(c.toString()).second) stopped = !visit(std::move(c));
  }

  std::vector<ProgramAccess> reads(const std::vector<int>& factors, const std::vector<std::string>& binding) const {
    std::vector<ProgramAccess> out;
    for (int f : factors) {
      out.push_back(readAccess(s.factors[f].tensor->name, s.factors[f].indices, s.factors[f].tensor->format, binding));
    }
    return out;
  }

  void ungrouped(const std::vector<std::string>& order) {
    if (stopped) return;
    Candidate c;
    c.outer = order;
    c.consumer.lhs = writeAccess(s.result->name, s.resultIndices, s.result->format, order);
    std::vector<int> all;
    for (size_t f = 0; f < s.factors.size(); ++f) all.push_back(static_cast<int>(f));
    c.consumer.factors = reads(all, order);
    c.loopOrder = order;
    add(std::move(c));
  }

  void grouped(const std::vector<int>& group, const std::vector<int>& rest, const std::vector<std::string>& outer,
               const std::vector<std::string>& producerLoops, const std::vector<std::string>& consumerLoops,
               const std::vector<std::string>& wsVars, const Format& wsFormat) {
    if (stopped) return;
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
    c.loopOrder = producerBinding;
    for (const auto& v : consumerLoops) {
      if (!contains(c.loopOrder, v)) c.loopOrder.push_back(v);
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

Universe enumerateCandidates(const ProductStatement& s, const CandidateVisitor& visit) {
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

  Builder b{s, freshTensorName(s), visit};
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
  // What the minimum-depth filter left out, counted without building them (so equal programs
  // are not merged).
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

Universe enumerateCandidates(const ProductStatement& s) {
  std::vector<Candidate> all;
  Universe u = enumerateCandidates(s, [&](Candidate&& c) {
    all.push_back(std::move(c));
    return true;
  });
  u.candidates = std::move(all);
  return u;
}

}  // namespace coiter::autosched
