// The LLVM engine: optimization and object emission for the host, and loading of objects
// by a process-wide ORC ExecutionSession. See llvm_engine.hpp for the overall design.
#include "jit/llvm/llvm_engine.hpp"

#include "runtime/runtime_functions.hpp"

#include <atomic>
#include <cstdio>

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/EPCEHFrameRegistrar.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/llvm/llvm_codegen.hpp"
#include "util/errors.hpp"

namespace coiter {
namespace {

std::string describe(llvm::Error error) { return llvm::toString(std::move(error)); }

// The alignment of loop headers in kernels, in bytes (Jit::detectHost says why).
constexpr unsigned kLoopAlignment = 64;

// State shared by every compilation and load in the process: the host's description, and
// an ORC ExecutionSession with a JITLink object linker, which is all that loading object files
// needs. coiter never hands ORC IR (it compiles objects itself, see compile()), so LLJIT's
// IR compile layer, its two TargetMachines and its platform set-up would only cost time: the
// first kernel a process loads from the disk cache pays for whatever is built here (an
// LLJIT took 0.56 ms to create; this session and linker take 0.06 ms).
class Jit {
 public:
  // Created on first use and deliberately never destroyed: kernels owned by Python objects
  // may be released during interpreter shutdown, after static destructors would already
  // have torn the JIT down.
  static Jit& instance() {
    static Jit* jit = new Jit();
    return *jit;
  }

  llvm::orc::ExecutionSession& session() { return *session_; }
  llvm::orc::ObjectLinkingLayer& linker() { return *linker_; }
  // coiter's runtime functions (by address: this extension's symbols are not global), and
  // behind them the process's own symbols (malloc, calloc, free, libm's fmod for float Rem).
  llvm::orc::JITDylib& runtime() { return *runtime_; }
  llvm::orc::SymbolStringPtr symbol(llvm::StringRef name) {
    return session_->intern(globalPrefix_ ? (llvm::Twine(globalPrefix_) + name).str() : name.str());
  }
  const std::string& fingerprint() const { return fingerprint_; }

  // A TargetMachine for one compilation: TargetMachines must not be shared between threads
  // compiling at the same time, and creating one (~0.15 ms) is cheap next to the O3
  // pipeline and object emission (~8 ms for SpMV), so pooling them would not pay. Only
  // compiling needs LLVM's target registry (JITLink links without it), so it is initialized
  // here, once, rather than on a load from the disk cache.
  std::unique_ptr<llvm::TargetMachine> createMachine() {
    // (The asm parser assembles the empty asm statements of branch-free float selects.)
    static const bool registered = !llvm::InitializeNativeTarget() && !llvm::InitializeNativeTargetAsmPrinter() &&
                                   !llvm::InitializeNativeTargetAsmParser();
    if (!registered) throw CompileError("LLVM: this build of LLVM cannot generate code for the host");
    auto machine = host_.createTargetMachine();
    if (!machine) throw CompileError("LLVM: cannot create a target machine: " + describe(machine.takeError()));
    return std::move(*machine);
  }

  // Every kernel gets a JITDylib of its own; names only need to be unique.
  std::string nextDylibName() { return "coiter_kernel_" + std::to_string(nextDylib_++); }

 private:
  Jit() : host_(detectHost()) {
    auto process = llvm::orc::SelfExecutorProcessControl::Create();
    if (!process) throw CompileError("LLVM: cannot create the JIT: " + describe(process.takeError()));
    session_ = std::make_unique<llvm::orc::ExecutionSession>(std::move(*process));
    linker_ = std::make_unique<llvm::orc::ObjectLinkingLayer>(*session_);
    // Kernels' unwind tables are registered, as LLJIT does, so debuggers and profilers can
    // walk the stack through them.
    auto registrar = llvm::orc::EPCEHFrameRegistrar::Create(*session_);
    if (!registrar) throw CompileError("LLVM: cannot create the JIT: " + describe(registrar.takeError()));
    linker_->addPlugin(std::make_unique<llvm::orc::EHFrameRegistrationPlugin>(*session_, std::move(*registrar)));
    // Mach-O prefixes C symbols with '_'; ELF and 64-bit COFF do not.
    globalPrefix_ = host_.getTargetTriple().isOSBinFormatMachO() ? '_' : '\0';
    runtime_ = &session_->createBareJITDylib("coiter_runtime");
    llvm::orc::SymbolMap functions;
    for (const auto& f : runtimeFunctions()) {
      functions[symbol(f.name)] = {llvm::orc::ExecutorAddr::fromPtr(f.address), llvm::JITSymbolFlags::Exported};
    }
    if (llvm::Error error = runtime_->define(llvm::orc::absoluteSymbols(std::move(functions))))
      throw CompileError("LLVM: cannot define coiter's runtime functions: " + describe(std::move(error)));
    auto processSymbols = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(globalPrefix_);
    if (!processSymbols)
      throw CompileError("LLVM: cannot search the process's symbols: " + describe(processSymbols.takeError()));
    runtime_->addGenerator(std::move(*processSymbols));
    char hash[17];
    uint64_t features = llvm::xxh3_64bits(host_.getFeatures().getString());
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(features));
    fingerprint_ = std::string("llvm;") + LLVM_VERSION_STRING + ";" + host_.getCPU() + ";" + hash +
                   ";align-loops=" + std::to_string(kLoopAlignment);
  }

  static llvm::orc::JITTargetMachineBuilder detectHost() {
    auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!host) throw CompileError("LLVM: cannot detect the host: " + describe(host.takeError()));
    // Kernels land anywhere in the address space: position-independent code in the small
    // code model reaches libc through GOT/PLT stubs that the JIT linker creates.
    host->setRelocationModel(llvm::Reloc::PIC_);
    host->setCodeModel(llvm::CodeModel::Small);
    host->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    // Loops start at 64-byte boundaries (x86's default is 16). A kernel's hottest loops are
    // often a few instructions long (a CSR row of 6 entries: 24 bytes), and one that straddles
    // a 64-byte line of the instruction fetch ran a third slower: the same SpMV object ran at
    // 37 or 52 us depending only on where the linker put it, and in process (JIT memory is
    // page-aligned, so the object's own offsets decide) whole calls went from 0.69 to 0.89 of
    // SciPy's speed on a 90,000-row Poisson matrix and from 0.62 to 0.78 on 10,000 random
    // rows of 6, one thread, with 32-byte boundaries; SpAdd, SpMM, SpGEMM and CSC SpMV within
    // noise (2026-11-28). 32 bytes still let a loop straddle a line: when the short rows'
    // one-step path made the SpMV kernel's other functions longer, the far-gather function,
    // unchanged, moved and cop20k_A's SpMV fell from 0.96-0.99 to 0.89-0.92 of SciPy's speed;
    // at 64 it was 0.97-0.99, and the Poisson matrix of 10^4 rows 0.79-0.84 against
    // 0.72-0.73 (one thread, alternate fresh processes; SpMM, SpGEMM, SpAdd, SDDMM and
    // the elementwise product within noise).
    host->getOptions().LoopAlignment = kLoopAlignment;
    return std::move(*host);
  }

  llvm::orc::JITTargetMachineBuilder host_;
  std::unique_ptr<llvm::orc::ExecutionSession> session_;
  std::unique_ptr<llvm::orc::ObjectLinkingLayer> linker_;
  llvm::orc::JITDylib* runtime_ = nullptr;
  char globalPrefix_ = '\0';
  std::string fingerprint_;
  std::atomic<uint64_t> nextDylib_{0};
};

// LLVM's default diagnostic handler exits the process on an error (e.g. one reported by the
// backend); collect errors instead and turn them into a CompileError.
class Diagnostics {
 public:
  explicit Diagnostics(llvm::LLVMContext& context) { context.setDiagnosticHandlerCallBack(&handle, this); }
  void check(const std::string& what) const {
    if (!errors_.empty()) throw CompileError("LLVM: compiling " + what + ": " + errors_);
  }

 private:
  static void handle(const llvm::DiagnosticInfo* info, void* self) {
    if (info->getSeverity() != llvm::DS_Error) return;
    llvm::raw_string_ostream out(static_cast<Diagnostics*>(self)->errors_);
    llvm::DiagnosticPrinterRawOStream printer(out);
    info->print(printer);
    out << "\n";
  }
  std::string errors_;
};

// The standard O3 pipeline with both vectorizers on (SLP is off by default in
// PipelineTuningOptions; clang turns it on at -O2 and above).
void optimize(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgsccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgsccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgsccs, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, modules);
}

// Generates and optimizes `f`, then hands the module to `finish`, whose result is returned.
template <typename Finish>
auto withOptimizedModule(const ir::Function& f, Finish&& finish) {
  std::unique_ptr<llvm::TargetMachine> machine = Jit::instance().createMachine();
  llvm::LLVMContext context;
  Diagnostics diagnostics(context);
  std::unique_ptr<llvm::Module> module = generateModule(f, context, *machine);
  optimize(*module, *machine);
  auto result = finish(*module, *machine);
  diagnostics.check(f.name);
  return result;
}

// A kernel in its own JITDylib; removing the JITDylib frees the code.
class JitKernel final : public LoadedKernel {
 public:
  JitKernel(llvm::orc::ExecutionSession& session, llvm::orc::JITDylib& dylib, KernelEntry entry)
      : session_(session), dylib_(dylib) {
    entry_ = entry;
  }
  ~JitKernel() override {
    // A destructor cannot throw; a failure here leaks the code but must not go unnoticed.
    if (llvm::Error error = session_.removeJITDylib(dylib_))
      llvm::logAllUnhandledErrors(std::move(error), llvm::errs(), "coiter: unloading a kernel: ");
  }

 private:
  llvm::orc::ExecutionSession& session_;
  llvm::orc::JITDylib& dylib_;
};

}  // namespace

std::string LlvmEngine::source(const ir::Function& f) const {
  return withOptimizedModule(f, [](llvm::Module& module, llvm::TargetMachine&) {
    std::string text;
    llvm::raw_string_ostream out(text);
    module.print(out, nullptr);
    return text;
  });
}

std::vector<uint8_t> LlvmEngine::compile(const ir::Function& f) const {
  return withOptimizedModule(f, [&f](llvm::Module& module, llvm::TargetMachine& machine) {
    llvm::SmallVector<char, 0> object;
    llvm::raw_svector_ostream out(object);
    llvm::legacy::PassManager codegen;
    if (machine.addPassesToEmitFile(codegen, out, nullptr, llvm::CodeGenFileType::ObjectFile))
      throw CompileError("LLVM: cannot emit an object file for " + f.name + " on " + machine.getTargetTriple().str());
    codegen.run(module);
    return std::vector<uint8_t>(object.begin(), object.end());
  });
}

std::unique_ptr<LoadedKernel> LlvmEngine::load(const std::vector<uint8_t>& code, const std::string& symbol) const {
  Jit& jit = Jit::instance();
  llvm::orc::ExecutionSession& session = jit.session();
  llvm::orc::JITDylib& dylib = session.createBareJITDylib(jit.nextDylibName());
  dylib.addToLinkOrder(jit.runtime());
  // On failure the half-loaded JITDylib is removed again, and both errors are reported.
  auto failed = [&](llvm::Error error) -> CompileError {
    std::string message = "LLVM: cannot load " + symbol + ": " + describe(std::move(error));
    if (llvm::Error removal = session.removeJITDylib(dylib))
      message += "; removing it failed too: " + describe(std::move(removal));
    return CompileError(message);
  };
  llvm::StringRef bytes(reinterpret_cast<const char*>(code.data()), code.size());
  auto object = llvm::MemoryBuffer::getMemBufferCopy(bytes, symbol);
  if (llvm::Error error = jit.linker().add(dylib, std::move(object))) throw failed(std::move(error));
  // The lookup links the object (resolving malloc & co.) and makes it executable.
  auto address = session.lookup({&dylib}, jit.symbol(symbol));
  if (!address) throw failed(address.takeError());
  auto entry = address->getAddress().toPtr<KernelEntry>();
  return std::make_unique<JitKernel>(session, dylib, entry);
}

std::string LlvmEngine::fingerprint() const { return Jit::instance().fingerprint(); }

const Engine* llvmEngine() {
  static const LlvmEngine engine;
  return &engine;
}

}  // namespace coiter
