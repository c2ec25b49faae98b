// cli_runner.hpp: runs the built `fusedsample` binary (FUSEDSAMPLE_CLI) with
// its own cache directory, or any shell command, and returns the exit code and
// stdout+stderr.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace fusedsample::testing {

struct CliResult {
  int code;
  std::string output;
};

// Runs a shell command; its exit code (-1 if it did not exit) and stdout+stderr.
inline CliResult run_command(const std::string& cmd) {
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline CliResult run_cli(const std::filesystem::path& cache, const std::string& args) {
  return run_command("FUSEDSAMPLE_CACHE_DIR='" + cache.string() + "' '" FUSEDSAMPLE_CLI "' " + args);
}

}  // namespace fusedsample::testing
