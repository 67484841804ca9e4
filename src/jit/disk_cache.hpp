// The persistent cache of compiled kernels: one file per signature in a directory the user
// owns and nobody else can write (COITER_CACHE_DIR, else $XDG_CACHE_HOME/coiter, else
// ~/.cache/coiter). A file holds a header (magic, compiler version, the full signature text,
// a hash of the code) and the code; it is written to a temporary file and renamed into place,
// so readers never see a partial file. On load everything is checked: only a regular file of
// plausible size is read at all (not a symbolic link, FIFO, directory or device that someone
// put in its place), and an entry that is corrupt, truncated, from another version or for
// another signature is discarded (and deleted), never executed; load says why, for a warning.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace coiter {

class DiskCache {
 public:
  // The cache in the directory the environment names now, created (mode 0700) when missing.
  // Disabled when the directory is not safe to use (owned by someone else, or writable by
  // others) or cannot be created; `problem()` says why.
  static DiskCache fromEnvironment();

  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }
  const std::string& problem() const { return problem_; }

  // What load found: the code of a checked entry, nothing (a plain miss), or an entry that
  // was discarded, and why.
  struct Entry {
    std::optional<std::vector<uint8_t>> code;
    std::string discarded;  // "<path> is a FIFO; deleted it", empty unless one was discarded
  };
  Entry load(const std::string& hash, const std::string& signature) const;
  void store(const std::string& hash, const std::string& signature, const std::vector<uint8_t>& code) const;
  // Deletes every cache file; returns how many were removed.
  int clear() const;

 private:
  DiskCache() = default;
  std::string pathFor(const std::string& hash) const;
  std::string directory_;
  std::string problem_;
};

}  // namespace coiter
