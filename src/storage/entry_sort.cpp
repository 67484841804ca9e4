#include "storage/entry_sort.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace coiter {
namespace {

struct Bytes16 {
  char b[16];
};

// An unsigned type of N bytes: moving values only needs their size, not their type.
template <size_t N>
struct WordOfSize {
  using type = Bytes16;
};
template <>
struct WordOfSize<1> {
  using type = uint8_t;
};
template <>
struct WordOfSize<2> {
  using type = uint16_t;
};
template <>
struct WordOfSize<4> {
  using type = uint32_t;
};
template <>
struct WordOfSize<8> {
  using type = uint64_t;
};

// into += from, for values of type T moved around as Words (T may be std::complex, whose
// bytes are copied through void*).
template <typename T, typename Word>
void addAs(Word& into, const Word& from) {
  T a, b;
  std::memcpy(static_cast<void*>(&a), &into, sizeof(T));
  std::memcpy(static_cast<void*>(&b), &from, sizeof(T));
  a = addValues(a, b);
  std::memcpy(&into, static_cast<const void*>(&a), sizeof(T));
}

// Asks Linux to back the whole 2 MiB pages inside `b` (new memory, not yet touched, that is
// about to be written all over) with huge pages: a scatter's writes, spread over the whole
// column, then miss the TLB far less, and the first touch faults once per 2 MiB rather than
// per 4 KiB. It takes about a third off the sort of 10 M entries in random order. Where
// transparent huge pages are off (or elsewhere than Linux) it changes nothing.
void preferHugePages(const Buffer& b) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<uintptr_t>(b.data());
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + static_cast<uintptr_t>(b.length()) * dtypeSize(b.dtype())) & ~(kHugePage - 1);
  // Only advice: a refusal (an old kernel) leaves ordinary pages, so its result is not needed.
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)b;
#endif
}

// Calls f(static_cast<Index*>(nullptr)) with Index the C++ type of an int32/int64 width.
template <typename F>
void dispatchIndexWidth(DType width, F&& f) {
  if (width == DType::Int32) return f(static_cast<int32_t*>(nullptr));
  return f(static_cast<int64_t*>(nullptr));
}

// dst[e] = src[order[e]].
template <typename T, typename Index>
void gather(const T* src, const std::vector<Index>& order, T* dst) {
  for (size_t e = 0; e < order.size(); ++e) dst[e] = src[order[e]];
}

enum class Order { Unsorted, Sorted, SortedWithDuplicates };

// Typed pointers to key columns and values: what the sort loops read and write.
template <typename Index, typename Word>
struct EntryView {
  std::vector<Index*> keys;
  Word* values = nullptr;

  EntryView() = default;
  EntryView(const std::vector<Buffer>& keyBuffers, const Buffer& valueBuffer) {
    for (const Buffer& key : keyBuffers) keys.push_back(key.as<Index>());
    values = valueBuffer.as<Word>();
  }
  // Compares entries a and b by keys[from..].
  int compare(int64_t a, int64_t b, size_t from) const {
    for (size_t l = from; l < keys.size(); ++l)
      if (keys[l][a] != keys[l][b]) return keys[l][a] < keys[l][b] ? -1 : 1;
    return 0;
  }
  // Whether entries [lo, hi) are in order by keys[from..], and if so whether two neighbours
  // are equal (duplicates), found in the same pass.
  Order orderFrom(size_t from, int64_t lo, int64_t hi) const {
    bool equal = false;
    for (int64_t e = lo + 1; e < hi; ++e) {
      const int c = compare(e - 1, e, from);
      if (c > 0) return Order::Unsorted;
      equal |= c == 0;
    }
    return equal ? Order::SortedWithDuplicates : Order::Sorted;
  }
};

// Sorts entries lexicographically and stably, then combines duplicates. Whatever it changes
// goes to new buffers first (the input may be the caller's memory); later steps then work
// in those in place.
template <typename Index, typename Word>
class EntrySorter {
 public:
  using AddValue = void (*)(Word& into, const Word& from);

  // sum: replace each run of equal keys by one entry holding the sum of its values (added
  // with `add`, in order); otherwise only note that there are duplicates.
  EntrySorter(std::vector<Buffer>& keys, Buffer& values, bool sum, AddValue add)
      : keys_(keys), values_(values), n_(values.length()), view_(keys, values), sum_(sum), add_(add) {}

  // Sorts and combines; returns whether there were duplicates.
  bool run(int64_t extent0) {
    const Order order = view_.orderFrom(0, 0, n_);  // (no keys: every entry equals the next)
    if (order == Order::Sorted) {
      kept_ = n_;  // in order, no duplicates: the input stays as it is
    } else if (order == Order::SortedWithDuplicates) {
      // Summing duplicates writes to the columns, which may be the caller's memory.
      if (sum_) adopt(copies(keys_), values_.copy());
      combine(0, n_);
    } else if (extent0 < 0 || extent0 > 2 * n_ + 4096) {  // first key too sparse to count
      sortAll();
      combine(0, n_);
    } else {
      countingSort(extent0);
    }
    if (kept_ < n_) shrink();
    return duplicates_;
  }

 private:
  // A scatter into more buckets than this misses the caches on nearly every write.
  static constexpr int64_t kMaxScatterBuckets = 256;
  // Groups up to this long are insertion-sorted in place; longer ones through a permutation.
  static constexpr int64_t kInsertionSortMax = 32;

  // Stable counting sort by key 0, in two passes so that neither scatters over more
  // memory than the caches hold: first into coarse buckets, each a range of 2^shift key-0
  // values, then each coarse bucket, copied to scratch, into its exact buckets. Each exact
  // bucket (a row, usually short) is then sorted by the other keys, and the coarse bucket's
  // duplicates combined, while it is still in cache.
  void countingSort(int64_t extent0) {
    std::vector<Index> start(extent0 + 1, 0);
    const Index* key0 = view_.keys[0];
    for (int64_t e = 0; e < n_; ++e) ++start[key0[e] + 1];
    for (int64_t c = 0; c < extent0; ++c) start[c + 1] += start[c];
    int shift = 0;
    while ((extent0 - 1) >> shift >= kMaxScatterBuckets) ++shift;
    auto bucketStart = [&](int64_t c) { return start[std::min(c << shift, extent0)]; };

    std::vector<Buffer> sortedKeys = newKeyColumns();
    Buffer sortedValues = newColumn(values_.dtype());
    EntryView<Index, Word> sorted(sortedKeys, sortedValues);
    const int64_t coarseCount = ((extent0 - 1) >> shift) + 1;
    std::vector<Index> next(coarseCount);
    for (int64_t c = 0; c < coarseCount; ++c) next[c] = bucketStart(c);
    scatter(view_, n_, sorted, next.data(), [shift](Index k) { return k >> shift; });
    adopt(std::move(sortedKeys), sortedValues);

    EntryView<Index, Word> scratch;
    next.resize(int64_t{1} << shift);  // now the next slots of one coarse bucket's buckets
    for (int64_t c = 0; c < coarseCount; ++c) {
      const int64_t first = c << shift, last = std::min((c + 1) << shift, extent0);
      const int64_t lo = bucketStart(c), hi = bucketStart(c + 1);
      // Duplicates combined so far have freed the slots [kept_, lo): the bucket moves down
      // into them as it is scattered, so combining only has to move its own duplicates.
      const int64_t down = shift > 0 ? lo - kept_ : 0;
      if (shift > 0) {
        copyToScratch(lo, hi, scratch);
        for (int64_t k = first; k < last; ++k) next[k - first] = start[k] - down;
        scatter(scratch, hi - lo, view_, next.data(), [first](Index k) { return k - first; });
      }
      if (keys_.size() > 1)
        for (int64_t k = first; k < last; ++k) sortGroup(start[k] - down, start[k + 1] - down, 1);
      combine(lo - down, hi - down);
    }
  }

  // Moves the first `count` entries of `from` to the next free slot of their key-0 bucket
  // in `to` (next[b]: the next slot of bucket b), in one pass.
  template <typename Bucket>
  static void scatter(const EntryView<Index, Word>& from, int64_t count, const EntryView<Index, Word>& to, Index* next,
                      Bucket bucket) {
    // Two keys (a matrix) with the key count fixed at compile time: the copies unrolled.
    if (from.keys.size() == 2) return scatterKeys<2>(from, count, to, next, bucket);
    scatterKeys<0>(from, count, to, next, bucket);
  }

  // scatter() for kKeys keys (0: as many as there are), the column pointers held in locals.
  template <size_t kKeys, typename Bucket>
  static void scatterKeys(const EntryView<Index, Word>& from, int64_t count, const EntryView<Index, Word>& to,
                          Index* next, Bucket bucket) {
    const size_t keyCount = kKeys ? kKeys : from.keys.size();
    const Index* const* source = from.keys.data();
    Index* const* target = to.keys.data();
    const Word* sourceValues = from.values;
    Word* targetValues = to.values;
    const Index* key0 = source[0];
    for (int64_t e = 0; e < count; ++e) {
      const Index d = next[bucket(key0[e])]++;
      for (size_t l = 0; l < keyCount; ++l) target[l][d] = source[l][e];
      targetValues[d] = sourceValues[e];
    }
  }

  // Copies entries [lo, hi) into scratch memory, reused from one call to the next.
  void copyToScratch(int64_t lo, int64_t hi, EntryView<Index, Word>& scratch) {
    scratchKeys_.resize(keys_.size());
    scratch.keys.resize(keys_.size());
    for (size_t l = 0; l < keys_.size(); ++l) {
      scratchKeys_[l].assign(view_.keys[l] + lo, view_.keys[l] + hi);
      scratch.keys[l] = scratchKeys_[l].data();
    }
    scratchValues_.assign(view_.values + lo, view_.values + hi);
    scratch.values = scratchValues_.data();
  }

  // Sorts group [lo, hi) by keys[from..] (stable). Short groups are insertion-sorted in
  // place, which notices a sorted group as cheaply as a separate check would; for one key
  // left (the common case: columns within a row) with that key count fixed at compile time.
  void sortGroup(int64_t lo, int64_t hi, size_t from) {
    if (hi - lo > kInsertionSortMax) {
      if (view_.orderFrom(from, lo, hi) == Order::Unsorted) permuteGroup(lo, hi, from);
    } else if (from + 1 == keys_.size()) {
      insertionSort<1>(lo, hi, from);
    } else {
      insertionSort<0>(lo, hi, from);
    }
  }

  // Stable insertion sort of entries [lo, hi) by keys[from..], in place: the fastest sort
  // for the few entries of a typical row, and it needs no scratch memory. kKeysLeft: the
  // number of keys from `from` on, or 0 for all the rest.
  template <size_t kKeysLeft>
  void insertionSort(int64_t lo, int64_t hi, size_t from) {
    Index* const* keys = view_.keys.data() + from;  // keys[l]: key from + l
    Word* values = view_.values;
    const size_t count = kKeysLeft ? kKeysLeft : view_.keys.size() - from;
    held_.resize(count);
    Index* held = held_.data();
    auto greater = [&](int64_t a, int64_t b) {  // entry a > entry b
      for (size_t l = 0; l < count; ++l)
        if (keys[l][a] != keys[l][b]) return keys[l][a] > keys[l][b];
      return false;
    };
    auto greaterThanHeld = [&](int64_t a) {
      for (size_t l = 0; l < count; ++l)
        if (keys[l][a] != held[l]) return keys[l][a] > held[l];
      return false;
    };
    for (int64_t i = lo + 1; i < hi; ++i) {
      if (!greater(i - 1, i)) continue;
      for (size_t l = 0; l < count; ++l) held[l] = keys[l][i];
      const Word heldValue = values[i];
      int64_t j = i;
      do {  // shift the larger entries one slot up
        for (size_t l = 0; l < count; ++l) keys[l][j] = keys[l][j - 1];
        values[j] = values[j - 1];
        --j;
      } while (j > lo && greaterThanHeld(j - 1));
      for (size_t l = 0; l < count; ++l) keys[l][j] = held[l];
      values[j] = heldValue;
    }
  }

  // Entries [lo, hi) in stable sorted order by keys[from..]. Sorting (key, entry) pairs
  // compares without indirection in the common case of one key left to sort by.
  std::vector<Index> sortedOrder(int64_t lo, int64_t hi, size_t from) const {
    std::vector<std::pair<Index, Index>> pairs(hi - lo);
    const Index* key = view_.keys[from];
    for (int64_t e = lo; e < hi; ++e) pairs[e - lo] = {key[e], static_cast<Index>(e)};
    if (from + 1 == keys_.size()) {
      std::sort(pairs.begin(), pairs.end());
    } else {
      std::sort(pairs.begin(), pairs.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        int c = view_.compare(a.second, b.second, from + 1);
        return c != 0 ? c < 0 : a.second < b.second;
      });
    }
    std::vector<Index> order(pairs.size());
    for (size_t e = 0; e < pairs.size(); ++e) order[e] = pairs[e].second;
    return order;
  }

  // Sorts a long group [lo, hi) by keys[from..] through a permutation and scratch columns.
  void permuteGroup(int64_t lo, int64_t hi, size_t from) {
    const std::vector<Index> order = sortedOrder(lo, hi, from);
    std::vector<Index> scratch(order.size());
    for (size_t l = from; l < keys_.size(); ++l) {
      gather(view_.keys[l], order, scratch.data());
      std::copy(scratch.begin(), scratch.end(), view_.keys[l] + lo);
    }
    std::vector<Word> valueScratch(order.size());
    gather(view_.values, order, valueScratch.data());
    std::copy(valueScratch.begin(), valueScratch.end(), view_.values + lo);
  }

  // Sorts all entries by comparison, into new buffers: for a first key too sparse to count.
  void sortAll() {
    const std::vector<Index> order = sortedOrder(0, n_, 0);
    std::vector<Buffer> sorted = newKeyColumns();
    Buffer sortedValues = newColumn(values_.dtype());
    for (size_t l = 0; l < keys_.size(); ++l) gather(view_.keys[l], order, sorted[l].as<Index>());
    gather(view_.values, order, sortedValues.as<Word>());
    adopt(std::move(sorted), sortedValues);
  }

  // Combines the sorted entries [lo, hi) with equal keys into the kept entries [0, kept_),
  // moving each survivor down to slot kept_. Ranges come in order; entries before the first
  // duplicate stay where they are.
  void combine(int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; ++e) {
      if (kept_ > 0 && view_.compare(kept_ - 1, e, 0) == 0) {
        duplicates_ = true;
        if (sum_) {
          add_(view_.values[kept_ - 1], view_.values[e]);
          continue;
        }
      }
      if (kept_ != e) {
        for (Index* key : view_.keys) key[kept_] = key[e];
        view_.values[kept_] = view_.values[e];
      }
      ++kept_;
    }
  }

  // After summing duplicates the columns keep their memory; only their length shrinks.
  void shrink() {
    for (Buffer& key : keys_) key = Buffer::borrow(key.dtype(), kept_, key.data(), key.owner());
    values_ = Buffer::borrow(values_.dtype(), kept_, values_.data(), values_.owner());
  }

  std::vector<Buffer> newKeyColumns() const {
    std::vector<Buffer> columns;
    for (const Buffer& key : keys_) columns.push_back(newColumn(key.dtype()));
    return columns;
  }

  // A new column for the sorted entries, which a scatter or gather then writes all over.
  Buffer newColumn(DType type) const {
    Buffer column = Buffer::allocate(type, n_);
    preferHugePages(column);
    return column;
  }

  static std::vector<Buffer> copies(const std::vector<Buffer>& buffers) {
    std::vector<Buffer> out;
    for (const Buffer& b : buffers) out.push_back(b.copy());
    return out;
  }

  void adopt(std::vector<Buffer> keys, const Buffer& values) {
    keys_ = std::move(keys);
    values_ = values;
    view_ = EntryView<Index, Word>(keys_, values_);
  }

  std::vector<Buffer>& keys_;
  Buffer& values_;
  const int64_t n_;
  EntryView<Index, Word> view_;
  const bool sum_;
  const AddValue add_;
  int64_t kept_ = 0;                             // entries kept so far by combine()
  bool duplicates_ = false;                      // combine() met equal keys
  std::vector<Index> held_;                      // insertionSort: the keys of the entry being placed
  std::vector<std::vector<Index>> scratchKeys_;  // copyToScratch: one coarse bucket
  std::vector<Word> scratchValues_;
};

}  // namespace

SortedEntries sortEntries(std::vector<Buffer> keys, const std::vector<int64_t>& extents, const Buffer& values,
                          bool sumDuplicates) {
  SortedEntries out;
  out.keys = std::move(keys);
  out.values = values;
  const DType width = out.keys.empty() ? DType::Int64 : out.keys[0].dtype();
  dispatchIndexWidth(width, [&](auto* index) {
    dispatchDType(values.dtype(), [&](auto* typed) {
      using Index = std::remove_pointer_t<decltype(index)>;
      using T = std::remove_pointer_t<decltype(typed)>;
      using Word = typename WordOfSize<sizeof(T)>::type;
      EntrySorter<Index, Word> sorter(out.keys, out.values, sumDuplicates, &addAs<T, Word>);
      out.hadDuplicates = sorter.run(extents.empty() ? -1 : extents[0]);
    });
  });
  return out;
}

}  // namespace coiter
