#include "storage/text_entries.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>

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
  return parseInteger(s, end, field == TextField::Int64, out);
}

// Moves past the line end at p ("\r\n" is one).
const char* pastLineEnd(const char* p, const char* end) {
  return *p == '\r' && p + 1 < end && p[1] == '\n' ? p + 2 : p + 1;
}

}  // namespace

TextEntries::TextEntries(const char* text, size_t size, std::vector<TextField> fields, char comment, int64_t skipLines,
                         int threads)
    : fields_(std::move(fields)), threads_(std::max(1, threads)) {
  std::fill(std::begin(classes_), std::end(classes_), kOrdinary);
  // The characters Python's str.split() splits a latin-1 string at.
  for (int c : {0x09, 0x0b, 0x0c, 0x20, 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0}) classes_[c] = kSeparator;
  classes_[static_cast<unsigned char>(comment)] = kComment;
  classes_['\n'] = classes_['\r'] = kLineEnd;

  const char* p = text;
  const char* end = text + size;
  int64_t skipped = 0;
  while (skipped < skipLines && p < end) {
    while (p < end && classes_[static_cast<unsigned char>(*p)] != kLineEnd) ++p;
    if (p == end) break;
    p = pastLineEnd(p, end);
    ++skipped;
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
  std::exception_ptr failure;
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
  for (size_t k = 0; k < chunkCount; ++k) {
    try {
      parseChunk(bounds[k], bounds[k + 1], chunks_[k]);
    } catch (...) {  // out of memory: rethrown below, as no exception may leave the loop
#pragma omp critical
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);

  lineEnds_ = skipped;
  const size_t width = fields_.size();
  for (const Chunk& chunk : chunks_) {
    firstEntry_.push_back(count_);
    count_ += width ? static_cast<int64_t>(chunk.words.size() / width) : 0;
    if (chunk.badLine) {
      badLine_ = lineEnds_ + chunk.badLine;
      badText_ = chunk.badText;
      chunks_.resize(firstEntry_.size());  // what follows the malformed line is not read
      break;
    }
    lineEnds_ += chunk.lineEnds;
  }
}

void TextEntries::parseChunk(const char* p, const char* end, Chunk& chunk) const {
  const size_t width = fields_.size();
  std::vector<uint64_t>& words = chunk.words;
  // About one word per 8 bytes of text ("123 456 0.1234567\n"); grown as needed.
  words.resize(std::max<size_t>(width, static_cast<size_t>(end - p) / 8));
  size_t used = 0;
  int64_t line = 0;
  while (p < end) {
    if (used + width > words.size()) words.resize(2 * words.size());
    const char* lineStart = p;
    size_t found = 0;
    bool parsed = true;
    while (true) {
      while (p < end && classes_[static_cast<unsigned char>(*p)] == kSeparator) ++p;
      if (p == end || classes_[static_cast<unsigned char>(*p)] != kOrdinary) break;
      const char* stop = found < width ? parseField(p, end, fields_[found], words[used + found]) : nullptr;
      // The number must be the whole token: what follows ends it (or the text ends).
      if (stop == nullptr || (stop < end && classes_[static_cast<unsigned char>(*stop)] == kOrdinary)) {
        parsed = false;
        break;
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
    used += found;
    if (p < end) {
      p = pastLineEnd(p, end);
      ++line;
    }
  }
  words.resize(used);
  chunk.lineEnds = line;
}

void TextEntries::copyColumns(const std::vector<void*>& out) const {
  const size_t width = fields_.size();
  const int64_t chunkCount = static_cast<int64_t>(chunks_.size());
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
  for (int64_t k = 0; k < chunkCount; ++k) {
    const std::vector<uint64_t>& words = chunks_[k].words;
    std::vector<uint64_t*> to(width);
    for (size_t c = 0; c < width; ++c) to[c] = static_cast<uint64_t*>(out[c]) + firstEntry_[k];
    for (size_t i = 0, e = 0; i < words.size(); i += width, ++e)
      for (size_t c = 0; c < width; ++c) to[c][e] = words[i + c];
  }
}

}  // namespace coiter
