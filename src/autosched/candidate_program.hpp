// A candidate program of the asymptotic stage (Ahrens et al., PLDI 2022 §2, CIN with
// protocols): loops, at most one where-grouping (a workspace computed by a producer nest and
// read by the consumer nest), and for every read level its access protocol. Only statements
// that multiply accesses (with implicit sums) are candidates' statements (autosched_statement.hpp).
//
//   no grouping:  ∀outer... A(out) = f1 * f2 * ...
//   grouping:     ∀outer... ((∀consumer... A(out) = rest * w(W)) where (∀producer... w(W) = S))
#pragma once
#include <string>
#include <vector>

#include "format/format.hpp"

namespace coiter::autosched {

// How a loop reads one level of an access (the paper's step is coiter's walk). Gallop is not
// listed: no coiter level type offers it (LevelCapabilities has no such capability).
enum class Protocol { Walk, Locate };
const char* protocolLetter(Protocol p);  // "w", "l"

// The protocols a level type offers, asked of the level type: walk where it iterates its
// stored coordinates (rather than locating every coordinate of the dimension), locate where
// it has random access.
std::vector<Protocol> offeredProtocols(const LevelType& level);

// A read (or the write, `protocols` empty) of a tensor in a candidate.
struct ProgramAccess {
  std::string tensor;
  std::vector<std::string> indices;  // one per mode, as the statement writes them
  Format format;                     // as the candidate reads it: mode order concordant with its loops
  bool transposed = false;           // `format` reorders the modes of the tensor's own format
  std::vector<Protocol> protocols;   // per level
  bool patterned = false;            // has a level that does not hold every coordinate
  // The index variable of each level.
  std::vector<std::string> levelVars() const;
  std::string toString() const;  // "B(l(i),w(k))"
};

struct Nest {
  std::vector<std::string> loops;  // outermost first
  ProgramAccess lhs;
  std::vector<ProgramAccess> factors;
};

struct Candidate {
  std::vector<std::string> outer;          // loops around the where (the statement's loops without one)
  Nest consumer;                           // the statement, or the where's consumer
  bool grouped = false;                    // has a where
  Nest producer;                           // the where's producer (computes the workspace)
  std::vector<int> groupedFactors;         // the statement's factors the workspace multiplies
  std::string workspace;                   // its tensor name
  std::vector<std::string> workspaceVars;  // W, in the producer's order (its modes)
  Format workspaceFormat;                  // its format over W
  // The where lowers as one precompute command (else as two kernels, or not at all): then a
  // workspace over one variable is read through its list of touched coordinates whatever its
  // format, and one over several is a dense array (lower/lower_workspaces.cpp).
  bool precomputed = false;
  std::vector<std::string> loopOrder;  // all loops in program order: outer, producer, consumer
  int depth() const;                   // maximum loop nesting
  std::string toString() const;        // the program in CIN with protocols
};

}  // namespace coiter::autosched
