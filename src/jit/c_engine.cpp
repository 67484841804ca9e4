#include "jit/c_engine.hpp"

#include "runtime/runtime_functions.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>

#include "codegen/c_codegen.hpp"
#include "util/errors.hpp"
#include "util/subprocess.hpp"

namespace coiter {

namespace {

std::string errorText(int error) { return std::error_code(error, std::generic_category()).message(); }

std::string tempRoot() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

// The compiler command: COITER_CC split at whitespace, or `cc`.
std::vector<std::string> compilerCommand() {
  const char* env = std::getenv("COITER_CC");
  std::istringstream words(env ? env : "");
  std::vector<std::string> command((std::istream_iterator<std::string>(words)), std::istream_iterator<std::string>());
  if (command.empty()) command.push_back("cc");
  return command;
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// What this process learned about each compiler command.
struct CompilerState {
  std::string version;  // the first line of `--version`; empty until asked
  bool gcc = false;
  bool rejectsOpenmp = false;
};
std::mutex compilersMutex;
std::map<std::string, CompilerState> compilers;

bool rejectsOpenmp(const std::string& compiler) {
  std::lock_guard<std::mutex> lock(compilersMutex);
  return compilers[compiler].rejectsOpenmp;
}

// The compiler's `--version` line, and whether it is GCC (asked once per command).
CompilerState describeCompiler(const std::vector<std::string>& command) {
  std::string name = join(command);
  {
    std::lock_guard<std::mutex> lock(compilersMutex);
    const CompilerState& known = compilers[name];
    if (!known.version.empty()) return known;
  }
  std::vector<std::string> argv = command;
  argv.push_back("--version");
  ProcessResult version = runProcess(argv);
  std::lock_guard<std::mutex> lock(compilersMutex);
  CompilerState& state = compilers[name];
  state.version =
      version.succeeded() ? version.output.substr(0, version.output.find('\n')) : "unknown compiler " + name;
  // `cc --version` names the command, not the compiler; GCC's copyright line names the FSF.
  state.gcc = version.succeeded() && version.output.find("Free Software Foundation") != std::string::npos;
  return state;
}

// The flags every kernel is compiled with. GCC's loop if-conversion is off: GCC 12.2 with
// AVX-512 (-march=native on such a CPU) miscompiled a kernel whose loop it had if-converted for
// masked loads and then left scalar (a DIA x ELL product into a hashed vector came out zero;
// test_c_engine_compiles_if_converted_loops_right). Loops without branches still vectorize.
std::vector<std::string> kernelFlags(bool gcc) {
  std::vector<std::string> flags = {"-O3", "-march=native", "-fPIC", "-shared", "-fwrapv", "-ffp-contract=off"};
  if (gcc) flags.push_back("-fno-tree-loop-if-convert");
  return flags;
}

// A private (mode 0700) temporary directory, removed with its contents unless kept.
class TempDir {
 public:
  TempDir() {
    std::string path = tempRoot() + "/coiter-XXXXXX";
    if (!mkdtemp(path.data())) {
      throw CompileError("cannot create a temporary directory in " + tempRoot() + ": " + errorText(errno));
    }
    path_ = path;
  }
  ~TempDir() {
    // Best effort: a leftover temporary directory is no reason to fail a compile.
    std::error_code ignored;
    if (!keep_) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw CompileError("cannot write " + path);
}

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad() || bytes.empty()) throw CompileError("cannot read the compiled kernel " + path);
  return bytes;
}

ProcessResult runCompiler(const std::vector<std::string>& compiler, const std::string& source,
                          const std::string& library, bool openmp) {
  std::vector<std::string> argv = compiler;
  for (const std::string& flag : kernelFlags(describeCompiler(compiler).gcc)) argv.push_back(flag);
  if (openmp) argv.push_back("-fopenmp");
  for (const std::string& arg : {std::string("-o"), library, source, std::string("-lm")}) argv.push_back(arg);
  return runProcess(argv);
}

// The CPU model, and a hash of its feature flags: -march=native code depends on the features,
// and virtual machines with different features may report the same model name.
std::string hostCpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string model, flags;
  for (std::string line; std::getline(in, line) && (model.empty() || flags.empty());) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = line.substr(std::min(line.size(), colon + 2));
    if (key == "model name" && model.empty()) model = value;
    if ((key == "flags" || key == "Features") && flags.empty()) flags = value;
  }
  if (model.empty()) {  // e.g. ARM, where /proc/cpuinfo names no model
    utsname host{};
    model = uname(&host) == 0 ? host.machine : "unknown cpu";
  }
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : flags) hash = (hash ^ c) * 1099511628211ull;
  std::ostringstream text;
  text << model << ";" << std::hex << hash;
  return text.str();
}

// A kernel library loaded with dlopen; unloaded when destroyed.
class CKernel final : public LoadedKernel {
 public:
  CKernel(void* handle, void* symbol) : handle_(handle) { entry_ = reinterpret_cast<KernelEntry>(symbol); }
  ~CKernel() override { dlclose(handle_); }
  CKernel(const CKernel&) = delete;
  CKernel& operator=(const CKernel&) = delete;

 private:
  void* handle_;
};

std::string lastDlError() {
  const char* error = dlerror();
  return error ? error : "unknown error";
}

}  // namespace

std::string CEngine::source(const ir::Function& f) const { return codegen::printC(f); }

std::vector<uint8_t> CEngine::compile(const ir::Function& f) const {
  std::string code = codegen::printC(f);  // also checks that f.name is a C identifier
  std::vector<std::string> compiler = compilerCommand();
  std::string compilerName = join(compiler);
  TempDir dir;
  std::string source = dir.path() + "/" + f.name + ".c";
  std::string library = dir.path() + "/" + f.name + ".so";
  writeFile(source, code);
  bool openmp = !rejectsOpenmp(compilerName);
  ProcessResult result = runCompiler(compiler, source, library, openmp);
  if (!result.succeeded() && result.started && openmp) {
    // Compilers without OpenMP (clang without libomp) fail on -fopenmp: try once without it.
    ProcessResult retry = runCompiler(compiler, source, library, false);
    if (retry.succeeded()) {
      std::lock_guard<std::mutex> lock(compilersMutex);
      compilers[compilerName].rejectsOpenmp = true;
    }
    result = std::move(retry);
  }
  if (!result.succeeded()) {
    dir.keep();
    throw CompileError("the C compiler '" + compilerName + "' failed (" + result.describe() + ") on " + source +
                       (result.started && !result.output.empty() ? ":\n" + result.output : ""));
  }
  return readFile(library);
}

std::unique_ptr<LoadedKernel> CEngine::load(const std::vector<uint8_t>& code, const std::string& symbol) const {
  // glibc's dlopen returns an already loaded library when the path matches one it loaded
  // before, even if that file was unlinked since: the counter keeps paths unique in-process.
  static std::atomic<uint64_t> loads{0};
  std::string path = tempRoot() + "/coiter-" + std::to_string(getpid()) + "-" + std::to_string(loads++) + "-XXXXXX";
  int fd = mkstemp(path.data());  // mode 0600
  if (fd < 0) {
    throw CompileError("cannot create a temporary file in " + tempRoot() + ": " + errorText(errno));
  }
  size_t written = 0;
  while (written < code.size()) {
    ssize_t n = write(fd, code.data() + written, code.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  int writeError = written < code.size() ? errno : 0;
  if (close(fd) != 0 && writeError == 0) writeError = errno;
  if (writeError != 0) {
    unlink(path.c_str());
    throw CompileError("cannot write the kernel library " + path + ": " + errorText(writeError));
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string openError = handle ? "" : lastDlError();
  unlink(path.c_str());  // the mapping keeps the code alive
  if (!handle) throw CompileError("cannot load the kernel library: " + openError);
  // Point the kernel's runtime-function pointers (if it has any) at this process's runtime.
  for (const auto& f : runtimeFunctions()) {
    if (void* slot = dlsym(handle, f.name.c_str())) *static_cast<void**>(slot) = f.address;
  }
  dlerror();
  void* entry = dlsym(handle, symbol.c_str());
  if (!entry) {
    std::string error = lastDlError();
    dlclose(handle);
    throw CompileError("the kernel library has no symbol '" + symbol + "': " + error);
  }
  return std::make_unique<CKernel>(handle, entry);
}

// The compiler, its flags and the CPU: kernels cached on disk under another are not reused.
std::string CEngine::fingerprint() const {
  static const std::string cpu = hostCpu();
  CompilerState compiler = describeCompiler(compilerCommand());
  return "c;" + compiler.version + ";" + join(kernelFlags(compiler.gcc)) + ";" + cpu;
}

const Engine& cEngine() {
  static const CEngine engine;
  return engine;
}

}  // namespace coiter
