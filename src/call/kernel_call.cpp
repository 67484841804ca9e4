#include "call/kernel_call.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <type_traits>

#include "call/chunked_assembly.hpp"
#include "call/result_size_hints.hpp"
#include "memory/allocation_limit.hpp"
#include "runtime/interrupts.hpp"
#include "runtime/parallel_runtime.hpp"
#include "runtime/result_memory.hpp"
#include "util/errors.hpp"

namespace coiter {

namespace {

using Operands = std::vector<std::shared_ptr<const TensorStorage>>;

bool hasIndexArrays(const Format& f) {
  for (const auto& l : f.levels()) {
    if (!l->arrayNames().empty()) return true;
  }
  return false;
}

void checkOperand(const notation::TensorVar& expected, const TensorStorage& given) {
  if (given.format() != expected.format) {
    throw SignatureError("tensor " + expected.name + ": the kernel was compiled for format " + expected.format.repr() +
                         " but got " + given.format().repr());
  }
  if (given.valueType() != expected.dtype) {
    throw SignatureError("tensor " + expected.name + ": the kernel was compiled for dtype " +
                         dtypeName(expected.dtype) + " but got " + dtypeName(given.valueType()));
  }
  if (hasIndexArrays(expected.format) && given.indexType() != expected.indexType) {
    throw SignatureError("tensor " + expected.name + ": the kernel was compiled for index dtype " +
                         dtypeName(expected.indexType) + " but got " + dtypeName(given.indexType()));
  }
}

// Runs `check` of a tensor's arrays, naming the tensor in the error it raises.
template <typename Check>
void naming(const notation::TensorVar& tensor, Check&& check) {
  try {
    check();
  } catch (const FormatError& e) {
    throw FormatError("tensor " + tensor.name + ": " + e.what());
  } catch (const ShapeError& e) {
    throw ShapeError("tensor " + tensor.name + ": " + e.what());
  }
}

// The kernel met an operand coordinate outside its dimension (ir/guard_coordinates.hpp): the
// operands' bounds, re-checked, name the entry.
[[noreturn]] void reportInvalidCoordinate(const KernelABI& abi, const Operands& operands) {
  for (size_t t = 0; t < operands.size(); ++t) naming(*abi.tensors[t], [&] { operands[t]->checkBounds(); });
  throw FormatError("an operand's coordinate lies outside its dimension (its index arrays changed during the call)");
}

// The first `length` elements of a result array, the memory past them offered back to the system.
Buffer trimmed(const Buffer& array, int64_t length) {
  trimResultArray(array.data(), static_cast<size_t>(length) * dtypeSize(array.dtype()));
  return Buffer::borrow(array.dtype(), length, array.data(), array.owner());
}

// Sets the `length` index elements of `array` (of `type`) to `value`.
void fillIndexArray(void* array, DType type, int64_t length, int64_t value) {
  dispatchDType(type, [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    if constexpr (std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>) {
      std::fill(static_cast<I*>(array), static_cast<I*>(array) + length, static_cast<I>(value));
    }
  });
}

// The slots of a kernel that assembles its result in two passes (KernelABI::twoPass), with
// `parents` positions above its counted level.
TwoPassCall twoPassSlots(const KernelABI& abi, int64_t parents) {
  TwoPassCall passes;
  passes.passSlot = abi.twoPass.passSlot;
  passes.parents = parents;
  passes.indexType = abi.tensors[abi.result()]->indexType;
  for (const auto& a : abi.arrays) {
    if (a.tensor != abi.result() || a.capacitySlot < 0) continue;
    if (a.array == "pos" && a.level == abi.twoPass.appendLevel)
      passes.posSlot = a.slot;
    else if (a.array != "pos")
      passes.appended.push_back({a.slot, a.capacitySlot, dtypeSize(a.type)});
  }
  return passes;
}

// Turns the counts of a two-pass kernel's counting pass (pos[parent + 1]) into offsets;
// returns the entries.
int64_t countsToOffsets(void* pos, const TwoPassCall& passes, const std::string& result) {
  int64_t total = 0;
  dispatchDType(passes.indexType, [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    if constexpr (std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>) {
      I* p = static_cast<I*>(pos);
      for (int64_t q = 1; q <= passes.parents; ++q) {
        total += static_cast<int64_t>(p[q]);
        if (total > static_cast<int64_t>(std::numeric_limits<I>::max())) {
          throw ShapeError("result " + result + ": more entries than its " + dtypeName(passes.indexType) +
                           " index arrays can count");
        }
        p[q] = static_cast<I>(total);
      }
    }
  });
  return total;
}

// The host array of a result slot resized to `bytes` (contents not kept), in `pointers`.
void* resizeResultArray(std::vector<void*>& pointers, int slot, size_t bytes) {
  void* grown = growResultArray(pointers[slot], 0, std::max<size_t>(bytes, 1));
  if (!grown) throw std::bad_alloc();
  pointers[slot] = grown;
  return grown;
}

// Runs a host kernel that assembles its result in two passes: counting, offsets, exact room
// for the entries (the values zeroed, as the filling pass expects), filling.
int32_t runTwoPassesOnHost(KernelEntry entry, const KernelABI& abi, int64_t parents, std::vector<void*>& pointers,
                           std::vector<int64_t>& integers) {
  TwoPassCall passes = twoPassSlots(abi, parents);
  integers[passes.passSlot] = 0;
  if (int32_t status = entry(pointers.data(), integers.data()); status != ir::kOk) return status;
  int64_t entries = countsToOffsets(pointers[passes.posSlot], passes, abi.tensors[abi.result()]->name);
  for (const auto& a : passes.appended) {
    void* array = resizeResultArray(pointers, a.slot, static_cast<size_t>(entries) * a.elementBytes);
    std::memset(array, 0, static_cast<size_t>(entries) * a.elementBytes);
    integers[a.capacitySlot] = entries;
  }
  integers[passes.passSlot] = 1;
  return entry(pointers.data(), integers.data());
}

// Runs a device kernel (LoadedKernel::run): each pointer slot with its size, its use and the
// device copy of its array where an operand has one. The result stays on the device (returned
// in `kept`) when `keepOnDevice`.
// A two-pass kernel's appended arrays are sized by the engine between its passes; while the
// result stays on the device, the host pos gets its last offset (the entries) at once, for the
// assembly's end, and the rest when the host copy is read.
int32_t runOnDevice(const LoadedKernel& code, const KernelABI& abi, const Operands& operands,
                    const TensorStorage* structure, std::vector<void*>& pointers, std::vector<int64_t>& integers,
                    const std::vector<size_t>& resultBytes, int64_t twoPassParents, bool keepOnDevice,
                    std::shared_ptr<const DeviceCopy>& kept) {
  const int resultIndex = abi.result();
  KernelCall call;
  call.pointers = pointers;
  call.integers = integers;
  call.bytes.assign(pointers.size(), 0);
  call.uses.assign(pointers.size(), SlotUse::Input);
  call.deviceAddresses.assign(pointers.size(), nullptr);
  call.keepOutputsOnDevice = keepOnDevice;
  call.flagSlot = abi.violationSlot;
  for (const auto& a : abi.arrays) {
    const bool isResult = a.tensor == resultIndex;
    const TensorStorage* owner =
        isResult ? (abi.assembles || a.level < 0 ? nullptr : structure) : operands[a.tensor].get();
    if (owner) {  // an operand's array, or the given structure of a compute-only result
      const Buffer& b = a.level < 0 ? owner->valuesAnywhere() : owner->levelsAnywhere()[a.level].array(a.array);
      call.bytes[a.slot] = static_cast<size_t>(b.length()) * dtypeSize(b.dtype());
      if (owner->deviceCopy()) call.deviceAddresses[a.slot] = owner->deviceCopy()->deviceAddress(b.data());
      continue;
    }
    call.bytes[a.slot] = resultBytes[a.slot];
    call.uses[a.slot] = abi.resultOverwritten ? SlotUse::Output : SlotUse::ZeroedOutput;
  }
  if (abi.violationSlot >= 0) {
    call.bytes[abi.violationSlot] = sizeof(int64_t);
    call.uses[abi.violationSlot] = SlotUse::ZeroedOutput;
  }
  // A compute-only result shares the given structure's index arrays, on the device too.
  if (keepOnDevice && structure && structure->deviceCopy()) call.outputsBorrow = structure->sharedDeviceCopy();
  TwoPassCall passes;
  if (abi.twoPass.enabled) {
    passes = twoPassSlots(abi, twoPassParents);
    passes.resizeHost = [&call](int slot, size_t bytes) { return resizeResultArray(call.pointers, slot, bytes); };
    call.twoPass = &passes;
  }
  int32_t status = code.run(call);
  pointers = call.pointers;
  integers = call.integers;
  kept = call.outputs;
  if (abi.twoPass.enabled && keepOnDevice && status == ir::kOk) {
    fillIndexArray(static_cast<char*>(pointers[passes.posSlot]) + passes.parents * dtypeSize(passes.indexType),
                   passes.indexType, 1, passes.entries);
  }
  return status;
}

// Runs a kernel that assembles its sparse result by rows (KernelABI::chunks) as chunks of
// `rows` rows on `threads` threads (call/chunked_assembly.hpp).
int32_t runChunks(KernelEntry entry, const KernelABI& abi, const Operands& operands, int64_t rows, int threads,
                  const std::vector<int64_t>& levelExtents, std::vector<void*>& pointers,
                  std::vector<int64_t>& integers) {
  const ChunkedAssembly& plan = abi.chunks;
  const int resultIndex = abi.result();
  const notation::TensorVar& result = *abi.tensors[resultIndex];
  const auto& levels = result.format.levels();
  ChunkedCall call{entry, &plan, rows, 1, -1, result.indexType, {}};
  for (int k = 1; k < plan.appendLevel; ++k) call.parentsPerRow *= levelExtents[k];
  int64_t perEntry = 1;
  for (size_t k = plan.appendLevel + 1; k < levels.size(); ++k) {
    if (levels[k]->assembly() == LevelAssembly::Located) perEntry *= levelExtents[k];
  }
  for (const auto& a : abi.arrays) {
    if (a.tensor != resultIndex || a.capacitySlot < 0) continue;
    if (a.array == "pos") {
      call.posSlot = a.slot;
    } else {
      call.appended.push_back(AppendedArray{a.slot, a.capacitySlot, dtypeSize(a.type), a.level < 0 ? perEntry : 1});
    }
  }
  // Row weights: the row pointers of an operand stored by the same rows (CSR-like).
  auto var = std::find(abi.indexVars.begin(), abi.indexVars.end(), plan.indexVar);
  for (const auto& [t, mode] : abi.indexVarModes[var - abi.indexVars.begin()]) {
    if (t == resultIndex || call.rowWeights) continue;
    const Format& f = abi.tensors[t]->format;
    // The first level must hold the rows themselves (a BCSR operand's holds block rows,
    // and its pos array counts those).
    if (f.order() >= 2 && f.modeOrder()[0] == mode && f.levels()[0]->locatesEveryCoordinate() &&
        f.levelMap()[0].kind == LevelCoordinate::Kind::Mode && f.levels()[1]->storesSegments()) {
      const Buffer& pos = operands[t]->levels()[1].array("pos");
      call.rowWeights = pos.data();
      call.rowWeightType = pos.dtype();
    }
  }
  return runChunkedAssembly(call, threads, pointers, integers);
}

// Entries per parent to size an inserted result level for on a kernel's first try: the
// fullest segment of the kernel's last result (recorded for such kernels instead of its
// entries), else the operands' stored values per parent; at most the level's extent (all its
// coordinates).
int64_t insertEntriesHint(const Operands& operands, int64_t parents, int64_t extent, KernelEntry entry) {
  if (parents <= 0) return 0;
  int64_t hint = lastResultEntries(entry);
  if (hint <= 0) {
    int64_t values = 0;
    for (const auto& op : operands) values += op->valuesAnywhere().length();
    hint = values / parents + (values % parents != 0);
  }
  return std::min(hint, extent);
}

// How many elements each result array of one try starts with.
struct ResultSizes {
  int64_t guess;                            // an appended array's first capacity
  int64_t fixedPositions;                   // values (and an inserted level's arrays) allocated in full, or -1
  int inserted;                             // the inserted level, or -1
  const std::vector<int64_t>& parentCount;  // positions above each level (-1: not known before)
};

// Allocates the result arrays of one try into the kernel's slots, each zeroed or filled as it
// needs (a compute-only kernel gets the given structure's index arrays), and returns them,
// owned until the kernel takes them over; `bytes` and `lengths` get each one's size and
// elements by pointer slot, `countsPerParent` the levels whose pos the kernel fills with counts.
std::vector<std::unique_ptr<void, ResultArrayDeleter>> allocateResultArrays(
    const KernelABI& abi, const TensorStorage* structure, const ResultSizes& sizes, bool onHost,
    std::vector<void*>& pointers, std::vector<int64_t>& integers, std::vector<size_t>& bytes,
    std::vector<int64_t>& lengths, std::vector<bool>& countsPerParent) {
  const int resultIndex = abi.result();
  const notation::TensorVar& result = *abi.tensors[resultIndex];
  const std::vector<int64_t>& parentCount = sizes.parentCount;
  std::vector<std::unique_ptr<void, ResultArrayDeleter>> allocated;
  for (const auto& a : abi.arrays) {
    if (a.tensor != resultIndex) continue;
    if (!abi.assembles && a.level >= 0) {
      // Compute-only: the given structure is read, never written or grown.
      const Buffer& given = structure->levelsAnywhere()[a.level].array(a.array);
      pointers[a.slot] = given.data();
      if (a.capacitySlot >= 0) integers[a.capacitySlot] = given.length();
      continue;
    }
    int64_t capacity = !abi.assembles ? structure->values().length() : sizes.guess;
    // (A result keeping an operand's pattern starts at zero, unless every entry is stored once.)
    bool zero = a.array == "vals" && abi.patternOperand >= 0 && !abi.resultOverwritten;
    std::optional<int64_t> start;  // what an inserted level's array starts as
    if (a.array == "vals" && sizes.fixedPositions >= 0) {
      capacity = sizes.fixedPositions;
      zero = !abi.resultOverwritten;
    } else if (sizes.inserted >= 0 && a.level == sizes.inserted) {
      capacity = sizes.fixedPositions;
      start = result.format.levels()[a.level]->insertArrayStart(a.array);
    } else if (a.array == "pos") {
      zero = true;
      countsPerParent[a.level] = std::count(abi.countedLevels.begin(), abi.countedLevels.end(), a.level) > 0;
      if (parentCount[a.level] >= 0) {
        // One more than the parents (2**63 - 1 parents leave no room: refused just below).
        capacity = parentCount[a.level] + (parentCount[a.level] < std::numeric_limits<int64_t>::max());
      }  // else the parents appear as the kernel appends above: it grows the array
    }
    // A dense prefix's positions follow from the shape alone, so they may exceed memory.
    const size_t size = checkedArrayBytes(capacity, a.type, [&] {
      return "result " + result.name + ": " +
             (a.level < 0 ? "the values" : "array '" + a.array + "' of level " + std::to_string(a.level));
    });
    // A device kernel's result is written on the device (zeroed there): the host copy is
    // overwritten by the download, or never touched while the result stays on the device.
    allocated.emplace_back(allocateResultArray(size, zero && onHost));
    if (start) fillIndexArray(allocated.back().get(), a.type, capacity, *start);
    bytes[a.slot] = size;
    lengths[a.slot] = capacity;
    pointers[a.slot] = allocated.back().get();
    if (a.capacitySlot >= 0) integers[a.capacitySlot] = capacity;
  }
  return allocated;
}

// The result arrays the kernel left in its slots, as Buffers in `owned` (freed with them), by
// level and name; compute-only kernels' index arrays stay the given structure's.
std::map<std::pair<int, std::string>, Buffer*> adoptResultArrays(const KernelABI& abi,
                                                                 const std::vector<void*>& pointers,
                                                                 const std::vector<int64_t>& integers,
                                                                 const std::vector<int64_t>& lengths,
                                                                 std::vector<Buffer>& owned) {
  std::map<std::pair<int, std::string>, Buffer*> arrays;
  owned.assign(abi.arrays.size(), Buffer());
  for (size_t n = 0; n < abi.arrays.size(); ++n) {
    const auto& a = abi.arrays[n];
    if (a.tensor != abi.result()) continue;
    if (!abi.assembles && a.level >= 0) continue;  // the structure's own arrays
    // (A grown array's capacity is the kernel's to report; the others keep their allocation.)
    int64_t capacity = a.capacitySlot >= 0 ? integers[a.capacitySlot] : lengths[a.slot];
    owned[n] = resultBuffer(a.type, capacity, pointers[a.slot]);
    arrays[{a.level, a.array}] = &owned[n];
  }
  return arrays;
}

// A device kernel reads an operand's device copy, checked when it was made, where it has one.
bool readsDeviceCopy(bool onHost, const TensorStorage& s) { return !onHost && s.deviceCopy(); }

// Checks each operand against the kernel's signature, and its arrays against its format (so
// the kernel never reads out of bounds): a host kernel checks the coordinates it loads itself
// (ir/guard_coordinates.hpp); a device kernel does not, so a host operand copied in for it has
// its coordinates checked here too (a device copy was checked whole when it was made).
// Returns whether any operand has a device copy.
bool checkOperands(const KernelABI& abi, const Operands& operands, bool onHost) {
  const int resultIndex = abi.result();
  if (static_cast<int>(operands.size()) != resultIndex) {
    throw SignatureError("the kernel takes " + std::to_string(resultIndex) + " operands, got " +
                         std::to_string(operands.size()));
  }
  bool anyOnDevice = false;
  for (int t = 0; t < resultIndex; ++t) {
    checkOperand(*abi.tensors[t], *operands[t]);
    anyOnDevice = anyOnDevice || operands[t]->deviceCopy();
    if (readsDeviceCopy(onHost, *operands[t])) continue;
    naming(*abi.tensors[t], [&] {
      operands[t]->checkStructure();
      if (!onHost) operands[t]->checkBounds();
    });
  }
  return anyOnDevice;
}

// The result's shape when none is given: each extent is the extent of an operand mode indexed
// by the same variable.
std::vector<int64_t> derivedResultShape(const KernelABI& abi, const Operands& operands) {
  const int resultIndex = abi.result();
  const notation::TensorVar& result = *abi.tensors[resultIndex];
  std::vector<int64_t> shape(result.order(), -1);
  for (const auto& modes : abi.indexVarModes) {
    int source = -1;
    for (size_t n = 0; n < modes.size(); ++n) {
      if (modes[n].first != resultIndex) source = static_cast<int>(n);
    }
    for (const auto& [t, m] : modes) {
      if (t == resultIndex && source >= 0) shape[m] = operands[modes[source].first]->shape()[modes[source].second];
    }
  }
  for (int m = 0; m < result.order(); ++m) {
    if (shape[m] < 0) {
      throw ShapeError("no input determines the extent of mode " + std::to_string(m) + " of the result " + result.name +
                       "; pass out= or a result shape");
    }
  }
  return shape;
}

// The extent of mode `mode` of tensor `tensor` of the call (the result's from `shape`).
int64_t extentOf(const KernelABI& abi, const Operands& operands, const std::vector<int64_t>& shape, int tensor,
                 int mode) {
  return tensor == abi.result() ? shape[mode] : operands[tensor]->shape()[mode];
}

// Every index variable ranges over modes of one extent, and the result's shape suits its
// format and index type.
void checkExtents(const KernelABI& abi, const Operands& operands, const std::vector<int64_t>& shape) {
  const notation::TensorVar& result = *abi.tensors[abi.result()];
  if (static_cast<int>(shape.size()) != result.order()) {
    throw ShapeError("result " + result.name + " has " + std::to_string(result.order()) + " modes, shape given has " +
                     std::to_string(shape.size()));
  }
  for (size_t v = 0; v < abi.indexVars.size(); ++v) {
    const auto& modes = abi.indexVarModes[v];
    auto [t0, m0] = modes.front();
    int64_t e0 = extentOf(abi, operands, shape, t0, m0);
    for (const auto& [t, m] : modes) {
      int64_t e = extentOf(abi, operands, shape, t, m);
      if (e != e0) {
        throw ShapeError("index '" + abi.indexVars[v] + "' ranges over mode " + std::to_string(m0) + " of " +
                         abi.tensors[t0]->name + " (extent " + std::to_string(e0) + ") and mode " + std::to_string(m) +
                         " of " + abi.tensors[t]->name + " (extent " + std::to_string(e) + ")");
      }
    }
  }
  result.format.checkShape(shape);
  if (result.indexType == DType::Int32) {
    double positions = 1;
    for (int64_t e : shape) positions *= static_cast<double>(e);
    if (positions > 2147483647.0) {
      throw SignatureError("result " + result.name +
                           ": the kernel was compiled for int32 indices, too narrow "
                           "for a result of this shape");
    }
  }
}

// A compute-only kernel's given result structure matches the kernel's result.
void checkStructure(const KernelABI& abi, const TensorStorage* structure, const std::vector<int64_t>& shape,
                    bool onHost) {
  const notation::TensorVar& result = *abi.tensors[abi.result()];
  if (!structure) throw CoiterError("a compute-only kernel needs the result structure");
  if (structure->format() != result.format || structure->shape() != shape ||
      structure->indexType() != result.indexType) {
    throw SignatureError("out: its format, shape or index dtype differs from the kernel's result");
  }
  if (!readsDeviceCopy(onHost, *structure)) naming(result, [&] { structure->checkStructure(); });
}

// The operands' extents, level scalars and arrays into the kernel's slots. (A result level's
// scalars are set before each try.)
void bindOperandSlots(const KernelABI& abi, const Operands& operands, const std::vector<int64_t>& shape, bool onHost,
                      std::vector<void*>& pointers, std::vector<int64_t>& integers) {
  const int resultIndex = abi.result();
  for (const auto& e : abi.extents) {
    if (e.mode >= 0) {
      integers[e.slot] = extentOf(abi, operands, shape, e.tensor, e.mode);
    } else if (e.tensor != resultIndex) {  // a scalar of the level (a hashed level's buckets, a derived level's size)
      integers[e.slot] = operands[e.tensor]->levelsAnywhere()[-1 - e.mode].scalar(e.scalar);
    }
  }
  for (const auto& a : abi.arrays) {
    if (a.tensor == resultIndex) continue;
    const TensorStorage& s = *operands[a.tensor];
    if (readsDeviceCopy(onHost, s)) {
      pointers[a.slot] = a.level < 0 ? s.valuesAnywhere().data() : s.levelsAnywhere()[a.level].array(a.array).data();
    } else {
      pointers[a.slot] = a.level < 0 ? s.values().data() : s.levels()[a.level].array(a.array).data();
    }
  }
}

// Positions above each result level: the product of the dense levels' extents above it, or
// -1 below the first level that is not dense (its positions are known only once assembled).
std::vector<int64_t> densePrefixPositions(const notation::TensorVar& result, const std::vector<int64_t>& levelExtents) {
  const auto& levels = result.format.levels();
  std::vector<int64_t> parentCount(levels.size() + 1, 1);
  for (size_t k = 0; k < levels.size(); ++k) {
    parentCount[k + 1] = -1;
    if (parentCount[k] < 0 || levels[k]->assembly() != LevelAssembly::Located) continue;
    if (__builtin_mul_overflow(parentCount[k], levelExtents[k], &parentCount[k + 1]))
      throw ShapeError("result " + result.name + ": level " + std::to_string(k) +
                       " (dense) would have more than 2**63 positions");
  }
  return parentCount;
}

// Runs a host kernel: whole, in two passes (a result assembled so), or (a kernel that
// assembles by rows, on several threads) in chunks of rows. Clears `countsPerParent` of the chunked level, whose counts
// the chunks turn into offsets.
int32_t runOnHost(KernelEntry entry, const KernelABI& abi, const Operands& operands, const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& levelExtents, const std::vector<int64_t>& parentCount,
                  std::vector<void*>& pointers, std::vector<int64_t>& integers, std::vector<bool>& countsPerParent) {
  if (abi.twoPass.enabled) {
    return runTwoPassesOnHost(entry, abi, parentCount[abi.twoPass.appendLevel], pointers, integers);
  }
  if (!abi.chunks.enabled) return entry(pointers.data(), integers.data());
  // The kernel computes the rows its caller asks for: all of them, or chunks in parallel.
  const ChunkedAssembly& plan = abi.chunks;
  auto var = std::find(abi.indexVars.begin(), abi.indexVars.end(), plan.indexVar);
  auto [t, m] = abi.indexVarModes[var - abi.indexVars.begin()].front();
  int64_t rows = extentOf(abi, operands, shape, t, m);
  integers[plan.beginSlot] = 0;
  integers[plan.endSlot] = rows;
  int threads = getNumThreads();
  // On one thread the kernel appends straight into the result (chunks would add a copy).
  if (threads <= 1 || rows <= 1) return entry(pointers.data(), integers.data());
  int32_t status = runChunks(entry, abi, operands, rows, threads, levelExtents, pointers, integers);
  countsPerParent[plan.appendLevel] = false;
  return status;
}

// Raises the error a kernel's status (or its coordinate flag) reports.
void raiseForStatus(int32_t status, int64_t violations, const KernelABI& abi, const Operands& operands) {
  if (violations != 0) reportInvalidCoordinate(abi, operands);
  if (status == ir::kOk) return;
  if (status == ir::kOutOfMemory) throw std::bad_alloc();
  if (status == ir::kInterrupted) throw InterruptedError("the kernel was interrupted");
  if (status == ir::kStructureMismatch) {
    throw FormatError(
        "out: its structure is not the one these operands produce (their sparsity "
        "pattern changed); call the kernel without out= to assemble a new result");
  }
  if (status == ir::kBoundViolated) {
    throw ShapeError("an extent of the operands breaks a bound() of the kernel's schedule (see kern.concrete)");
  }
  if (status == ir::kUnorderedWorkspace) {
    throw ScheduleError(
        "precompute: the compressed workspace received its coordinates out of order (the loop "
        "over them iterates an unordered level); use a dense or hashed workspace");
  }
  throw CoiterError("kernel failed with status " + std::to_string(status));
}

// The assembled result's storage from the arrays the kernel left: per-parent counts turned
// into offsets, each level's size found, the arrays trimmed to it.
std::shared_ptr<TensorStorage> assembledResult(const notation::TensorVar& result, const std::vector<int64_t>& shape,
                                               const std::vector<int64_t>& levelExtents,
                                               const std::map<std::pair<int, std::string>, Buffer*>& resultArrays,
                                               const std::vector<bool>& countsPerParent, int inserted,
                                               const LevelStorage& insertedScalars,
                                               const std::vector<int64_t>& parentCount, KernelEntry entry) {
  const auto& levels = result.format.levels();
  std::vector<LevelStorage> storageLevels(levels.size());
  int64_t positions = 1;  // of the level above (1 above the top)
  for (size_t k = 0; k < levels.size(); ++k) {
    AssembledLevel level;
    for (auto& [key, array] : resultArrays) {
      if (key.first == static_cast<int>(k)) level.arrays[key.second] = array;
    }
    level.parentCount = positions;
    level.extent = levelExtents[k];
    level.countsPerParent = countsPerParent[k];
    if (static_cast<int>(k) == inserted) level.scalars = insertedScalars.scalars;
    level.trim = trimmed;
    positions = levels[k]->finishAssembly(level, storageLevels[k]);
  }
  Buffer values = trimmed(*resultArrays.at({-1, "vals"}), positions);
  // (For an inserted level: its fullest segment, the size the next call's tables start from.)
  int64_t entries = positions;
  if (inserted >= 0) entries = levels[inserted]->fullestSegment(storageLevels[inserted], parentCount[inserted]);
  recordResultEntries(entry, entries);
  return std::make_shared<TensorStorage>(result.format, shape, result.dtype, result.indexType, std::move(storageLevels),
                                         std::move(values));
}

}  // namespace

std::shared_ptr<TensorStorage> callKernel(const LoadedKernel& code, const KernelABI& abi, const Operands& operands,
                                          const std::vector<int64_t>& resultShape, bool resultShapeGiven,
                                          const TensorStorage* structure) {
  const KernelEntry entry = code.entry();  // null for a device kernel
  const bool onHost = code.runsOnHost();
  // Operands first: everything below reads their shapes and arrays.
  const bool anyOnDevice = checkOperands(abi, operands, onHost);
  const int resultIndex = abi.result();
  const notation::TensorVar& result = *abi.tensors[resultIndex];
  const std::vector<int64_t> shape = resultShapeGiven ? resultShape : derivedResultShape(abi, operands);
  checkExtents(abi, operands, shape);
  // A result keeping an operand's pattern takes that operand's structure, unless the caller
  // gives one (out=): checked with the operands just above (its format and index width are the
  // kernel's result's by compilation, its extents by checkExtents), so not checked again.
  if (!abi.assembles && !structure && abi.patternOperand >= 0) {
    structure = operands[abi.patternOperand].get();
  } else if (!abi.assembles) {
    checkStructure(abi, structure, shape, onHost);
  }

  std::vector<void*> pointers(abi.pointerSlots, nullptr);
  std::vector<int64_t> integers(abi.integerSlots, 0);
  bindOperandSlots(abi, operands, shape, onHost, pointers, integers);

  // Result arrays: dense levels are allocated in full and zeroed (unless the kernel stores every
  // entry), and so is an inserted level with the values under it; appended arrays start with a
  // capacity the kernel grows.
  const auto& levels = result.format.levels();
  size_t order = levels.size();
  std::vector<int64_t> levelExtents = result.format.levelExtents(shape);
  int64_t guess = 64;
  for (const auto& op : operands) guess += op->valuesAnywhere().length();
  guess = std::max(guess, lastResultEntries(entry));
  if (abi.twoPass.enabled) guess = 1;  // (sized exactly between the passes)
  const std::vector<int64_t> parentCount = densePrefixPositions(result, levelExtents);
  bool allDense = order == 0 || parentCount[order] >= 0;
  std::vector<bool> countsPerParent(order, false);  // pos holds counts (prefix-summed below)
  // An inserted result level (Format::insertsResultLevel: hashed, under dense levels only)
  // has all its positions before the kernel runs: parents times the W of its scalars, which
  // come from the given structure, or are chosen here and grown while the kernel reports a
  // full table (kTableFull). Each try allocates the result anew.
  int inserted = -1;
  for (size_t k = 0; k < order; ++k)
    if (result.format.insertsResultLevel(static_cast<int>(k))) inserted = static_cast<int>(k);
  LevelStorage insertedScalars;  // its scalars (in a LevelStorage for countPositions)
  if (inserted >= 0 && abi.assembles) {
    int64_t hint = insertEntriesHint(operands, parentCount[inserted], levelExtents[inserted], entry);
    insertedScalars.scalars = levels[inserted]->insertScalars(hint);
  } else if (inserted >= 0) {
    insertedScalars.scalars = structure->levelsAnywhere()[inserted].scalars;
  }

  int32_t status = ir::kOk;
  int64_t violations = 0;
  std::vector<Buffer> owned(abi.arrays.size());
  std::map<std::pair<int, std::string>, Buffer*> resultArrays;
  std::shared_ptr<const DeviceCopy> deviceResult;
  int64_t entriesRead = 0;  // how many threads are worth waking (runtime/parallel_runtime.hpp)
  for (const auto& op : operands) entriesRead += op->valuesAnywhere().length();
  KernelThreadsScope threadCount(entriesRead);
  InterruptWatch interrupts;  // Ctrl-C from here on stops the kernel (runtime/interrupts.hpp)
  for (;;) {
    int64_t fixedPositions = allDense ? parentCount[order] : -1;  // values allocated in full
    if (inserted >= 0) {
      fixedPositions = levels[inserted]->countPositions(insertedScalars, parentCount[inserted]);
      for (const auto& e : abi.extents)
        if (e.tensor == resultIndex && e.mode == -1 - inserted) integers[e.slot] = insertedScalars.scalar(e.scalar);
    }
    std::vector<size_t> resultBytes(abi.pointerSlots, 0);     // by pointer slot
    std::vector<int64_t> resultLengths(abi.pointerSlots, 0);  // elements allocated, by pointer slot
    // Until the kernel takes them over, result arrays are freed if a later allocation fails.
    std::vector<std::unique_ptr<void, ResultArrayDeleter>> allocated =
        allocateResultArrays(abi, structure, ResultSizes{guess, fixedPositions, inserted, parentCount}, onHost,
                             pointers, integers, resultBytes, resultLengths, countsPerParent);
    violations = 0;
    if (abi.violationSlot >= 0) pointers[abi.violationSlot] = &violations;

    for (auto& array : allocated) array.release();  // the kernel may reallocate them
    const int64_t twoPassParents = abi.twoPass.enabled ? parentCount[abi.twoPass.appendLevel] : 0;
    if (abi.twoPass.enabled) countsPerParent[abi.twoPass.appendLevel] = false;  // offsets after the counting pass
    status =
        onHost ? runOnHost(entry, abi, operands, shape, levelExtents, parentCount, pointers, integers, countsPerParent)
               : runOnDevice(code, abi, operands, structure, pointers, integers, resultBytes, twoPassParents,
                             anyOnDevice, deviceResult);
    // From here on the result arrays belong to Buffers (freed with them), whatever happens.
    resultArrays = adoptResultArrays(abi, pointers, integers, resultLengths, owned);
    if (status != ir::kTableFull || violations != 0 || inserted < 0) break;
    insertedScalars.scalars = levels[inserted]->largerInsertScalars(insertedScalars.scalars);
  }
  raiseForStatus(status, violations, abi, operands);
  std::shared_ptr<TensorStorage> storage;
  if (!abi.assembles) {
    // A result keeping an operand's pattern gets copies of the operand's index arrays on the
    // host (SciPy's results own theirs; the operand's may be a user's NumPy memory), and
    // shares its device copy where it stays on the GPU (device copies are never written).
    std::vector<LevelStorage> levels = structure->levelsAnywhere();
    if (abi.patternOperand >= 0 && !(deviceResult && structure->deviceCopy())) {
      levels = structure->levels();
      for (auto& level : levels)
        for (auto& [name, array] : level.arrays) array = array.copy();
    }
    storage = std::make_shared<TensorStorage>(result.format, shape, result.dtype, result.indexType, std::move(levels),
                                              *resultArrays.at({-1, "vals"}));
  } else {
    if (deviceResult && !allDense && !abi.twoPass.enabled) {
      throw CoiterError("a device kernel assembled a sparse result in one pass (lowering refuses that on a GPU)");
    }
    storage = assembledResult(result, shape, levelExtents, resultArrays, countsPerParent, inserted, insertedScalars,
                              parentCount, entry);
  }
  storage->markValid();
  if (deviceResult) storage->attachDevice(deviceResult, /*hostCurrent=*/false);
  return storage;
}

}  // namespace coiter
