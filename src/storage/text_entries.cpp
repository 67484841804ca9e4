#include "storage/text_entries.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "fast_float/fast_float.h"
#include "storage/entry_sort.hpp"
#include "storage/plain_numbers.hpp"

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

// The 8 bytes at s as a little-endian word: the first byte is the lowest.
uint64_t loadWord(const char* s) {
  uint64_t word;
  std::memcpy(&word, s, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  word = __builtin_bswap64(word);
#endif
  return word;
}

// How many of the 8 bytes at s are ASCII digits before the first that is not (8: all are).
int leadingDigits(const char* s) {
  const uint64_t word = loadWord(s);
  // Per byte, without carries between bytes: the high nibble differs from 3, or the low one
  // is above 9 (adding 6 carries it into the high nibble). Nonzero exactly for a non-digit.
  const uint64_t high = (word & 0xf0f0f0f0f0f0f0f0ULL) ^ 0x3030303030303030ULL;
  const uint64_t low = ((word & 0x0f0f0f0f0f0f0f0fULL) + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL;
  const uint64_t other = high | low;
  // The top bit of each nonzero byte (exact: the 7-bit sums cannot carry into the next byte).
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  const uint64_t nonzero = (((other & kLow7) + kLow7) | other) & ~kLow7;
  return nonzero == 0 ? 8 : __builtin_ctzll(nonzero) / 8;
}

// The value of the count (0 to 8) ASCII digits at s, 8 bytes readable there: the digits are
// shifted to the top of a word, zeros before them, and combined in pairs, fours and eights
// with three multiplies (as fast_float parses 8 digits).
uint64_t digitsValue(const char* s, int count) {
  if (count == 0) return 0;
  // Subtracting '0' from each byte borrows only out of bytes past the digits.
  uint64_t word = (loadWord(s) - 0x3030303030303030ULL) << (8 * (8 - count));
  word = word * 10 + (word >> 8);  // each even byte: the value of a digit pair
  constexpr uint64_t kMask = 0x000000ff000000ffULL;
  constexpr uint64_t kMul1 = 100 + (1000000ULL << 32);
  constexpr uint64_t kMul2 = 1 + (10000ULL << 32);
  return (((word & kMask) * kMul1) + (((word >> 16) & kMask) * kMul2)) >> 32;
}

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
  bool more = true;    // digits may follow
  if (end - s >= 8) {  // the first (up to) 8 digits at once: coordinates have no more
    const int count = leadingDigits(s);
    magnitude = digitsValue(s, count);
    s += count;
    more = count == 8;
  }
  if (more)  // one at a time: past the first 8, or within 8 bytes of the end
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
// A plain decimal goes the fast path (plain_numbers.hpp) where enough text follows, anything
// else to fast_float (third_party/), which rounds correctly, as std::from_chars and strtod do,
// so the value is the same double; libstdc++'s from_chars runs the same algorithm, but out of
// line, and the reals are most of a file's text. Out of range, fast_float rounds to infinity
// or to a (sub)normal or zero, as strtod and NumPy do.
const char* parseReal(const char* s, const char* end, bool nearest, uint64_t& out) {
  if (end - s >= kPlainNumberSlack)
    if (const char* stop = parsePlainDecimal(s, nearest, out)) return stop;
  // fast_float takes a "-" of its own (and no sign after it), but no "+".
  if (*s == '+' && (++s == end || *s == '+' || *s == '-')) return nullptr;
  double value = 0;
  auto [stop, error] = fast_float::from_chars(s, end, value, fast_float::chars_format::general);
  if (error != std::errc() && error != std::errc::result_out_of_range) return nullptr;
  // fast_float reads "nan(chars)", which is not in the syntax; no number of it ends in ")".
  if (stop[-1] == ')') return nullptr;
  std::memcpy(&out, &value, sizeof value);
  return stop;
}

// `nearest`: the thread rounds to nearest (what the fast path of reals needs).
const char* parseField(const char* s, const char* end, TextField field, bool nearest, uint64_t& out) {
  if (field == TextField::Float64) return parseReal(s, end, nearest, out);
  return parseInteger(s, end, field != TextField::UInt64, out);
}

// Moves past the line end at p ("\r\n" is one).
const char* pastLineEnd(const char* p, const char* end) {
  return *p == '\r' && p + 1 < end && p[1] == '\n' ? p + 2 : p + 1;
}

// Line ends in [p, end): "\n" and "\r" each count, so a "\r\n" counts twice (a bound only).
// A pass at nearly memory speed: 16 bytes at a time where SSE2 is (every x86-64), the
// matches summed per byte lane and the lanes added up every 255 steps, before one overflows;
// elsewhere 8 bytes at a time in a word.
int64_t lineEndBound(const char* p, const char* end) {
  int64_t count = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i carriageReturn = _mm_set1_epi8('\r');
  while (end - p >= 16) {
    __m128i lanes = _mm_setzero_si128();
    for (int step = 0; step < 255 && end - p >= 16; ++step, p += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // A match is -1 in its lane: subtracting it counts one.
      lanes = _mm_sub_epi8(lanes, _mm_or_si128(_mm_cmpeq_epi8(bytes, newline), _mm_cmpeq_epi8(bytes, carriageReturn)));
    }
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());  // two 64-bit sums of 8 lanes
    count += _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
  }
#else
  // Eight bytes at a time in a word: the top bit of each byte that equals b, exactly (no
  // false positives from borrows: a zero byte of word ^ b's pattern has no bit set below its top).
  const auto matchingBytes = [](uint64_t word, unsigned char b) {
    constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
    const uint64_t x = word ^ (0x0101010101010101ULL * b);
    return ~(((x & kLow7) + kLow7) | x | kLow7);
  };
  for (; end - p >= 8; p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    // One per matching byte in each byte's low bit; the multiply sums the bytes into the top one.
    const uint64_t ones = (matchingBytes(word, '\n') | matchingBytes(word, '\r')) >> 7;
    count += static_cast<int64_t>((ones * 0x0101010101010101ULL) >> 56);
  }
#endif
  for (; p < end; ++p) count += (*p == '\n') | (*p == '\r');
  return count;
}

// What starts the line at s (s < end), as the first pass of a bucketed parse reads it.
enum class LineStart { Empty, Value, Other };

// An empty line (s at a line end; the "\n" of a "\r\n" is one), or digits, whose value goes to
// `value` (8 at a time while 8 bytes are left), or anything else: a comment, whitespace, a
// sign, more than 19 digits (which may not fit a uint64). The parse's second pass reads the
// same digits as the same value.
LineStart readLineStart(const char* s, const char* end, uint64_t& value) {
  if (static_cast<unsigned>(static_cast<unsigned char>(*s) - '0') >= 10)
    return *s == '\n' || *s == '\r' ? LineStart::Empty : LineStart::Other;
  value = 0;
  int digits = 0;
  if (end - s >= 8) {
    digits = leadingDigits(s);
    value = digitsValue(s, digits);
  }
  if (digits == 8 || end - s < 8) {  // more digits, or near the end: one at a time
    constexpr int kMaxDigits = 19;   // below 2**64 whatever the digits
    while (s + digits < end && static_cast<unsigned>(static_cast<unsigned char>(s[digits]) - '0') < 10) {
      if (digits == kMaxDigits) return LineStart::Other;
      value = 10 * value + (s[digits++] - '0');
    }
  }
  return LineStart::Value;
}

// Whether the first `lines` lines with a value from p on (before end) start with values in
// ascending order; `first` and `last` get the first and last of them (none: unchanged).
bool leadingValuesAscend(const char* p, const char* end, int lines, uint64_t& first, uint64_t& last) {
  bool any = false;
  for (int line = 0; line < lines && p < end; ++line) {
    uint64_t value = 0;
    const LineStart start = readLineStart(p, end, value);
    if (start == LineStart::Other || (start == LineStart::Value && any && value < last)) return false;
    if (start == LineStart::Value) {
      if (!any) first = value;
      last = value;
      any = true;
    }
    while (p < end && *p != '\n' && *p != '\r') ++p;
    if (p < end) ++p;
  }
  return true;
}

// The first pass of a bucketed parse over the whole lines [p, end): adds each line's entry to
// the count of its coarse bucket (counts[(first field - base) >> shift]). Returns false at the
// first line it cannot place: one that starts with neither a line end (an empty line, which
// holds no entry) nor the digits of a value in [base, base + extent). Line ends are found 16
// bytes at a time where SSE2 is, as in lineEndBound. On a 10 M-line shuffled .mtx at one
// thread it takes about 0.07 s against lineEndBound's 0.02 (listing each 64 bytes' line ends
// before placing their lines, to spare the mispredicted loop exits, measured the same): most
// of it is the work of reading a number per line, about 20 cycles.
bool countLineBuckets(const char* p, const char* end, uint64_t base, uint64_t extent, int shift, int64_t* counts) {
  // The line starting at s (s < end).
  const auto place = [&](const char* s) {
    uint64_t value = 0;
    const LineStart start = readLineStart(s, end, value);
    if (start != LineStart::Value) return start == LineStart::Empty;
    const uint64_t key = value - base;  // a value below the base wraps past the extent
    if (key >= extent) return false;
    ++counts[key >> shift];
    return true;
  };
  if (p == end) return true;
  if (!place(p)) return false;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i carriageReturn = _mm_set1_epi8('\r');
  for (; end - p >= 16; p += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    auto ends = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(bytes, newline), _mm_cmpeq_epi8(bytes, carriageReturn))));
    for (; ends != 0; ends &= ends - 1) {
      const char* next = p + __builtin_ctz(ends) + 1;
      if (next < end && !place(next)) return false;
    }
  }
#endif
  for (; p < end; ++p)
    if ((*p == '\n' || *p == '\r') && p + 1 < end && !place(p + 1)) return false;
  return true;
}

// Where the entries of a chunk go, in text order: one slot after another.
class TextOrderSlots {
 public:
  TextOrderSlots(int64_t first, int64_t bound) : next_(first), end_(first + bound) {}
  // The slot of the entry whose first field is being parsed (its value unused).
  int64_t at(uint64_t) const {
    if (next_ == end_) throw std::logic_error("text entries: more lines than line ends counted");
    return next_;
  }
  // The entry at at()'s slot is whole.
  void commit() {
    ++next_;
    ++count_;
  }
  int64_t count() const { return count_; }

 private:
  int64_t next_, end_, count_ = 0;
};

// Where the entries of a chunk go when bucketed: after the chunk's entries so far of their
// first field's coarse bucket (the chunk's own slots there, counted by the first pass).
class BucketSlots {
 public:
  BucketSlots(int64_t* next, const int64_t* end, uint64_t base, uint64_t extent, int shift)
      : next_(next), end_(end), base_(base), extent_(extent), shift_(shift) {}
  int64_t at(uint64_t first) {
    const uint64_t key = first - base_;
    if (key >= extent_) throw std::logic_error("text entries: a first field outside the buckets counted");
    bucket_ = static_cast<int64_t>(key >> shift_);
    if (next_[bucket_] == end_[bucket_]) throw std::logic_error("text entries: more lines than the buckets counted");
    return next_[bucket_];
  }
  void commit() {
    ++next_[bucket_];
    ++count_;
  }
  int64_t count() const { return count_; }

 private:
  int64_t* next_;
  const int64_t* end_;
  uint64_t base_, extent_;
  int shift_;
  int64_t bucket_ = 0, count_ = 0;
};

// Stores a parsed word in slot `slot` of its column's array, as the column's type, its base
// subtracted, and takes a signed integer's value into the column's extremes.
[[gnu::always_inline]] inline void storeField(const TextColumn& column, void* array, int64_t slot, uint64_t word,
                                              int64_t& minimum, int64_t& maximum) {
  if (column.type == TextField::Float64 || column.type == TextField::UInt64) {
    static_cast<uint64_t*>(array)[slot] = word;
    return;
  }
  const auto value = static_cast<int64_t>(word);
  minimum = std::min(minimum, value);
  maximum = std::max(maximum, value);
  // Unsigned, so that subtracting the base never overflows.
  const uint64_t stored = word - static_cast<uint64_t>(column.base);
  if (column.type == TextField::Int32)
    static_cast<int32_t*>(array)[slot] = static_cast<int32_t>(stored);
  else
    static_cast<uint64_t*>(array)[slot] = stored;
}

// Parses the line at p into its slot (slots.at(), once its first field is read) when it is
// plain, as almost every line is: its fields separated by spaces, "\n" or "\r\n" right after
// the last, each a real the fast path reads or an integer, and kPlainNumberSlack bytes after
// the start of each. Returns where the next line starts, or null: the general loop then reads
// the line again from its start (and overwrites what was stored, in the same slot). Without
// the class table, separators, comments and the end of the text to look for, a line costs
// fewer instructions and fewer branches.
template <typename Slots>
const char* parsePlainLine(const std::vector<TextColumn>& columns, const char* p, const char* end, bool nearest,
                           Slots& slots, const std::vector<void*>& out, int64_t* minima, int64_t* maxima) {
  int64_t slot = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c > 0) {  // one or more spaces before every field but the first
      if (*p != ' ') return nullptr;
      do ++p;
      while (p < end && *p == ' ');
    }
    if (end - p < kPlainNumberSlack) return nullptr;
    uint64_t word = 0;
    const TextField type = columns[c].type;
    const char* stop;
    if (type == TextField::Float64) {
      stop = parsePlainDecimal(p, nearest, word);
    } else {
      const bool isSigned = type != TextField::UInt64;
      stop = parseShortInteger(p, isSigned, word);
      if (stop == nullptr) stop = parseInteger(p, end, isSigned, word);
    }
    if (stop == nullptr) return nullptr;
    if (c == 0) slot = slots.at(word);
    storeField(columns[c], out[c], slot, word, minima[c], maxima[c]);
    p = stop;
  }
  // Within the slack of the last field: the line end (a lone "\r" is left to the general loop).
  if (*p == '\n') return p + 1;
  if (*p == '\r' && p[1] == '\n') return p + 2;
  return nullptr;
}

}  // namespace

TextEntries::TextEntries(const char* text, size_t size, std::vector<TextColumn> columns, char comment,
                         int64_t skipLines, int threads, int64_t bucketExtent)
    : columns_(std::move(columns)), threads_(std::max(1, threads)) {
  if (columns_.empty()) throw std::invalid_argument("text entries: a line has at least one field");
  if (bucketExtent > 0 && (columns_[0].type == TextField::Int32 || columns_[0].type == TextField::Int64)) {
    bucketExtent_ = bucketExtent;
    bucketShift_ = coarseBucketShift(bucketExtent);
  }
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
  for (size_t k = 0; k < chunkCount; ++k) {
    chunks_[k].begin = bounds[k];
    chunks_[k].end = bounds[k + 1];
  }
  if (bucketExtent_ > 0 && looksInOrder()) bucketExtent_ = 0;
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
  for (size_t k = 0; k < chunkCount; ++k) countLines(chunks_[k]);
  if (bucketExtent_ > 0 &&
      std::all_of(chunks_.begin(), chunks_.end(), [](const Chunk& chunk) { return chunk.placed; })) {
    layOutBuckets();
    return;
  }
  if (bucketExtent_ > 0) {  // a line the first pass could not place: the lines are counted again
    bucketExtent_ = 0;
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
    for (size_t k = 0; k < chunkCount; ++k) countLines(chunks_[k]);
  }
  for (Chunk& chunk : chunks_) {
    chunk.firstSlot = capacity_;
    capacity_ += chunk.bound;
  }
}

// Whether the text seems to be in order by its first field already (a matrix written row by
// row), so that laying it out in buckets would leave it as it is: the first pass would cost
// more than counting line ends (about 0.05 s per 10 M lines at one thread) for nothing. The
// first kSampleLines lines of each chunk ascend, and each chunk's first after the chunk
// before's last; a text in random order fails at once. A wrong guess costs only the sort's
// scatter, as without buckets.
bool TextEntries::looksInOrder() const {
  constexpr int kSampleLines = 32;
  uint64_t previous = 0;
  for (const Chunk& chunk : chunks_) {
    uint64_t first = previous, last = previous;
    if (!leadingValuesAscend(chunk.begin, chunk.end, kSampleLines, first, last) || first < previous) return false;
    previous = last;
  }
  return true;
}

// The first pass over a chunk: its line ends (a bound on its entries), or, bucketed, its lines
// of each coarse bucket.
void TextEntries::countLines(Chunk& chunk) {
  if (bucketExtent_ > 0) {
    chunk.bucketNext.assign(coarseBucketCount(bucketExtent_), 0);
    chunk.placed = countLineBuckets(chunk.begin, chunk.end, static_cast<uint64_t>(columns_[0].base),
                                    static_cast<uint64_t>(bucketExtent_), bucketShift_, chunk.bucketNext.data());
    return;
  }
  // Every chunk but the last ends in a line end; the last may end in a line without one.
  const bool openLast = chunk.end > chunk.begin && classes_[static_cast<unsigned char>(chunk.end[-1])] != kLineEnd;
  chunk.bound = lineEndBound(chunk.begin, chunk.end) + (openLast ? 1 : 0);
}

// From the first pass's counts: bucket c's slots, and within them each chunk's, in chunk order
// (so that the layout is the one a stable scatter of the entries in text order gives).
void TextEntries::layOutBuckets() {
  const int64_t bucketCount = coarseBucketCount(bucketExtent_);
  bucketStarts_.assign(bucketCount + 1, 0);
  int64_t slot = 0;
  for (int64_t c = 0; c < bucketCount; ++c) {
    bucketStarts_[c] = slot;
    for (Chunk& chunk : chunks_) {
      if (c == 0) chunk.bucketEnd.resize(bucketCount);
      const int64_t lines = chunk.bucketNext[c];
      chunk.bucketNext[c] = slot;
      slot += lines;
      chunk.bucketEnd[c] = slot;
      chunk.bound += lines;
    }
  }
  bucketStarts_[bucketCount] = slot;
  capacity_ = slot;
}

void TextEntries::parse(const std::vector<void*>& out) {
  std::exception_ptr failure;
  const int64_t chunkCount = static_cast<int64_t>(chunks_.size());
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
  for (int64_t k = 0; k < chunkCount; ++k) {
    try {
      Chunk& chunk = chunks_[k];
      if (bucketExtent_ > 0)
        parseChunk(chunk,
                   BucketSlots(chunk.bucketNext.data(), chunk.bucketEnd.data(), static_cast<uint64_t>(columns_[0].base),
                               static_cast<uint64_t>(bucketExtent_), bucketShift_),
                   out);
      else
        parseChunk(chunk, TextOrderSlots(chunk.firstSlot, chunk.bound), out);
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
    // Lines that held no entry left slots empty before this chunk's: close the gap. (Buckets
    // have none: the first pass counted entries, not line ends.)
    if (bucketExtent_ == 0 && chunk.firstSlot != count_ && chunk.count > 0) {
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

template <typename Slots>
void TextEntries::parseChunk(Chunk& chunk, Slots slots, const std::vector<void*>& out) const {
  const size_t width = columns_.size();
  std::vector<int64_t> minima(width, std::numeric_limits<int64_t>::max());
  std::vector<int64_t> maxima(width, std::numeric_limits<int64_t>::min());
  // The rounding mode is the thread's, the same for the whole chunk: asked once.
  const bool nearest = fast_float::detail::rounds_to_nearest();
  const char* p = chunk.begin;
  const char* end = chunk.end;
  int64_t line = 0;
  while (p < end) {
    if (const char* next = parsePlainLine(columns_, p, end, nearest, slots, out, minima.data(), maxima.data())) {
      p = next;
      slots.commit();
      ++line;
      continue;
    }
    const char* lineStart = p;
    size_t found = 0;
    int64_t slot = 0;
    bool parsed = true;
    while (true) {
      while (p < end && classes_[static_cast<unsigned char>(*p)] == kSeparator) ++p;
      if (p == end || classes_[static_cast<unsigned char>(*p)] != kOrdinary) break;
      uint64_t word = 0;
      const char* stop = found < width ? parseField(p, end, columns_[found].type, nearest, word) : nullptr;
      // The number must be the whole token: what follows ends it (or the text ends).
      if (stop == nullptr || (stop < end && classes_[static_cast<unsigned char>(*stop)] == kOrdinary)) {
        parsed = false;
        break;
      }
      // The slot is this line's own (the first pass counted it), so a malformed line's fields
      // are written there too, and left behind as the count stops before them.
      if (found == 0) slot = slots.at(word);
      storeField(columns_[found], out[found], slot, word, minima[found], maxima[found]);
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
    if (found != 0) slots.commit();
    if (p < end) {
      p = pastLineEnd(p, end);
      ++line;
    }
  }
  chunk.count = slots.count();
  chunk.lineEnds = line;
  chunk.minima = std::move(minima);
  chunk.maxima = std::move(maxima);
}

}  // namespace coiter
