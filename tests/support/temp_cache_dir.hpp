// temp_cache_dir.hpp: a fresh on-disk cache directory per test, with
// FUSEDSAMPLE_CACHE_DIR pointing at it; removed (permissions restored) after.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace fusedsample::testing {

class TempCacheDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fs-cache-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ::setenv("FUSEDSAMPLE_CACHE_DIR", dir_.c_str(), 1);
    ::unsetenv("FUSEDSAMPLE_CACHE_DISABLE");
  }
  void TearDown() override {
    ::unsetenv("FUSEDSAMPLE_CACHE_DIR");
    namespace fsys = std::filesystem;
    std::error_code ec;
    fsys::permissions(dir_, fsys::perms::owner_all, fsys::perm_options::add, ec);
    if (fsys::exists(dir_ / "modules", ec))
      fsys::permissions(dir_ / "modules", fsys::perms::owner_all, fsys::perm_options::add, ec);
    fsys::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
};

}  // namespace fusedsample::testing
