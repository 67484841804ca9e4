#include "storage/entry_sort.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <type_traits>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace coiter {
namespace {

// A scatter into more buckets than this misses the caches on nearly every write.
constexpr int64_t kMaxScatterBuckets = 256;

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

// What combining a range of sorted entries left: the kept entries end before slot `end`.
struct Combined {
  int64_t end = 0;
  bool duplicates = false;  // equal keys were met
};

// Where sorted coarse buckets go: each bucket's kept entries right after those of the bucket
// before (duplicates summed there free slots), which is known once that bucket is final. A
// thread that finds the bucket before final when it takes a bucket writes it to its final
// slots directly; otherwise it writes it where it lies (its own slots, which no other thread
// reads or writes meanwhile) and goes on, without waiting, and whichever thread finishes a
// bucket moves the buckets after the final ones down, in order, as far as they are written.
// Waiting for the bucket before instead made two threads slower than one on a busy machine
// (a thread holding it may not run for milliseconds), and wrote nearly every bucket through
// a copy, as two threads in step seldom find the bucket before final.
class BucketPlacement {
 public:
  // Moves the `count` entries at slot `from` down to slot `to` (to <= from).
  using Mover = std::function<void(int64_t from, int64_t count, int64_t to)>;

  BucketPlacement(const std::vector<int64_t>& starts, Mover move)
      : starts_(starts),
        count_(static_cast<int64_t>(starts.size()) - 1),
        move_(std::move(move)),
        state_(new std::atomic<State>[count_]),
        end_(new std::atomic<int64_t>[count_]),
        kept_(count_) {
    for (int64_t c = 0; c < count_; ++c) {
      state_[c].store(State::Pending, std::memory_order_relaxed);
      end_[c].store(-1, std::memory_order_relaxed);
    }
  }

  // Bucket c's first final slot when it is known now, else -1.
  int64_t finalStart(int64_t c) const { return c == 0 ? 0 : end_[c - 1].load(std::memory_order_acquire); }
  // Bucket c is written at its final slots (from finalStart(c)), `kept` entries.
  void wroteFinal(int64_t c, int64_t kept) {
    end_[c].store(finalStart(c) + kept, std::memory_order_release);
    state_[c].store(State::Final);
    advance();
  }
  // Bucket c is written where it lies, `kept` entries from its first slot.
  void wroteInPlace(int64_t c, int64_t kept) {
    kept_[c] = kept;
    state_[c].store(State::InPlace);
    advance();
  }
  // Once every bucket is written: where the last one's final slots end.
  int64_t end() const { return count_ == 0 ? 0 : end_[count_ - 1].load(); }

 private:
  enum class State { Pending, InPlace, Final };

  // Moves the buckets written in place after the final ones to their final slots. One thread
  // at a time; one that finds another at it leaves its bucket to that one, which looks again
  // before it stops.
  void advance() {
    while (!busy_.exchange(true)) {
      int64_t c = frontier_;
      for (; c < count_; ++c) {
        const State state = state_[c].load();
        if (state == State::Pending) break;
        if (state == State::InPlace) {
          const int64_t to = finalStart(c);
          move_(starts_[c], kept_[c], to);
          end_[c].store(to + kept_[c], std::memory_order_release);
          state_[c].store(State::Final);
        }
      }
      frontier_ = c;
      busy_.store(false);
      if (c == count_ || state_[c].load() == State::Pending) return;
    }
  }

  const std::vector<int64_t>& starts_;
  const int64_t count_;
  const Mover move_;
  std::unique_ptr<std::atomic<State>[]> state_;
  std::unique_ptr<std::atomic<int64_t>[]> end_;  // a final bucket's end; -1 before
  std::vector<int64_t> kept_;                    // a bucket written in place: its entries
  std::atomic<bool> busy_{false};                // a thread is moving buckets
  int64_t frontier_ = 0;                         // the buckets before are final (under busy_)
};

// One thread's memory for sorting coarse buckets, reused from one bucket to the next.
template <typename Index, typename Word>
struct BucketWorkspace {
  std::vector<int64_t> rowStart;         // where each key-0 value's entries start in the scratch
  std::vector<int64_t> next;             // the next free scratch slot of each key-0 value
  std::vector<std::vector<Index>> keys;  // the bucket's entries, in key-0 order
  std::vector<Word> values;
  EntryView<Index, Word> scratch;  // views keys and values
  std::vector<Index> held;         // insertionSort: the keys of the entry being placed
  std::vector<Index> rowKeys;      // sortRows: one row, sorted
  std::vector<Word> rowValues;

  // Room for `count` entries of `keyCount` keys (grown only: a bucket's size varies).
  void reserve(size_t keyCount, int64_t count) {
    keys.resize(keyCount);
    scratch.keys.resize(keyCount);
    for (size_t l = 0; l < keyCount; ++l) {
      if (static_cast<int64_t>(keys[l].size()) < count) keys[l].resize(count);
      scratch.keys[l] = keys[l].data();
    }
    if (static_cast<int64_t>(values.size()) < count) values.resize(count);
    scratch.values = values.data();
  }
};

// Sorts entries lexicographically and stably, then combines duplicates. Whatever it changes
// goes to new buffers first (the input may be the caller's memory), except entries the caller
// laid out in coarse buckets and gave up (grouped); later steps then work in those in place.
// The result is the same, bit for bit, at any thread count.
template <typename Index, typename Word>
class EntrySorter {
 public:
  using AddValue = void (*)(Word& into, const Word& from);
  using View = EntryView<Index, Word>;
  using Workspace = BucketWorkspace<Index, Word>;

  // sum: replace each run of equal keys by one entry holding the sum of its values (added
  // with `add`, in order); otherwise only note that there are duplicates. extents[l] bounds
  // key l (-1: unknown; missing keys unknown too). threads: the most threads the counting sort
  // may use.
  // grouped: as sortEntries takes it (null: not grouped).
  EntrySorter(std::vector<Buffer>& keys, Buffer& values, const std::vector<int64_t>& extents, bool sum, AddValue add,
              int threads, const std::vector<int64_t>* grouped)
      : keys_(keys),
        values_(values),
        n_(values.length()),
        view_(keys, values),
        extents_(extents),
        sum_(sum),
        add_(add),
        threads_(static_cast<int>(std::clamp<int64_t>(n_ / kEntriesPerThread, 1, std::max(1, threads)))),
        compositeRanks_(std::is_same_v<Index, int32_t> && extents.size() == 2 && extents[1] >= 0 &&
                        extents[1] <= kCompositeColumnBound),
        grouped_(grouped) {}

  // Sorts and combines; returns whether there were duplicates.
  bool run() {
    const Order order = entryOrder();
    if (order == Order::Sorted) {
      kept_ = n_;  // in order, no duplicates: the input stays as it is
    } else if (order == Order::SortedWithDuplicates) {
      // Summing duplicates writes to the columns, which may be the caller's memory.
      if (sum_) adopt(copies(keys_), values_.copy());
      absorb(combine(view_, 0, n_, 0));
    } else if (!countable(0, n_)) {
      sortAll();
      absorb(combine(view_, 0, n_, 0));
    } else if (grouped_) {
      sortBuckets(extents_[0], coarseBucketShift(extents_[0]), *grouped_);  // the scatter is done
    } else {
      countingSort(extents_[0]);
    }
    if (kept_ < n_) shrink();
    return duplicates_;
  }

 private:
  // Groups up to this long are insertion-sorted in place; longer ones are counted by their
  // next key (countGroup) or sorted through a permutation.
  static constexpr int64_t kInsertionSortMax = 32;
  // A matrix's rows up to this long are rank-sorted (sortRows).
  static constexpr int64_t kRankSortMax = 32;
  // Bits that hold an entry's place in its row in a composite rank key (rankSortComposite).
  static constexpr int kPlaceBits = 5;
  static_assert(kRankSortMax == int64_t{1} << kPlaceBits);
  // Columns below this bound fit a composite rank key of kPlaceBits more bits in an int32.
  static constexpr int64_t kCompositeColumnBound = int64_t{1} << (31 - kPlaceBits);
  // Each thread of the counting sort gets at least this many entries: below that, starting a
  // thread costs more than it saves (the kernels' rule, runtime/parallel_runtime.hpp).
  static constexpr int64_t kEntriesPerThread = int64_t{1} << 16;

  // Whether `count` entries are worth a counting sort by key l: its extent is known and not
  // much larger than their number (else the counts would cost more than the entries).
  bool countable(size_t l, int64_t count) const {
    return l < extents_.size() && extents_[l] >= 0 && extents_[l] <= 2 * count + 4096;
  }

  // The order of all entries (no keys: every entry equals the next), on threads_ threads: each
  // checks a slice of the entries and where it meets the slice before. For a file already in
  // order (a CSR matrix written out) this check is all the sorting there is.
  Order entryOrder() const {
    std::vector<Order> orders(threads_);
#pragma omp parallel for num_threads(threads_) schedule(static, 1)
    for (int t = 0; t < threads_; ++t)
      orders[t] = view_.orderFrom(0, std::max<int64_t>(n_ * t / threads_ - 1, 0), n_ * (t + 1) / threads_);
    if (std::find(orders.begin(), orders.end(), Order::Unsorted) != orders.end()) return Order::Unsorted;
    if (std::find(orders.begin(), orders.end(), Order::SortedWithDuplicates) != orders.end())
      return Order::SortedWithDuplicates;
    return Order::Sorted;
  }

  // Stable counting sort by key 0, in two passes so that neither scatters over more memory
  // than the caches hold: first into coarse buckets, each a range of 2^shift key-0 values,
  // then each coarse bucket into its exact buckets (sortBuckets). The first pass counts only
  // the coarse buckets (a histogram that stays in L1); each coarse bucket's exact counts are
  // taken when it is sorted, while its entries are in cache. The first pass runs on threads_
  // threads, each counting, then scattering, its own contiguous slice of the entries; a
  // slice's entries go into each bucket after those of the slices before it, so the order
  // stays stable.
  void countingSort(int64_t extent0) {
    const int shift = coarseBucketShift(extent0);
    const int64_t coarseCount = coarseBucketCount(extent0);
    const int threads = threads_;
    auto sliceStart = [&](int t) { return n_ * t / threads; };
    auto coarse = [shift](Index k) { return static_cast<int64_t>(k >> shift); };

    // next[t * coarseCount + c]: where slice t's next entry of coarse bucket c goes.
    std::vector<int64_t> next(static_cast<size_t>(threads) * coarseCount, 0);
    const Index* key0 = view_.keys[0];
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; ++t) {
      int64_t* count = next.data() + t * coarseCount;
      countBuckets(key0, sliceStart(t), sliceStart(t + 1), coarseCount, count, coarse);
    }
    std::vector<int64_t> bucketStart(coarseCount + 1);
    int64_t total = 0;
    for (int64_t c = 0; c < coarseCount; ++c) {
      bucketStart[c] = total;
      for (int t = 0; t < threads; ++t) {
        const int64_t count = next[t * coarseCount + c];
        next[t * coarseCount + c] = total;
        total += count;
      }
    }
    bucketStart[coarseCount] = total;

    std::vector<Buffer> sortedKeys = newKeyColumns();
    Buffer sortedValues = newColumn(values_.dtype());
    View sorted(sortedKeys, sortedValues);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; ++t)
      scatter(view_, sliceStart(t), sliceStart(t + 1), sorted, next.data() + t * coarseCount, coarse);
    adopt(std::move(sortedKeys), sortedValues);
    sortBuckets(extent0, shift, bucketStart);
  }

  // count[bucket(keys[e])] += 1 for e in [begin, end), into four histograms taken in turn
  // and added up at the end: with one, an increment often waits for the store of the one
  // before to the same bucket (a run of one key's entries, or chance among a few hundred
  // buckets); counting 10 M random rows into 256 buckets took 25 ms so, 10 ms in four.
  // bucketCount bounds bucket().
  template <typename Bucket>
  static void countBuckets(const Index* keys, int64_t begin, int64_t end, int64_t bucketCount, int64_t* count,
                           Bucket bucket) {
    constexpr int kWays = 4;
    std::vector<int64_t> ways(kWays * bucketCount, 0);
    int64_t e = begin;
    for (; e + kWays <= end; e += kWays)
      for (int w = 0; w < kWays; ++w) ++ways[w * bucketCount + bucket(keys[e + w])];
    for (; e < end; ++e) ++ways[bucket(keys[e])];
    for (int w = 0; w < kWays; ++w)
      for (int64_t b = 0; b < bucketCount; ++b) count[b] += ways[w * bucketCount + b];
  }

  // Sorts each coarse bucket [bucketStart[c], bucketStart[c + 1]) (key-0 values from
  // c << shift) by all keys and combines its duplicates, on threads_ threads. A thread takes
  // the next bucket, sorts it through its own scratch memory (or in place, for a bucket of one
  // key-0 value) and writes it to its final slots, right after the bucket before's, over the
  // slots the duplicates before it freed, or where it lay until those are known
  // (BucketPlacement). At one thread every bucket goes straight to its final slots.
  void sortBuckets(int64_t extent0, int shift, const std::vector<int64_t>& bucketStart) {
    const int64_t coarseCount = static_cast<int64_t>(bucketStart.size()) - 1;
    BucketPlacement placement(bucketStart,
                              [this](int64_t from, int64_t count, int64_t to) { moveDown(from, from + count, to); });
    std::atomic<int64_t> nextBucket{0};
    std::atomic<bool> duplicates{false};
    std::exception_ptr failure;
#pragma omp parallel num_threads(threads_)
    {
      try {
        Workspace work;
        for (int64_t c; (c = nextBucket.fetch_add(1)) < coarseCount;) {
          const int64_t first = c << shift, last = std::min((c + 1) << shift, extent0);
          const int64_t lo = bucketStart[c], hi = bucketStart[c + 1];
          if (last - first == 1) {  // one key-0 value: nothing to count or scatter
            const Combined kept = sortInPlace(lo, hi, work);
            if (kept.duplicates) duplicates.store(true, std::memory_order_relaxed);
            placement.wroteInPlace(c, kept.end - lo);
            continue;
          }
          // A matrix's sorted rows go to their slots as they are sorted, not through the
          // scratch and a copy: the final ones when known, else the bucket's own. Those slots
          // have been read by then: the ones before `lo` by the buckets before, the bucket's own
          // ones by its scatter into the scratch.
          const int64_t known = placement.finalStart(c);
          const int64_t to = known >= 0 ? known : lo;
          scatterIntoScratch(first, last, lo, hi, work);
          const bool direct = keys_.size() == 2;
          const Combined kept = direct ? sortRows(first, last, work, view_, to) : sortScratch(first, last, work);
          if (kept.duplicates) duplicates.store(true, std::memory_order_relaxed);
          if (!direct) copyOut(work.scratch, kept.end, to);
          if (known >= 0)
            placement.wroteFinal(c, kept.end);
          else
            placement.wroteInPlace(c, kept.end);
        }
      } catch (...) {  // out of memory: rethrown below, as no exception may leave the region
#pragma omp critical
        failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    absorb({placement.end(), duplicates.load()});
  }

  // Lays the coarse bucket [lo, hi) of key-0 value(s) [first, last) out in the workspace's
  // scratch, from slot 0, in key-0 order: a counting sort by key 0 (the bucket is in cache),
  // which leaves where each key-0 value's entries start in work.rowStart.
  void scatterIntoScratch(int64_t first, int64_t last, int64_t lo, int64_t hi, Workspace& work) const {
    std::vector<int64_t>& rowStart = work.rowStart;
    rowStart.assign(last - first + 1, 0);
    const Index* key0 = view_.keys[0];
    for (int64_t e = lo; e < hi; ++e) ++rowStart[key0[e] - first + 1];
    for (int64_t k = 0; k < last - first; ++k) rowStart[k + 1] += rowStart[k];
    work.reserve(keys_.size(), hi - lo);
    work.next.assign(rowStart.begin(), rowStart.end() - 1);
    if (keys_.size() != 2) {
      scatter(view_, lo, hi, work.scratch, work.next.data(), [first](Index k) { return k - first; });
      return;
    }
    // A matrix: sortRows knows an entry's row from where it lies, so only the columns and
    // values move (a quarter less scratch to keep in cache).
    const Index* columns = view_.keys[1];
    const Word* values = view_.values;
    Index* toColumns = work.scratch.keys[1];
    Word* toValues = work.scratch.values;
    int64_t* next = work.next.data();
    for (int64_t e = lo; e < hi; ++e) {
      const int64_t d = next[key0[e] - first]++;
      toColumns[d] = columns[e];
      toValues[d] = values[e];
    }
  }

  // Sorts the scratch laid out by scatterIntoScratch by all keys and combines its
  // duplicates there, from slot 0 on: a sort of each key-0 value's entries by the other keys.
  Combined sortScratch(int64_t first, int64_t last, Workspace& work) const {
    if (keys_.size() == 2) return sortRows(first, last, work, work.scratch, 0);
    if (keys_.size() > 1)
      for (int64_t k = 0; k < last - first; ++k)
        sortGroup(work.scratch, work.rowStart[k], work.rowStart[k + 1], 1, work.held);
    return combine(work.scratch, 0, work.rowStart[last - first], 0);
  }

  // For two keys (a matrix): sorts each row (key-0 value) of the scratch, laid out by
  // scatterIntoScratch, by column and combines its duplicates, writing the kept entries to
  // `out` from slot `at` on in one pass over the rows (Combined::end counts them). A row
  // short enough is rank-sorted into the workspace (rows of a sparse matrix usually are); a
  // longer one is sorted in place. `out` is the scratch itself (at 0) or memory apart from it.
  Combined sortRows(int64_t first, int64_t last, Workspace& work, const View& out, int64_t at) const {
    Index* columns = work.scratch.keys[1];
    Word* values = work.scratch.values;
    Index* outRows = out.keys[0] + at;
    Index* outColumns = out.keys[1] + at;
    Word* outValues = out.values + at;
    work.rowKeys.resize(kRankSortMax);
    work.rowValues.resize(kRankSortMax);
    Combined result;
    int64_t& kept = result.end;
    for (int64_t k = 0; k < last - first; ++k) {
      const int64_t lo = work.rowStart[k], hi = work.rowStart[k + 1];
      const Index* sortedColumns = columns + lo;
      const Word* sortedValues = values + lo;
      if (hi - lo <= kRankSortMax) {
        sortShortRow(columns + lo, values + lo, hi - lo, work.rowKeys.data(), work.rowValues.data());
        sortedColumns = work.rowKeys.data();
        sortedValues = work.rowValues.data();
      } else {
        sortGroup(work.scratch, lo, hi, 1, work.held);
      }
      // Into the scratch, appending at slot kept <= lo + e never overwrites an entry not yet read.
      const int64_t rowFirst = kept;
      const auto row = static_cast<Index>(first + k);
      for (int64_t e = 0; e < hi - lo; ++e) {
        if (kept > rowFirst && outColumns[kept - 1] == sortedColumns[e]) {
          result.duplicates = true;
          if (sum_) {
            add_(outValues[kept - 1], sortedValues[e]);
            continue;
          }
        }
        outRows[kept] = row;
        outColumns[kept] = sortedColumns[e];
        outValues[kept] = sortedValues[e];
        ++kept;
      }
    }
    return result;
  }

  // Stable sort of a row of `count` (at most kRankSortMax) entries by column, into
  // sortedColumns and sortedValues: by composite keys where they fit, else by rank.
  void sortShortRow(const Index* columns, const Word* values, int64_t count, Index* sortedColumns,
                    Word* sortedValues) const {
    if constexpr (std::is_same_v<Index, int32_t>)
      if (compositeRanks_) return rankSortComposite(columns, values, count, sortedColumns, sortedValues);
    rankSort(columns, values, count, sortedColumns, sortedValues);
  }

  // Stable sort of `count` (at most kRankSortMax) entries by key, into sortedKeys and
  // sortedValues: each entry's place is the number of entries that precede it in order
  // (smaller keys, and equal ones before it), counted without branches. An insertion sort of
  // a row in random order mispredicts a branch on nearly every entry, which costs more than
  // these count * count comparisons for short rows.
  static void rankSort(const Index* keys, const Word* values, int64_t count, Index* sortedKeys, Word* sortedValues) {
    for (int64_t i = 0; i < count; ++i) {
      const Index key = keys[i];
      int64_t place = 0;
      for (int64_t j = 0; j < i; ++j) place += keys[j] <= key;
      for (int64_t j = i + 1; j < count; ++j) place += keys[j] < key;
      sortedKeys[place] = key;
      sortedValues[place] = values[i];
    }
  }

  // rankSort for int32 columns below kCompositeColumnBound, with the same result: entry i's
  // key becomes (column << kPlaceBits) | i, which is unique, so its place is the number of
  // keys below it, one comparison per pair and no tie to break; with SSE2 (every x86-64),
  // four at a time. On the rows of a 10^6 x 10^6 matrix with 10 M entries in random order (10
  // a row on average) this takes about half of rankSort's time.
  static void rankSortComposite(const int32_t* columns, const Word* values, int64_t count, int32_t* sortedColumns,
                                Word* sortedValues) {
    // Padded to whole groups of four with the largest int32, which is below no key.
    alignas(16) int32_t keys[kRankSortMax];
    const int64_t padded = (count + 3) & ~int64_t{3};
    for (int64_t i = 0; i < count; ++i) keys[i] = static_cast<int32_t>((columns[i] << kPlaceBits) | i);
    for (int64_t i = count; i < padded; ++i) keys[i] = std::numeric_limits<int32_t>::max();
    for (int64_t i = 0; i < count; ++i) {
#if defined(__SSE2__)
      const __m128i key = _mm_set1_epi32(keys[i]);
      __m128i below = _mm_setzero_si128();  // per lane; a key below is -1 in its lane
      for (int64_t j = 0; j < padded; j += 4)
        below = _mm_sub_epi32(below, _mm_cmpgt_epi32(key, _mm_load_si128(reinterpret_cast<const __m128i*>(keys + j))));
      below = _mm_add_epi32(below, _mm_shuffle_epi32(below, _MM_SHUFFLE(1, 0, 3, 2)));
      below = _mm_add_epi32(below, _mm_shuffle_epi32(below, _MM_SHUFFLE(2, 3, 0, 1)));
      const int64_t place = _mm_cvtsi128_si32(below);
#else
      int64_t place = 0;
      for (int64_t j = 0; j < count; ++j) place += keys[j] < keys[i];
#endif
      sortedColumns[place] = columns[i];
      sortedValues[place] = values[i];
    }
  }

  // Sorts the bucket [lo, hi), all of one key-0 value, by the other keys in place, and
  // combines its duplicates within it.
  Combined sortInPlace(int64_t lo, int64_t hi, Workspace& work) const {
    if (keys_.size() > 1) sortGroup(view_, lo, hi, 1, work.held);
    return combine(view_, lo, hi, lo);
  }

  // Copies the first `count` entries of `from` to slot `to` on.
  void copyOut(const View& from, int64_t count, int64_t to) const {
    for (size_t l = 0; l < keys_.size(); ++l) std::memcpy(view_.keys[l] + to, from.keys[l], count * sizeof(Index));
    std::memcpy(view_.values + to, from.values, count * sizeof(Word));
  }

  // Moves entries [lo, hi) down to slot `to` (to <= lo).
  void moveDown(int64_t lo, int64_t hi, int64_t to) const {
    if (to == lo || hi == lo) return;
    for (Index* key : view_.keys) std::memmove(key + to, key + lo, (hi - lo) * sizeof(Index));
    std::memmove(view_.values + to, view_.values + lo, (hi - lo) * sizeof(Word));
  }

  // Moves entries [begin, end) of `from` to the next free slot of their bucket in `to`
  // (next[b]: the next slot of bucket b), in one pass.
  template <typename Bucket>
  static void scatter(const View& from, int64_t begin, int64_t end, const View& to, int64_t* next, Bucket bucket) {
    // Two keys (a matrix) with the key count fixed at compile time: the copies unrolled.
    if (from.keys.size() == 2) return scatterKeys<2>(from, begin, end, to, next, bucket);
    scatterKeys<0>(from, begin, end, to, next, bucket);
  }

  // scatter() for kKeys keys (0: as many as there are), the column pointers held in locals.
  template <size_t kKeys, typename Bucket>
  static void scatterKeys(const View& from, int64_t begin, int64_t end, const View& to, int64_t* next, Bucket bucket) {
    const size_t keyCount = kKeys ? kKeys : from.keys.size();
    const Index* const* source = from.keys.data();
    Index* const* target = to.keys.data();
    const Word* sourceValues = from.values;
    Word* targetValues = to.values;
    const Index* key0 = source[0];
    for (int64_t e = begin; e < end; ++e) {
      const int64_t d = next[bucket(key0[e])]++;
      for (size_t l = 0; l < keyCount; ++l) target[l][d] = source[l][e];
      targetValues[d] = sourceValues[e];
    }
  }

  // Sorts group [lo, hi) of `v` by keys[from..] (stable). Short groups are insertion-sorted
  // in place, which notices a sorted group as cheaply as a separate check would; for one key
  // left (the common case: columns within a row) with that key count fixed at compile time.
  void sortGroup(const View& v, int64_t lo, int64_t hi, size_t from, std::vector<Index>& held) const {
    if (hi - lo > kInsertionSortMax) {
      if (v.orderFrom(from, lo, hi) != Order::Unsorted) return;
      if (from + 1 < keys_.size() && countable(from, hi - lo))
        countGroup(v, lo, hi, from, held);
      else
        permuteGroup(v, lo, hi, from);
    } else if (from + 1 == keys_.size()) {
      insertionSort<1>(v, lo, hi, from, held);
    } else {
      insertionSort<0>(v, lo, hi, from, held);
    }
  }

  // Stable insertion sort of entries [lo, hi) of `v` by keys[from..], in place: the fastest
  // sort for the few entries of a typical row, and it needs no scratch memory (but `held`,
  // for the keys of the entry being placed). kKeysLeft: the number of keys from `from` on,
  // or 0 for all the rest.
  template <size_t kKeysLeft>
  void insertionSort(const View& v, int64_t lo, int64_t hi, size_t from, std::vector<Index>& heldKeys) const {
    Index* const* keys = v.keys.data() + from;  // keys[l]: key from + l
    Word* values = v.values;
    const size_t count = kKeysLeft ? kKeysLeft : v.keys.size() - from;
    heldKeys.resize(count);
    Index* held = heldKeys.data();
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

  // Stable counting sort of the long group [lo, hi) of `v` by key `from` (through scratch
  // columns), then a sort of each run of one value of it by the keys after it. With more
  // keys left (a slice of a 3-mode tensor), a sort by comparison would walk the keys on each
  // of its many comparisons.
  void countGroup(const View& v, int64_t lo, int64_t hi, size_t from, std::vector<Index>& held) const {
    const int64_t count = hi - lo;
    std::vector<int64_t> start(extents_[from] + 1, 0);
    for (int64_t e = lo; e < hi; ++e) ++start[v.keys[from][e] + 1];
    for (int64_t k = 0; k < extents_[from]; ++k) start[k + 1] += start[k];
    // The group's keys from `from` on and values, copied out; the keys before are equal.
    std::vector<Index> keys((keys_.size() - from) * count);
    for (size_t l = from; l < keys_.size(); ++l)
      std::copy(v.keys[l] + lo, v.keys[l] + hi, keys.data() + (l - from) * count);
    const std::vector<Word> values(v.values + lo, v.values + hi);
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t e = 0; e < count; ++e) {
      const int64_t d = lo + next[keys[e]]++;
      for (size_t l = from; l < keys_.size(); ++l) v.keys[l][d] = keys[(l - from) * count + e];
      v.values[d] = values[e];
    }
    for (int64_t k = 0; k < extents_[from]; ++k)
      if (start[k + 1] - start[k] > 1) sortGroup(v, lo + start[k], lo + start[k + 1], from + 1, held);
  }

  // Entries [lo, hi) of `v` in stable sorted order by keys[from..]. Sorting (key, entry)
  // pairs compares without indirection in the common case of one key left to sort by.
  std::vector<Index> sortedOrder(const View& v, int64_t lo, int64_t hi, size_t from) const {
    std::vector<std::pair<Index, Index>> pairs(hi - lo);
    const Index* key = v.keys[from];
    for (int64_t e = lo; e < hi; ++e) pairs[e - lo] = {key[e], static_cast<Index>(e)};
    if (from + 1 == keys_.size()) {
      std::sort(pairs.begin(), pairs.end());
    } else {
      std::sort(pairs.begin(), pairs.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        int c = v.compare(a.second, b.second, from + 1);
        return c != 0 ? c < 0 : a.second < b.second;
      });
    }
    std::vector<Index> order(pairs.size());
    for (size_t e = 0; e < pairs.size(); ++e) order[e] = pairs[e].second;
    return order;
  }

  // Sorts a long group [lo, hi) of `v` by keys[from..] through a permutation and scratch
  // columns.
  void permuteGroup(const View& v, int64_t lo, int64_t hi, size_t from) const {
    const std::vector<Index> order = sortedOrder(v, lo, hi, from);
    std::vector<Index> scratch(order.size());
    for (size_t l = from; l < keys_.size(); ++l) {
      gather(v.keys[l], order, scratch.data());
      std::copy(scratch.begin(), scratch.end(), v.keys[l] + lo);
    }
    std::vector<Word> valueScratch(order.size());
    gather(v.values, order, valueScratch.data());
    std::copy(valueScratch.begin(), valueScratch.end(), v.values + lo);
  }

  // Sorts all entries by comparison, into new buffers: for a first key too sparse to count.
  void sortAll() {
    const std::vector<Index> order = sortedOrder(view_, 0, n_, 0);
    std::vector<Buffer> sorted = newKeyColumns();
    Buffer sortedValues = newColumn(values_.dtype());
    for (size_t l = 0; l < keys_.size(); ++l) gather(view_.keys[l], order, sorted[l].as<Index>());
    gather(view_.values, order, sortedValues.as<Word>());
    adopt(std::move(sorted), sortedValues);
  }

  // Combines the sorted entries [lo, hi) of `v` with equal keys into entries from slot
  // `into` (<= lo) on, moving each survivor down to the next kept slot; entries before the
  // first duplicate stay where they are.
  Combined combine(const View& v, int64_t lo, int64_t hi, int64_t into) const {
    Combined out{into, false};
    int64_t& kept = out.end;
    for (int64_t e = lo; e < hi; ++e) {
      if (kept > into && v.compare(kept - 1, e, 0) == 0) {
        out.duplicates = true;
        if (sum_) {
          add_(v.values[kept - 1], v.values[e]);
          continue;
        }
      }
      if (kept != e) {
        for (Index* key : v.keys) key[kept] = key[e];
        v.values[kept] = v.values[e];
      }
      ++kept;
    }
    return out;
  }

  // Takes the entries up to c.end as kept.
  void absorb(const Combined& c) {
    kept_ = c.end;
    duplicates_ = duplicates_ || c.duplicates;
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
    view_ = View(keys_, values_);
  }

  std::vector<Buffer>& keys_;
  Buffer& values_;
  const int64_t n_;
  View view_;
  const std::vector<int64_t>& extents_;
  const bool sum_;
  const AddValue add_;
  const int threads_;
  // sortRows may rank rows by composite keys (rankSortComposite): int32 columns small enough.
  const bool compositeRanks_;
  // Where each coarse bucket of key 0 starts, when the caller laid the entries out so.
  const std::vector<int64_t>* grouped_;
  int64_t kept_ = 0;         // entries kept so far
  bool duplicates_ = false;  // combining met equal keys
};

}  // namespace

int coarseBucketShift(int64_t extent) {
  int shift = 0;
  while ((extent - 1) >> shift >= kMaxScatterBuckets) ++shift;
  return shift;
}

int64_t coarseBucketCount(int64_t extent) { return ((extent - 1) >> coarseBucketShift(extent)) + 1; }

SortedEntries sortEntries(std::vector<Buffer> keys, const std::vector<int64_t>& extents, const Buffer& values,
                          bool sumDuplicates, int threads, const std::vector<int64_t>* grouped) {
  if (grouped) {
    const bool fits = !keys.empty() && !extents.empty() && extents[0] >= 1 &&
                      static_cast<int64_t>(grouped->size()) == coarseBucketCount(extents[0]) + 1 &&
                      grouped->front() == 0 && grouped->back() == values.length() &&
                      std::is_sorted(grouped->begin(), grouped->end());
    if (!fits) throw std::logic_error("sortEntries: the coarse buckets do not fit the entries");
  }
  SortedEntries out;
  out.keys = std::move(keys);
  out.values = values;
  const DType width = out.keys.empty() ? DType::Int64 : out.keys[0].dtype();
  dispatchIndexWidth(width, [&](auto* index) {
    dispatchDType(values.dtype(), [&](auto* typed) {
      using Index = std::remove_pointer_t<decltype(index)>;
      using T = std::remove_pointer_t<decltype(typed)>;
      using Word = typename WordOfSize<sizeof(T)>::type;
      EntrySorter<Index, Word> sorter(out.keys, out.values, extents, sumDuplicates, &addAs<T, Word>, threads, grouped);
      out.hadDuplicates = sorter.run();
    });
  });
  return out;
}

}  // namespace coiter
