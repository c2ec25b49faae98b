// builtin_tuning.cpp: the tuning table shipped with the library: every
// autotune/builtin/*.json (files written by `fusedsample export` after our
// own `fusedsample tune` runs, with every config's timing), embedded at build
// time and merged. See BENCHMARKS.md for the runs.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fusedsample {

const TuningDb& builtin_tuning_db() {
  static const TuningDb db = [] {
    TuningDb all;
    for (const EmbeddedFile& f : embedded_tuning_files()) {
      try {
        // A config this build does not accept is not used (the lookup skips
        // it), not the whole table; tests check that every config is accepted.
        std::vector<std::string> invalid;
        all.merge(tuning_db_from_json(std::string_view(f.data, f.size), f.name, &invalid));
        for (const std::string& s : invalid)
          std::fprintf(stderr, "fusedsample: warning: built-in tuning config not used: %s\n", s.c_str());
      } catch (const Error& e) {  // a build-time file; tests check that all parse
        std::fprintf(stderr, "fusedsample: warning: built-in tuning table %s ignored: %s\n", f.name, e.what());
      }
    }
    return all;
  }();
  return db;
}

}  // namespace fusedsample
