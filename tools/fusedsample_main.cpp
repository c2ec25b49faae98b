// fusedsample_main.cpp: the `fusedsample` tool -- subcommand dispatch and the
// one place errors become messages and exit codes (cli_args.hpp).
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "tools/cli_args.hpp"
#include "tools/commands.hpp"

namespace {

using fusedsample::cli::kExitError;
using fusedsample::cli::kExitOk;
using fusedsample::cli::kExitUsage;

constexpr const char* kHelp =
    "usage: fusedsample <command> [options]\n"
    "\n"
    "Samples the next LLM token straight out of the LM-head matmul (Gumbel-max on\n"
    "tiles of logits that never reach memory), with JIT-generated CUDA kernels.\n"
    "\n"
    "commands:\n"
    "  info       versions, CUDA driver and GPUs\n"
    "  compile    render and compile one kernel spec; print source, PTX or CUBIN facts\n"
    "  demo       sample from a random LM head, check against the CPU reference, time it\n"
    "  export     write tuned configs as versioned JSON\n"
    "  import     validate a JSON file of tuned configs and merge it into the database\n"
    "  tune       search kernel configs for one LM-head shape on this GPU and record them\n"
    "\n"
    "options:\n"
    "  -h, --help     show this help (or `fusedsample <command> --help`)\n"
    "  --version      print the generator version\n"
    "\n"
    "exit codes: 0 ok, 1 library error, 2 bad command line, 3 demo sample mismatch\n";

// Output to stdout is buffered: a write that failed (a full disk, a closed
// pipe) shows only when it is flushed, and must not end in exit code 0.
int flush_stdout(int rc) {
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (!failed) return rc;
  fmt::print(stderr, "error: cannot write to standard output: {}\n", std::strerror(errno));
  return rc == kExitOk ? kExitError : rc;
}

int run(const std::vector<std::string>& all) {
  if (all.empty()) {
    fmt::print(stderr, "{}", kHelp);
    return kExitUsage;
  }
  const std::string& command = all[0];
  const std::vector<std::string> rest(all.begin() + 1, all.end());
  const auto known = [](const std::string& c) {
    return c == "info" || c == "compile" || c == "demo" || c == "export" || c == "import" || c == "tune";
  };
  try {
    // `help COMMAND` is `COMMAND --help`; anything else after help or
    // --version is a usage error (until session 40 it was ignored, exit 0).
    if (command == "help" && rest.size() == 1 && known(rest[0])) return run({rest[0], "--help"});
    if (command == "help" && !rest.empty()) {
      if (!known(rest[0]))
        throw fusedsample::cli::UsageError(fmt::format(
            "unknown command '{}' (commands: info, compile, demo, export, import, tune)", rest[0]));
      throw fusedsample::cli::UsageError(fmt::format("'help' takes one command name, not also '{}'", rest[1]));
    }
    if (command == "-h" || command == "--help" || command == "help") {
      if (!rest.empty())
        throw fusedsample::cli::UsageError(fmt::format("'{}' takes no arguments, not '{}'", command, rest[0]));
      fmt::print("{}", kHelp);
      return kExitOk;
    }
    if (command == "--version") {
      if (!rest.empty())
        throw fusedsample::cli::UsageError(fmt::format("'--version' takes no arguments, not '{}'", rest[0]));
      fmt::print("fusedsample {} (generator {}, NVRTC {})\n", FUSEDSAMPLE_VERSION, fusedsample::generator_version(),
                 fusedsample::nvrtc_version());
      return kExitOk;
    }
    if (command == "info") return fusedsample::cli::cmd_info(rest);
    if (command == "compile") return fusedsample::cli::cmd_compile(rest);
    if (command == "demo") return fusedsample::cli::cmd_demo(rest);
    if (command == "export") return fusedsample::cli::cmd_export(rest);
    if (command == "import") return fusedsample::cli::cmd_import(rest);
    if (command == "tune") return fusedsample::cli::cmd_tune(rest);
    throw fusedsample::cli::UsageError(
        fmt::format("unknown command '{}' (commands: info, compile, demo, export, import, tune; see fusedsample --help)", command));
  } catch (const fusedsample::cli::UsageError& e) {
    const std::string who = known(command) ? "fusedsample " + command : "fusedsample";
    fmt::print(stderr, "{}: {}\nrun '{} --help' for usage\n", who, e.what(), who);
    return kExitUsage;
  } catch (const fusedsample::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitError;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "error: out of host memory\n");
    return kExitError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitError;
  }
}

}  // namespace

int main(int argc, char** argv) { return flush_stdout(run(std::vector<std::string>(argv + 1, argv + argc))); }
