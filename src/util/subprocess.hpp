// Running an external program (the C compiler) without a shell, collecting what it prints.
#pragma once
#include <string>
#include <vector>

namespace coiter {

struct ProcessResult {
  bool started = false;  // false: the program could not be run, and `output` says why
  int exitCode = -1;     // the exit status, when the program exited
  int signal = 0;        // the signal that ended the program, or 0
  std::string output;    // its stdout and stderr, interleaved
  bool succeeded() const { return started && signal == 0 && exitCode == 0; }
  // "exit status 1", "killed by signal 9", "could not run: No such file or directory".
  std::string describe() const;
};

// Runs argv[0], searched in PATH, with stdin from /dev/null, and waits for it. Safe to call
// from several threads; never leaves a zombie process.
ProcessResult runProcess(const std::vector<std::string>& argv);

}  // namespace coiter
