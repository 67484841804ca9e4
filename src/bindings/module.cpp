// The extension module coiter._core: thin bindings, no logic. C++ exceptions become the
// Python classes of coiter.errors (docs/reference.md, "Errors").
#include <pybind11/pybind11.h>

#include "util/errors.hpp"

namespace py = pybind11;

namespace coiter::bindings {
void bindFormats(py::module_& m);
void bindStorage(py::module_& m);
void bindCompiler(py::module_& m);
void bindRuntime(py::module_& m);
void bindCuda(py::module_& m);
void bindAutosched(py::module_& m);
void bindIo(py::module_& m);
}  // namespace coiter::bindings

// What threadpoolctl recognizes coiter's core by (python/coiter/threads.py): a symbol the
// module exports under a name no other library's `_core` has. (The core's own symbols stay
// private to the module: --exclude-libs, CMakeLists.txt.)
extern "C" __attribute__((visibility("default"))) const char coiter_thread_pool[] = "coiter";

namespace {

void raise(const char* name, const std::exception& e) {
  py::object cls = py::module_::import("coiter.errors").attr(name);
  PyErr_SetString(cls.ptr(), e.what());
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "coiter's C++ core: formats, level types and tensor storage";
  m.attr("__version__") = COITER_VERSION;
  m.attr("with_llvm") = static_cast<bool>(COITER_WITH_LLVM);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const coiter::FormatError& e) {
      raise("FormatError", e);
    } catch (const coiter::ShapeError& e) {
      raise("ShapeError", e);
    } catch (const coiter::DTypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const coiter::ArgumentError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const coiter::ScheduleError& e) {
      raise("ScheduleError", e);
    } catch (const coiter::SignatureError& e) {
      raise("SignatureError", e);
    } catch (const coiter::CompileError& e) {
      raise("CompileError", e);
    } catch (const coiter::DeviceError& e) {
      raise("DeviceError", e);
    } catch (const coiter::InterruptedError&) {
      // Python's own SIGINT handler ran too (runtime/interrupts.hpp): let it raise what it
      // raises (KeyboardInterrupt, or whatever a program installed); raise it ourselves if
      // the signal did not reach Python.
      if (PyErr_CheckSignals() == 0) PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const coiter::ParseError& e) {
      py::object cls = py::module_::import("coiter.errors").attr("ParseError");
      py::object error = cls(e.what(), py::arg("column") = e.column);
      PyErr_SetObject(cls.ptr(), error.ptr());
    } catch (const coiter::CoiterError& e) {
      raise("CoiterError", e);
    }
  });
  coiter::bindings::bindFormats(m);
  coiter::bindings::bindStorage(m);
  coiter::bindings::bindCompiler(m);
  coiter::bindings::bindRuntime(m);
  coiter::bindings::bindCuda(m);
  coiter::bindings::bindAutosched(m);
  coiter::bindings::bindIo(m);
}
