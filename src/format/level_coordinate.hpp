// How a level's coordinate derives from the tensor's mode coordinates. Most formats store
// one mode per level (Mode); blocked and diagonal formats store derived coordinates: the
// block number and the offset inside the block (BCSR), the diagonal number (DIA), the slot
// of an entry within its row (ELL).
#pragma once
#include <cstdint>
#include <string>

namespace coiter {

struct LevelCoordinate {
  enum class Kind { Mode, BlockIndex, BlockOffset, Diagonal, Slot };
  Kind kind = Kind::Mode;
  int mode = 0;        // the mode it derives from (Diagonal: the row mode)
  int64_t factor = 1;  // block size for BlockIndex/BlockOffset; Diagonal: the column mode

  static LevelCoordinate ofMode(int m) { return {Kind::Mode, m, 1}; }
  static LevelCoordinate blockIndex(int m, int64_t b) { return {Kind::BlockIndex, m, b}; }
  static LevelCoordinate blockOffset(int m, int64_t b) { return {Kind::BlockOffset, m, b}; }
  static LevelCoordinate diagonal(int row, int col) { return {Kind::Diagonal, row, col}; }
  static LevelCoordinate slot(int row) { return {Kind::Slot, row, 1}; }

  // Whether the coordinate is a function of one mode coordinate (not of the data).
  bool isModeFunction() const { return kind != Kind::Diagonal && kind != Kind::Slot; }
  // Contribution of this level's coordinate c to its mode's coordinate (0 if none).
  int64_t modeContribution(int64_t c) const {
    switch (kind) {
      case Kind::Mode:
      case Kind::BlockOffset: return c;
      case Kind::BlockIndex: return c * factor;
      default: return 0;
    }
  }
  bool operator==(const LevelCoordinate& o) const { return kind == o.kind && mode == o.mode && factor == o.factor; }
  std::string repr() const;  // "i0", "i0 / 2", "i0 % 2", "i1 - i0", "slot(i0)"
};

}  // namespace coiter
