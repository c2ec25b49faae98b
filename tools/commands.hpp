// commands.hpp: the subcommands of the fusedsample tool. Each takes the
// arguments after its name and returns the process exit code (cli_args.hpp).
// They throw cli::UsageError for a bad command line and let the library's
// fusedsample::Error through; main reports both.
#pragma once
#include <string>
#include <vector>

namespace fusedsample::cli {

int cmd_info(const std::vector<std::string>& args);     // cmd_info.cpp
int cmd_compile(const std::vector<std::string>& args);  // cmd_compile.cpp
int cmd_demo(const std::vector<std::string>& args);     // cmd_demo.cpp
int cmd_export(const std::vector<std::string>& args);   // cmd_tuning.cpp
int cmd_import(const std::vector<std::string>& args);   // cmd_tuning.cpp
int cmd_tune(const std::vector<std::string>& args);     // cmd_tune.cpp

}  // namespace fusedsample::cli
