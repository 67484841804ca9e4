#include "jit/build_id.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

namespace coiter {

const std::string& compilerBuildId() {
  static const std::string id = [] {
    std::string out = COITER_VERSION;
    Dl_info info{};
    struct stat file{};
    if (dladdr(reinterpret_cast<const void*>(&compilerBuildId), &info) && info.dli_fname &&
        stat(info.dli_fname, &file) == 0) {
      out += ";" + std::to_string(file.st_size) + ";" + std::to_string(file.st_mtim.tv_sec) + "." +
             std::to_string(file.st_mtim.tv_nsec);
    }
    return out;
  }();
  return id;
}

}  // namespace coiter
