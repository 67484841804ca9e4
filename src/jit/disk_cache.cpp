#include "jit/disk_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "jit/signature.hpp"

namespace coiter {

namespace {

constexpr char kMagic[] = "COITER-KERNEL-1\n";
constexpr char kSuffix[] = ".kernel";
// No entry larger than this is read. An entry is the object code of one kernel function
// (kilobytes; the largest fused kernels reach a few megabytes), so anything bigger was not
// written by coiter (a sparse file of terabytes, say) and reading it would exhaust memory.
constexpr off_t kMaxEntryBytes = off_t{64} << 20;

std::string defaultDirectory() {
  if (const char* dir = std::getenv("COITER_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/coiter";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/coiter";
  return "";
}

// mkdir -p with mode 0700 for the directories it creates.
bool makeDirectories(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) return true;
  }
}

// What kind of file `mode` describes, for the warning about a file that is not an entry.
std::string describeFileType(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// Why a file with this status is not read as an entry; empty when it may be.
std::string unreadableBecause(const struct stat& info) {
  if (!S_ISREG(info.st_mode)) return "is " + describeFileType(info.st_mode);
  if (info.st_size > kMaxEntryBytes)
    return "holds " + std::to_string(info.st_size) + " bytes, more than any kernel (" +
           std::to_string(kMaxEntryBytes >> 20) + " MiB)";
  return "";
}

struct EntryFile {
  bool exists = false;
  std::string bytes;    // the contents, when `problem` is empty
  std::string problem;  // why the file was not read: "is a FIFO", "holds 1099511627776 bytes, ..."
};

// The contents of the entry file at `path`. Only a regular file of at most kMaxEntryBytes is
// read: the file is checked before opening (so a FIFO, whose open would wait for a writer, or
// a device is never opened), opened without following a symbolic link and checked again
// (it may have been swapped in between), and read up to the size it had then.
EntryFile readEntryFile(const std::string& path) {
  EntryFile file;
  struct stat info;
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return file;  // a plain miss
    file.exists = true;
    file.problem = "cannot be examined (" + std::string(std::strerror(errno)) + ")";
    return file;
  }
  file.exists = true;
  file.problem = unreadableBecause(info);
  if (!file.problem.empty()) return file;
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    file.problem = "cannot be opened (" + std::string(std::strerror(errno)) + ")";
    return file;
  }
  if (fstat(fd, &info) != 0) {
    file.problem = "cannot be examined (" + std::string(std::strerror(errno)) + ")";
  } else if (file.problem = unreadableBecause(info); file.problem.empty()) {
    file.bytes.resize(static_cast<size_t>(info.st_size));
    size_t got = 0;
    while (got < file.bytes.size()) {
      const ssize_t n = read(fd, file.bytes.data() + got, file.bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        file.problem = "cannot be read (" + std::string(std::strerror(errno)) + ")";
        break;
      }
      if (n == 0) break;  // shrunk since fstat: the hash check below rejects what is left
      got += static_cast<size_t>(n);
    }
    file.bytes.resize(got);
  }
  close(fd);
  return file;
}

struct ParsedEntry {
  std::vector<uint8_t> code;
  std::string problem;  // why the contents are not an entry for the signature; empty if they are
};

// The code of an entry's contents, checked against `signature` and the code's hash.
// Layout: magic, version line, signature length line, signature, code hash line, code.
ParsedEntry parseEntry(const std::string& data, const std::string& signature) {
  size_t at = 0;
  auto line = [&](std::string& out) {
    size_t end = data.find('\n', at);
    if (end == std::string::npos) return false;
    out = data.substr(at, end - at);
    at = end + 1;
    return true;
  };
  std::string version, length, codeHash;
  if (data.compare(0, sizeof kMagic - 1, kMagic) != 0) return {{}, "has no coiter kernel header"};
  at = sizeof kMagic - 1;
  if (!line(version) || version != COITER_VERSION) return {{}, "was written by another version of coiter"};
  // The length is compared as text: a forged huge number is never converted or added to.
  if (!line(length) || length != std::to_string(signature.size()) ||
      data.compare(at, signature.size(), signature) != 0) {
    return {{}, "holds another signature"};
  }
  at += signature.size();
  if (!line(codeHash)) return {{}, "is truncated"};
  std::vector<uint8_t> code(data.begin() + static_cast<std::ptrdiff_t>(at), data.end());
  if (code.empty() || hashHex(code.data(), code.size()) != codeHash)
    return {{}, "is truncated or corrupt (its code does not match its hash)"};
  return {std::move(code), ""};
}

}  // namespace

DiskCache DiskCache::fromEnvironment() {
  DiskCache cache;
  std::string dir = defaultDirectory();
  if (dir.empty()) {
    cache.problem_ = "no cache directory: set COITER_CACHE_DIR or HOME";
    return cache;
  }
  if (!makeDirectories(dir)) {
    cache.problem_ = "cannot create the cache directory " + dir + ": " + std::strerror(errno);
    return cache;
  }
  struct stat info;
  if (lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    cache.problem_ = dir + " is not a directory";
  } else if (info.st_uid != getuid()) {
    cache.problem_ = "the cache directory " + dir + " belongs to another user";
  } else if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    cache.problem_ = "the cache directory " + dir + " is writable by other users";
  } else {
    cache.directory_ = dir;
  }
  return cache;
}

std::string DiskCache::pathFor(const std::string& hash) const { return directory_ + "/" + hash + kSuffix; }

DiskCache::Entry DiskCache::load(const std::string& hash, const std::string& signature) const {
  if (!enabled()) return {};
  const std::string path = pathFor(hash);
  EntryFile file = readEntryFile(path);
  if (!file.exists) return {};
  ParsedEntry parsed = file.problem.empty() ? parseEntry(file.bytes, signature) : ParsedEntry{{}, file.problem};
  if (parsed.problem.empty()) return {std::move(parsed.code), ""};
  const bool deleted = unlink(path.c_str()) == 0;
  return {std::nullopt,
          path + " " + parsed.problem +
              (deleted ? "; deleted it" : "; could not delete it (" + std::string(std::strerror(errno)) + ")")};
}

void DiskCache::store(const std::string& hash, const std::string& signature, const std::vector<uint8_t>& code) const {
  if (!enabled()) return;
  std::string path = pathFor(hash);
  std::string temp = directory_ + "/." + hash + ".XXXXXX";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) return;  // a read-only or full disk only costs a recompilation later
  std::string header = std::string(kMagic) + COITER_VERSION + "\n" + std::to_string(signature.size()) + "\n" +
                       signature + hashHex(code.data(), code.size()) + "\n";
  bool ok = write(fd, header.data(), header.size()) == static_cast<ssize_t>(header.size()) &&
            write(fd, code.data(), code.size()) == static_cast<ssize_t>(code.size());
  // No fsync: a torn file after a crash fails the hash check on load and is recompiled.
  close(fd);
  if (!ok || rename(name.data(), path.c_str()) != 0) unlink(name.data());
}

int DiskCache::clear() const {
  if (!enabled()) return 0;
  int removed = 0;
  DIR* dir = opendir(directory_.c_str());
  if (!dir) return 0;
  while (dirent* entry = readdir(dir)) {
    std::string file = entry->d_name;
    if (file.size() > sizeof kSuffix - 1 &&
        file.compare(file.size() - (sizeof kSuffix - 1), std::string::npos, kSuffix) == 0) {
      if (unlink((directory_ + "/" + file).c_str()) == 0) ++removed;
    }
  }
  closedir(dir);
  return removed;
}

}  // namespace coiter
