#include "storage/text_entries.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>

namespace coiter {

namespace {

enum CharClass : unsigned char { kOrdinary, kSeparator, kLineEnd, kComment };

// Below this many bytes a chunk is not worth a thread of its own.
constexpr size_t kMinChunkBytes = 64 * 1024;
// Chunks per thread, taken as threads come free: a thread slowed down (a busy machine) holds
// up the others by one small chunk, not by half the text.
constexpr size_t kChunksPerThread = 8;

// Each parser reads a number starting at s and returns the end of what it read, or null when
// no number starts there; the caller checks that the token ends there.

// [+-]?digits within the range of int64 (isSigned) or uint64, as Python's int() and a range
// check take it: "-0" is a uint64.
const char* parseInteger(const char* s, const char* end, bool isSigned, uint64_t& out) {
  bool negative = false;
  if (*s == '+' || *s == '-') {
    negative = *s == '-';
    ++s;
  }
  const char* digits = s;
  uint64_t magnitude = 0;
  while (s < end && static_cast<unsigned>(*s - '0') < 10) magnitude = 10 * magnitude + (*s++ - '0');
  if (s == digits) return nullptr;
  if (s - digits > 19) {  // may have overflowed: from_chars knows (leading zeros included)
    auto [stop, error] = std::from_chars(digits, s, magnitude);
    if (error != std::errc() || stop != s) return nullptr;
  }
  constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!isSigned) {
    if (negative && magnitude != 0) return nullptr;
    out = magnitude;
  } else if (negative) {
    if (magnitude > kInt64Max + 1) return nullptr;
    out = 0 - magnitude;  // two's complement of the magnitude: the int64 value's bits
  } else {
    if (magnitude > kInt64Max) return nullptr;
    out = magnitude;
  }
  return s;
}

// [+-]? then a decimal number (optionally with an exponent), inf, infinity or nan, any case.
const char* parseReal(const char* s, const char* end, uint64_t& out) {
  bool negative = false;
  if (*s == '+' || *s == '-') {
    negative = *s == '-';
    ++s;
  }
  // from_chars takes a "-" of its own: not after a sign.
  if (s == end || *s == '+' || *s == '-') return nullptr;
  double value = 0;
  auto [stop, error] = std::from_chars(s, end, value, std::chars_format::general);
  if (stop == s) return nullptr;
  if (error == std::errc::result_out_of_range) {
    // from_chars leaves the value alone; strtod rounds to infinity or a (sub)normal as NumPy does.
    value = std::strtod(std::string(s, stop).c_str(), nullptr);
  }
  // from_chars reads "nan(chars)", which is not in the syntax.
  if (value != value && std::memchr(s, '(', stop - s) != nullptr) return nullptr;
  if (negative) value = -value;
  std::memcpy(&out, &value, sizeof value);
  return stop;
}

const char* parseField(const char* s, const char* end, TextField field, uint64_t& out) {
  if (field == TextField::Float64) return parseReal(s, end, out);
  return parseInteger(s, end, field != TextField::UInt64, out);
}

// Moves past the line end at p ("\r\n" is one).
const char* pastLineEnd(const char* p, const char* end) {
  return *p == '\r' && p + 1 < end && p[1] == '\n' ? p + 2 : p + 1;
}

// The top bit of each byte of `word` that equals `b`, the other bits clear; exact (no false
// positives from borrows): a zero byte of word ^ b's pattern has no bit set below its top.
uint64_t matchingBytes(uint64_t word, unsigned char b) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  const uint64_t x = word ^ (0x0101010101010101ULL * b);
  return ~(((x & kLow7) + kLow7) | x | kLow7);
}

// Line ends in [p, end): "\n" and "\r" each count, so a "\r\n" counts twice (a bound only).
// Eight bytes at a time: a pass at nearly memory speed.
int64_t lineEndBound(const char* p, const char* end) {
  int64_t count = 0;
  for (; end - p >= 8; p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    // One per matching byte in each byte's low bit; the multiply sums the bytes into the top one.
    const uint64_t ones = (matchingBytes(word, '\n') | matchingBytes(word, '\r')) >> 7;
    count += static_cast<int64_t>((ones * 0x0101010101010101ULL) >> 56);
  }
  for (; p < end; ++p) count += (*p == '\n') | (*p == '\r');
  return count;
}

}  // namespace

TextEntries::TextEntries(const char* text, size_t size, std::vector<TextColumn> columns, char comment,
                         int64_t skipLines, int threads)
    : columns_(std::move(columns)), threads_(std::max(1, threads)) {
  std::fill(std::begin(classes_), std::end(classes_), kOrdinary);
  // The characters Python's str.split() splits a latin-1 string at.
  for (int c : {0x09, 0x0b, 0x0c, 0x20, 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0}) classes_[c] = kSeparator;
  classes_[static_cast<unsigned char>(comment)] = kComment;
  classes_['\n'] = classes_['\r'] = kLineEnd;

  const char* p = text;
  const char* end = text + size;
  while (skipped_ < skipLines && p < end) {
    while (p < end && classes_[static_cast<unsigned char>(*p)] != kLineEnd) ++p;
    if (p == end) break;
    p = pastLineEnd(p, end);
    ++skipped_;
  }

  // Chunks end just past a "\n", so none splits a line or a "\r\n".
  size_t rest = static_cast<size_t>(end - p);
  size_t chunkCount = std::clamp<size_t>(rest / kMinChunkBytes, 1, kChunksPerThread * static_cast<size_t>(threads_));
  std::vector<const char*> bounds{p};
  for (size_t k = 1; k < chunkCount; ++k) {
    const char* target = std::max(p + rest * k / chunkCount, bounds.back());
    const void* newline = std::memchr(target, '\n', end - target);
    bounds.push_back(newline ? static_cast<const char*>(newline) + 1 : end);
  }
  bounds.push_back(end);
  chunks_.resize(chunkCount);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
  for (size_t k = 0; k < chunkCount; ++k) {
    Chunk& chunk = chunks_[k];
    chunk.begin = bounds[k];
    chunk.end = bounds[k + 1];
    // Every chunk but the last ends in a line end; the last may end in a line without one.
    const bool openLast = chunk.end > chunk.begin && classes_[static_cast<unsigned char>(chunk.end[-1])] != kLineEnd;
    chunk.bound = lineEndBound(chunk.begin, chunk.end) + (openLast ? 1 : 0);
  }
  for (Chunk& chunk : chunks_) {
    chunk.firstSlot = capacity_;
    capacity_ += chunk.bound;
  }
}

void TextEntries::parse(const std::vector<void*>& out) {
  std::exception_ptr failure;
  const int64_t chunkCount = static_cast<int64_t>(chunks_.size());
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
  for (int64_t k = 0; k < chunkCount; ++k) {
    try {
      parseChunk(chunks_[k], out);
    } catch (...) {  // out of memory: rethrown below, as no exception may leave the loop
#pragma omp critical
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);

  const size_t width = columns_.size();
  minima_.assign(width, std::numeric_limits<int64_t>::max());
  maxima_.assign(width, std::numeric_limits<int64_t>::min());
  lineEnds_ = skipped_;
  for (const Chunk& chunk : chunks_) {
    // Lines that held no entry left slots empty before this chunk's: close the gap.
    if (chunk.firstSlot != count_ && chunk.count > 0) {
      for (size_t c = 0; c < width; ++c) {
        const size_t bytes = columns_[c].type == TextField::Int32 ? 4 : 8;
        char* column = static_cast<char*>(out[c]);
        std::memmove(column + count_ * bytes, column + chunk.firstSlot * bytes, chunk.count * bytes);
      }
    }
    count_ += chunk.count;
    for (size_t c = 0; c < width && chunk.count > 0; ++c) {
      minima_[c] = std::min(minima_[c], chunk.minima[c]);
      maxima_[c] = std::max(maxima_[c], chunk.maxima[c]);
    }
    if (chunk.badLine) {
      badLine_ = lineEnds_ + chunk.badLine;
      badText_ = chunk.badText;
      break;  // what follows the malformed line is not read
    }
    lineEnds_ += chunk.lineEnds;
  }
  if (count_ == 0) {
    minima_.assign(width, 0);
    maxima_.assign(width, -1);
  }
}

void TextEntries::parseChunk(Chunk& chunk, const std::vector<void*>& out) const {
  const size_t width = columns_.size();
  std::vector<int64_t> minima(width, std::numeric_limits<int64_t>::max());
  std::vector<int64_t> maxima(width, std::numeric_limits<int64_t>::min());
  const char* p = chunk.begin;
  const char* end = chunk.end;
  int64_t slot = chunk.firstSlot;
  const int64_t lastSlot = chunk.firstSlot + chunk.bound;
  int64_t line = 0;
  while (p < end) {
    const char* lineStart = p;
    size_t found = 0;
    bool parsed = true;
    while (true) {
      while (p < end && classes_[static_cast<unsigned char>(*p)] == kSeparator) ++p;
      if (p == end || classes_[static_cast<unsigned char>(*p)] != kOrdinary) break;
      uint64_t word = 0;
      const TextField type = found < width ? columns_[found].type : TextField::Int64;
      const char* stop = found < width ? parseField(p, end, type, word) : nullptr;
      // The number must be the whole token: what follows ends it (or the text ends).
      if (stop == nullptr || (stop < end && classes_[static_cast<unsigned char>(*stop)] == kOrdinary)) {
        parsed = false;
        break;
      }
      // The slot is this line's own (the bound counts it), so a malformed line's fields
      // are written there too, and left behind as the count stops before them.
      if (type == TextField::Float64 || type == TextField::UInt64) {
        static_cast<uint64_t*>(out[found])[slot] = word;
      } else {
        const auto value = static_cast<int64_t>(word);
        minima[found] = std::min(minima[found], value);
        maxima[found] = std::max(maxima[found], value);
        // Unsigned, so that subtracting the base never overflows.
        const uint64_t stored = word - static_cast<uint64_t>(columns_[found].base);
        if (type == TextField::Int32)
          static_cast<int32_t*>(out[found])[slot] = static_cast<int32_t>(stored);
        else
          static_cast<uint64_t*>(out[found])[slot] = stored;
      }
      p = stop;
      ++found;
    }
    // The rest of the line: a comment, or (on a malformed line) everything to report.
    while (p < end && classes_[static_cast<unsigned char>(*p)] != kLineEnd) ++p;
    if (!parsed || (found != 0 && found != width)) {
      chunk.badLine = line + 1;
      chunk.badText.assign(lineStart, p);
      break;
    }
    if (found != 0) ++slot;
    if (p < end) {
      p = pastLineEnd(p, end);
      ++line;
    }
    if (slot == lastSlot && p < end) throw std::logic_error("text entries: more lines than line ends counted");
  }
  chunk.count = slot - chunk.firstSlot;
  chunk.lineEnds = line;
  chunk.minima = std::move(minima);
  chunk.maxima = std::move(maxima);
}

}  // namespace coiter
