// trace_scripts_test.cpp: the trace-build scripts (scripts/*_trace.py) patch
// the templates and runtime by exact-match edits (scripts/tree_patch.py), so a
// refactor of those files can leave a script without its anchors. Each script
// is applied to a fresh copy of templates/, runtime/ and scripts/ and must
// succeed. (Session 24 moved FS_RE_DEAD into epilogue_registers_inputs.cuh and
// rounds_trace.py stopped applying until session 25's review.)
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "tests/support/cli_runner.hpp"

namespace {

namespace fsys = std::filesystem;
using fusedsample::testing::CliResult;
using fusedsample::testing::run_command;

class TraceScripts : public ::testing::TestWithParam<const char*> {};

TEST_P(TraceScripts, ApplyToTheCurrentTree) {
  if (run_command("python3 --version").code != 0) GTEST_SKIP() << "python3 is not installed: the trace scripts need it";
  const fsys::path src = FUSEDSAMPLE_SOURCE_DIR;
  std::string tmpl = (fsys::temp_directory_path() / "fs-trace-test-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fsys::path dir = tmpl;
  for (const char* sub : {"templates", "runtime", "scripts"})
    fsys::copy(src / sub, dir / sub, fsys::copy_options::recursive);
  const std::string script = GetParam();
  const CliResult r = run_command("python3 '" + (dir / "scripts" / script).string() + "'");
  EXPECT_EQ(r.code, 0) << script << " does not apply to the current templates/runtime:\n" << r.output;
  EXPECT_NE(r.output.find("applied"), std::string::npos) << r.output;
  std::error_code ec;
  fsys::remove_all(dir, ec);
}

INSTANTIATE_TEST_SUITE_P(All, TraceScripts,
                         ::testing::Values("phase_trace.py", "rounds_trace.py", "timeline_trace.py", "ring_trace.py"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = i.param;
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
