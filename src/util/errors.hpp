// Typed exceptions of the core. The bindings map each to the Python class of API.md §7;
// nothing on a user input path may assert or abort instead of throwing one of these.
#pragma once
#include <stdexcept>
#include <string>

namespace coiter {

struct CoiterError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct FormatError : CoiterError {      // -> ct.FormatError(ValueError)
  using CoiterError::CoiterError;
};
struct ShapeError : CoiterError {       // -> ct.ShapeError(ValueError)
  using CoiterError::CoiterError;
};
struct DTypeError : CoiterError {       // -> TypeError
  using CoiterError::CoiterError;
};

}  // namespace coiter
