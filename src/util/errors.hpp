// Typed exceptions of the core. The bindings map each to the Python class of docs/reference.md, "Errors";
// nothing on a user input path may assert or abort instead of throwing one of these.
#pragma once
#include <stdexcept>
#include <string>

namespace coiter {

struct CoiterError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct FormatError : CoiterError {  // -> ct.FormatError(ValueError)
  using CoiterError::CoiterError;
};
struct ShapeError : CoiterError {  // -> ct.ShapeError(ValueError)
  using CoiterError::CoiterError;
};
struct DTypeError : CoiterError {  // -> TypeError
  using CoiterError::CoiterError;
};
// An argument outside the values a setting accepts (e.g. a thread count below 1).
struct ArgumentError : CoiterError {  // -> ValueError
  using CoiterError::CoiterError;
};
struct ScheduleError : CoiterError {  // -> ct.ScheduleError(ValueError)
  using CoiterError::CoiterError;
};
struct SignatureError : CoiterError {  // -> ct.SignatureError(TypeError)
  using CoiterError::CoiterError;
};
struct CompileError : CoiterError {  // -> ct.CompileError(RuntimeError)
  using CoiterError::CoiterError;
};
// A GPU (or its libraries) could not do what was asked: no driver or device, NVRTC missing,
// device memory exhausted, a failed launch.
struct DeviceError : CoiterError {  // -> ct.DeviceError(RuntimeError)
  using CoiterError::CoiterError;
};
// A kernel stopped because the user asked it to (Ctrl-C): nothing of its result is kept.
struct InterruptedError : CoiterError {  // -> KeyboardInterrupt
  using CoiterError::CoiterError;
};
// A malformed expression string; `column` is 1-based (0 when unknown).
struct ParseError : CoiterError {  // -> ct.ParseError(ValueError), with .column
  ParseError(const std::string& message, int column) : CoiterError(message), column(column) {}
  int column;
};

}  // namespace coiter
