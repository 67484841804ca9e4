#include "util/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

extern char** environ;

namespace coiter {

namespace {

// Thread-safe, unlike strerror.
std::string errorText(int error) { return std::error_code(error, std::generic_category()).message(); }

}  // namespace

std::string ProcessResult::describe() const {
  if (!started) return "could not run: " + output;
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit status " + std::to_string(exitCode);
}

ProcessResult runProcess(const std::vector<std::string>& argv) {
  ProcessResult result;
  // Close-on-exec, so that children spawned concurrently by other threads do not inherit the
  // write end and keep the pipe open after this child exits.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.output = "pipe: " + errorText(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (error != 0) {
    close(fds[0]);
    result.output = errorText(error);
    return result;
  }
  result.started = true;

  // Read until EOF before waiting: a child blocked on a full pipe would never exit.
  char buffer[4096];
  while (true) {
    ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0)
      result.output.append(buffer, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fds[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {  // ECHILD: someone ignores SIGCHLD, so the status is lost
      result.output += "\nwaitpid: " + errorText(errno);
      return result;
    }
  }
  if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace coiter
