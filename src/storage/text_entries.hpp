// Parsing the entry lines of a text tensor file (the body of a Matrix Market or FROSTT file):
// one entry per line, its fields separated by whitespace, text from a comment character on
// ignored, blank lines skipped. The text is split into chunks at line ends; a first parallel
// pass counts each chunk's line ends (a bound on its entries), which gives every chunk its
// own slots in the caller's columns, and a second parses the chunks in parallel straight into
// those slots, at the columns' final types. Only when lines hold no entry (comments, blank
// lines, "\r\n" counted twice) are the chunks moved down to close the gaps.
//
// Bucketed (a first field's extent given, as a matrix's row count): the first pass reads each
// line's first field instead and counts the lines of each coarse bucket of it, per chunk (the
// buckets of the entry sort's first pass, storage/entry_sort.hpp); the second then writes each
// entry straight into its bucket, after those of the chunks before, so that the columns hold
// the entries as the sort's stable scatter would lay them out, and the sort skips that scatter
// and the second set of columns it fills. Where a line starts with neither a digit nor a line
// end (a comment, whitespace, a sign) or its first field is outside the extent, the first pass
// cannot tell where it goes: the parse then lays the entries out in text order, as it does
// a text whose first lines of every chunk are in order already (looksInOrder).
//
// The accepted syntax is the one coiter's Python readers check a line against when they name
// a malformed line (python/coiter/io/text_table.py): integers are [+-]?digits within the
// column's range, reals are [+-]? then a decimal number, inf, infinity or nan (any case).
// Lines end at "\n", "\r\n" or "\r" (Python's universal newlines), and a field separator is any
// character Python's str.split() splits at (latin-1: ASCII whitespace, \x1c-\x1f, \x85, \xa0).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace coiter {

// How a field is parsed and stored: Int32 parses an int64 and stores it narrowed (the
// caller checks the extremes to know it fits), the others store what they parse.
enum class TextField { Int32, Int64, UInt64, Float64 };

struct TextColumn {
  TextField type;
  int64_t base = 0;  // subtracted from a signed integer before it is stored (1: 1-based to 0-based)
};

class TextEntries {
 public:
  // Prepares to parse `size` bytes at `text` (`comment` starts a comment): cuts them into
  // chunks and counts their line ends. The first `skipLines` lines are not data (a header)
  // and are skipped unread. `threads` bounds the chunks worked on at once. bucketExtent > 0
  // (column 0 a signed integer): lay the entries out in the coarse buckets of column 0's stored
  // values, which lie in [0, bucketExtent) (see above).
  TextEntries(const char* text, size_t size, std::vector<TextColumn> columns, char comment, int64_t skipLines,
              int threads, int64_t bucketExtent = 0);

  // Slots each array passed to parse() must have: a bound on the entries.
  int64_t capacity() const { return capacity_; }
  // Parses the entries into `out`, one array per column of capacity() elements of the
  // column's type (int32_t, int64_t, uint64_t or double); entry e goes to slot e, or in bucket
  // order (bucketStarts()).
  void parse(const std::vector<void*>& out);
  // Where each coarse bucket of column 0 starts in the columns (coarseBucketCount(bucketExtent)
  // + 1 slots, the last the entry count) when the entries are laid out in buckets; empty when
  // they are in text order. Known before parse(); the layout holds once no line is malformed.
  const std::vector<int64_t>& bucketStarts() const { return bucketStarts_; }

  // Entries (data lines) parsed; when a line is malformed, those before it.
  int64_t count() const { return count_; }
  // The least and greatest value (as parsed, before the base is subtracted) of the signed
  // integer column c over the count() entries; 0 and -1 when there are none.
  int64_t minimum(size_t c) const { return minima_[c]; }
  int64_t maximum(size_t c) const { return maxima_[c]; }
  // Line ends in the text ("\r\n" counts once): the number of the line after it, less one.
  int64_t lineEnds() const { return lineEnds_; }
  // 1-based number (in the text) of the first malformed line, 0 when every line parsed.
  int64_t badLine() const { return badLine_; }
  // That line's text, without its line end.
  const std::string& badText() const { return badText_; }

 private:
  struct Chunk {
    const char* begin;
    const char* end;
    int64_t firstSlot = 0;  // where its entries go: the bounds of the chunks before it
    int64_t bound = 0;      // its line ends, and one for a last line without one
    // Bucketed: its lines of each coarse bucket (the first pass), then where its next entry of
    // each goes and where its slots there end.
    std::vector<int64_t> bucketNext, bucketEnd;
    bool placed = true;    // the first pass placed every line in a bucket
    int64_t count = 0;     // entries parsed
    int64_t lineEnds = 0;  // up to the malformed line, if any
    int64_t badLine = 0;   // 1-based within the chunk, 0 when none
    std::string badText;
    std::vector<int64_t> minima, maxima;  // per column (signed integers only)
  };
  template <typename Slots>
  void parseChunk(Chunk& chunk, Slots slots, const std::vector<void*>& out) const;
  bool looksInOrder() const;
  void countLines(Chunk& chunk);
  void layOutBuckets();

  std::vector<TextColumn> columns_;
  unsigned char classes_[256];  // what each byte is: see CharClass in text_entries.cpp
  int threads_;
  int64_t skipped_ = 0;  // header lines skipped
  std::vector<Chunk> chunks_;
  int64_t bucketExtent_ = 0;  // 0: in text order
  int bucketShift_ = 0;
  std::vector<int64_t> bucketStarts_;
  int64_t capacity_ = 0;
  int64_t count_ = 0;
  std::vector<int64_t> minima_, maxima_;
  int64_t lineEnds_ = 0;
  int64_t badLine_ = 0;
  std::string badText_;
};

}  // namespace coiter
