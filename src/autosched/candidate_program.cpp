#include "autosched/candidate_program.hpp"

#include <algorithm>

namespace coiter::autosched {

const char* protocolLetter(Protocol p) { return p == Protocol::Walk ? "w" : "l"; }

std::vector<Protocol> offeredProtocols(const LevelType& level) {
  std::vector<Protocol> out;
  LevelCapabilities c = level.capabilities();
  if ((c.coordinateIterate || c.positionIterate) && !level.locatesEveryCoordinate()) out.push_back(Protocol::Walk);
  if (c.locate) out.push_back(Protocol::Locate);
  return out;
}

std::vector<std::string> ProgramAccess::levelVars() const {
  std::vector<std::string> out;
  for (size_t k = 0; k < indices.size(); ++k) {
    size_t mode = format.modeOrder().empty() ? k : static_cast<size_t>(format.modeOrder()[k]);
    out.push_back(indices[mode]);
  }
  return out;
}

std::string ProgramAccess::toString() const {
  std::string out = tensor + "(";
  std::vector<std::string> vars = protocols.empty() ? indices : levelVars();
  for (size_t k = 0; k < vars.size(); ++k) {
    out += k ? "," : "";
    out += protocols.empty() ? vars[k] : std::string(protocolLetter(protocols[k])) + "(" + vars[k] + ")";
  }
  out += ")";
  // A write in another mode order: the kernel computes the transpose, converted back.
  return protocols.empty() && transposed ? out + "ᵀ" : out;
}

int Candidate::depth() const {
  int inner = static_cast<int>(consumer.loops.size());
  if (grouped) inner = std::max(inner, static_cast<int>(producer.loops.size()));
  return static_cast<int>(outer.size()) + inner;
}

namespace {

std::string nestText(const Nest& n) {
  std::string out;
  for (const auto& v : n.loops) out += "∀" + v + " ";
  out += n.lhs.toString() + " = ";
  for (size_t k = 0; k < n.factors.size(); ++k) out += (k ? " * " : "") + n.factors[k].toString();
  return out;
}

}  // namespace

std::string Candidate::toString() const {
  std::string out;
  for (const auto& v : outer) out += "∀" + v + " ";
  if (!grouped) return out + nestText(consumer);
  out += "((" + nestText(consumer) + ") where (" + nestText(producer) + "))";
  out += "  [" + workspace + ": " + (workspaceFormat.order() ? workspaceFormat.str() : std::string("scalar")) + "]";
  return out;
}

}  // namespace coiter::autosched
