// cli_args.hpp: a small command-line parser for the fusedsample tool.
// Options are "--name value", "--name=value" or boolean "--name"; a few have a
// one-letter alias ("-o"). "-h"/"--help" anywhere asks for the help text.
// Anything wrong (unknown option, missing or malformed value) throws
// UsageError, whose message names the option; main turns it into exit code 2.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusedsample::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;     // the library reported an error
inline constexpr int kExitUsage = 2;     // bad command line
inline constexpr int kExitMismatch = 3;  // demo: GPU samples disagree with the CPU reference

class Args;

class ArgParser {
 public:
  // `usage` is the synopsis line after "usage: ", `summary` a paragraph.
  ArgParser(std::string usage, std::string summary);

  // An option taking a value. `default_text` is only shown in the help.
  ArgParser& option(std::string name, std::string metavar, std::string help, std::string default_text = {},
                    char alias = 0);
  // A boolean switch.
  ArgParser& flag(std::string name, std::string help);
  // Free text appended to the help (examples, notes).
  ArgParser& epilog(std::string text);

  // Parses args (without the program and subcommand names). Throws UsageError.
  Args parse(const std::vector<std::string>& args) const;
  std::string help() const;

 private:
  struct Spec {
    std::string name, metavar, help, default_text;
    char alias = 0;
    bool takes_value = true;
  };
  const Spec* find(const std::string& name) const;
  std::string usage_, summary_, epilog_;
  std::vector<Spec> specs_;
};

class Args {
 public:
  bool help_requested() const { return help_; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  // A file name: absent is nullopt, an empty value a UsageError naming the option (`-o ""`).
  std::optional<std::string> get_path(const std::string& name) const;
  // Typed accessors: the value must parse completely and lie in [lo, hi],
  // else UsageError naming --name and the value.
  std::int64_t get_int(const std::string& name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;
  std::uint64_t get_u64(const std::string& name, std::uint64_t fallback) const;
  double get_double(const std::string& name, double fallback) const;
  // One of `choices`.
  std::string get_choice(const std::string& name, const std::string& fallback,
                         const std::vector<std::string>& choices) const;

 private:
  friend class ArgParser;
  bool help_ = false;
  std::map<std::string, std::string> values_;  // flags map to ""
};

// "--name" as the user would type it, for messages.
std::string option_text(const std::string& name);

}  // namespace fusedsample::cli
