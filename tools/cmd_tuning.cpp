// cmd_tuning.cpp: `fusedsample export` and `fusedsample import` -- move tuned
// configs between machines as versioned JSON (autotune/tuning_json.cpp).
#include <fmt/format.h>

#include <iostream>

#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"
#include "tools/cli_args.hpp"
#include "tools/commands.hpp"

namespace fusedsample::cli {
namespace {

std::filesystem::path database_path() {
  const auto path = tuning_db_path();
  if (!path) throw FileError("the cache is disabled (FUSEDSAMPLE_CACHE_DISABLE) or no cache directory is known");
  return *path;
}

// The user's database, optionally with the built-in table and one GPU only.
// With the built-in table and no cache (disabled, or no directory known) the
// built-in table alone: it needs none (until session 61 that was an error).
TuningDb selected(bool with_builtin, const std::optional<std::string>& gpu) {
  TuningDb all = with_builtin && !tuning_db_path() ? TuningDb{} : load_tuning_db(database_path());
  if (with_builtin) all.merge(builtin_tuning_db());
  if (!gpu) return all;
  TuningDb out;
  out.environment = all.environment;
  for (const TuningEntry& e : all.entries())
    if (e.key.device.name == *gpu)
      for (const Measurement& m : e.configs) out.record(e.key, m);
  return out;
}

}  // namespace

int cmd_export(const std::vector<std::string>& argv) {
  ArgParser parser("fusedsample export [--gpu NAME] [--builtin] [-o FILE]",
                   "Writes the tuning database (tuning.json in the cache directory) as versioned\n"
                   "JSON, to FILE or standard output.");
  parser.option("gpu", "NAME", "only entries of this GPU model (as `fusedsample info` names it)")
      .flag("builtin", "include the built-in table")
      .option("output", "FILE", "write here instead of standard output", "", 'o');
  const Args args = parser.parse(argv);
  if (args.help_requested()) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  const TuningDb db = selected(args.has("builtin"), args.get("gpu"));
  if (const auto out = args.get_path("output")) {
    export_tuning_file(db, *out);
    fmt::print(stderr, "exported {} entries to {}\n", db.entries().size(), *out);
  } else {
    std::cout << tuning_db_to_json(db);  // ends in a newline
  }
  return kExitOk;
}

int cmd_import(const std::vector<std::string>& argv) {
  ArgParser parser("fusedsample import FILE",
                   "Validates FILE (schema, version, parameter names, every spec) and merges it into\n"
                   "the tuning database, keeping the faster measurement of each config.");
  std::vector<std::string> files, options;  // import has no options but --help
  bool operands = false;                      // after "--" every argument is a FILE, even one starting with -
  for (const auto& a : argv) {
    if (!operands && a == "--") {
      operands = true;
      continue;
    }
    (!operands && a.rfind("-", 0) == 0 ? options : files).push_back(a);
  }
  const Args args = parser.parse(options);
  if (args.help_requested()) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  if (files.size() != 1) throw UsageError(fmt::format("import takes exactly one FILE, got {}", files.size()));
  TuningDb incoming = import_tuning_file(files[0]);
  // The database's environment says where this machine measured; an import
  // adds entries without changing it (until session 40 it took the file's).
  incoming.environment = {};
  const auto path = database_path();
  if (!save_tuning_db(incoming, path)) throw FileError(fmt::format("could not write {}", path.string()));
  fmt::print("imported {} entries into {}\n", incoming.entries().size(), path.string());
  return kExitOk;
}

}  // namespace fusedsample::cli
