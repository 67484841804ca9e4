// Parsing the entry lines of a text tensor file (the body of a Matrix Market or FROSTT file):
// one entry per line, its fields separated by whitespace, text from a comment character on
// ignored, blank lines skipped. The text is split into chunks at line ends and the chunks are
// parsed in parallel, each into its own rows; the rows are then copied column by column into
// the caller's arrays.
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

// How a field is parsed; each is stored as one 8-byte word.
enum class TextField { Int64, UInt64, Float64 };

class TextEntries {
 public:
  // Parses `size` bytes at `text` (`comment` starts a comment). The first `skipLines` lines are not data (a header) and
  // are skipped unread. `threads` bounds the chunks parsed at once.
  TextEntries(const char* text, size_t size, std::vector<TextField> fields, char comment, int64_t skipLines,
              int threads);

  // Entries (data lines) parsed; when a line is malformed, those before it.
  int64_t count() const { return count_; }
  // Line ends in the text ("\r\n" counts once): the number of the line after it, less one.
  int64_t lineEnds() const { return lineEnds_; }
  // 1-based number (in the text) of the first malformed line, 0 when every line parsed.
  int64_t badLine() const { return badLine_; }
  // That line's text, without its line end.
  const std::string& badText() const { return badText_; }
  // Copies the fields of every entry, in order, into `out`, one array per field of count()
  // words of the field's type (int64_t, uint64_t or double), in one pass over the rows.
  void copyColumns(const std::vector<void*>& out) const;

 private:
  struct Chunk {
    std::vector<uint64_t> words;  // row-major: fields_.size() words per entry
    int64_t lineEnds = 0;         // up to the malformed line, if any
    int64_t badLine = 0;          // 1-based within the chunk, 0 when none
    std::string badText;
  };
  void parseChunk(const char* begin, const char* end, Chunk& chunk) const;

  std::vector<TextField> fields_;
  unsigned char classes_[256];  // what each byte is: see CharClass in text_entries.cpp
  int threads_;
  std::vector<Chunk> chunks_;
  std::vector<int64_t> firstEntry_;  // per chunk: the number of entries before it
  int64_t count_ = 0;
  int64_t lineEnds_ = 0;
  int64_t badLine_ = 0;
  std::string badText_;
};

}  // namespace coiter
