// What identifies the compiler that generated a kernel, for cache keys: the release version,
// and the size and modification time of the binary this code is in. A rebuilt extension (a
// development build keeps the version) then never loads kernels an older build compiled.
#pragma once
#include <string>

namespace coiter {

const std::string& compilerBuildId();

}  // namespace coiter
