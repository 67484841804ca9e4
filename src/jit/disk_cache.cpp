#include "jit/disk_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "jit/signature.hpp"

namespace coiter {

namespace {

constexpr char kMagic[] = "COITER-KERNEL-1\n";
constexpr char kSuffix[] = ".kernel";

std::string defaultDirectory() {
  if (const char* dir = std::getenv("COITER_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/coiter";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/coiter";
  return "";
}

// mkdir -p with mode 0700 for the directories it creates.
bool makeDirectories(const std::string& path) {
  for (size_t slash = path.find('/', 1); ; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) return true;
  }
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

std::optional<std::vector<uint8_t>> DiskCache::load(const std::string& hash, const std::string& signature) const {
  if (!enabled()) return std::nullopt;
  std::string path = pathFor(hash);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string data = buffer.str();
  // Layout: magic, version line, signature length line, signature, code hash line, code.
  auto discard = [&] {
    unlink(path.c_str());
    return std::nullopt;
  };
  size_t at = 0;
  auto line = [&](std::string& out) {
    size_t end = data.find('\n', at);
    if (end == std::string::npos) return false;
    out = data.substr(at, end - at);
    at = end + 1;
    return true;
  };
  std::string magic, version, length, codeHash;
  if (data.compare(0, sizeof kMagic - 1, kMagic) != 0) return discard();
  at = sizeof kMagic - 1;
  if (!line(version) || version != COITER_VERSION || !line(length)) return discard();
  size_t signatureLength = std::strtoull(length.c_str(), nullptr, 10);
  if (at + signatureLength > data.size() || data.compare(at, signatureLength, signature) != 0 ||
      signatureLength != signature.size()) {
    return discard();
  }
  at += signatureLength;
  if (!line(codeHash)) return discard();
  std::vector<uint8_t> code(data.begin() + static_cast<std::ptrdiff_t>(at), data.end());
  if (code.empty() || hashHex(code.data(), code.size()) != codeHash) return discard();
  return code;
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
    if (file.size() > sizeof kSuffix - 1 && file.compare(file.size() - (sizeof kSuffix - 1), std::string::npos, kSuffix) == 0) {
      if (unlink((directory_ + "/" + file).c_str()) == 0) ++removed;
    }
  }
  closedir(dir);
  return removed;
}

}  // namespace coiter
