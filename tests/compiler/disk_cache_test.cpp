// disk_cache_test.cpp: the on-disk module cache. Corrupt files are ignored
// and rebuilt, unwritable directories are tolerated, concurrent writers (threads
// and processes) never leave a partial file. CPU only (NVRTC, no GPU).
#include "tests/support/temp_cache_dir.hpp"
#include "fusedsample/disk_cache.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"

namespace fs = fusedsample;
namespace fsys = std::filesystem;

namespace {

using CacheDirTest = fusedsample::testing::TempCacheDirTest;

std::string hex_key(int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%032x", 0xabc000 + i);
  return buf;
}

// A synthetic kernel (no NVRTC): deterministic contents per index.
fs::CompiledKernel fake_kernel(int i, std::size_t ptx_bytes = 4096) {
  fs::CompiledKernel k;
  k.spec.tile_n = 8 * (1 + i % 4);
  k.source = "// source " + std::to_string(i);
  k.options = {"--gpu-architecture=sm_90", "-opt" + std::to_string(i)};
  k.ptx.assign(ptx_bytes, char('a' + i % 26));
  for (int j = 0; j < 1000 + i; ++j) k.cubin.push_back(char(j * 7 + i));
  k.log = "log " + std::to_string(i);
  k.cache_key = hex_key(i);
  return k;
}

bool same(const fs::CompiledKernel& a, const fs::CompiledKernel& b) {
  return a.spec == b.spec && a.source == b.source && a.options == b.options && a.ptx == b.ptx && a.cubin == b.cubin &&
         a.log == b.log && a.cache_key == b.cache_key;
}

void write_bytes(const fsys::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string read_bytes(const fsys::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A kernel spec the rest of the suite does not compile (memo stays cold).
fs::KernelSpec rare_spec() { return fs::KernelSpec::parse("fp16 sm_86 mma_sync tv64 tn8 td32 s2 w2x1"); }

}  // namespace

TEST_F(CacheDirTest, DirectoryComesFromEnvironmentAtCallTime) {
  EXPECT_EQ(fs::cache_directory(), dir_);
  ::unsetenv("FUSEDSAMPLE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  EXPECT_EQ(fs::cache_directory(), fsys::path("/xdg/cache/fusedsample"));
  const char* home = std::getenv("HOME");
  // A relative XDG_CACHE_HOME is ignored, as the XDG specification says (until session 40 the cache went
  // below whatever directory the process ran in).
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  if (home && *home) EXPECT_EQ(fs::cache_directory(), fsys::path(home) / ".cache" / "fusedsample");
  ::unsetenv("XDG_CACHE_HOME");
  if (home && *home) EXPECT_EQ(fs::cache_directory(), fsys::path(home) / ".cache" / "fusedsample");
  ::setenv("FUSEDSAMPLE_CACHE_DIR", dir_.c_str(), 1);
  ::setenv("FUSEDSAMPLE_CACHE_DISABLE", "1", 1);
  EXPECT_FALSE(fs::disk_cache_enabled());
  EXPECT_FALSE(fs::cache_directory().has_value());
  EXPECT_FALSE(fs::DiskCache::from_environment().has_value());
  ::setenv("FUSEDSAMPLE_CACHE_DISABLE", "0", 1);
  EXPECT_TRUE(fs::disk_cache_enabled());
  ::unsetenv("FUSEDSAMPLE_CACHE_DISABLE");
}

TEST_F(CacheDirTest, StoreThenLoadRoundTrips) {
  const fs::DiskCache cache(dir_);
  const auto k = fake_kernel(3);
  EXPECT_FALSE(cache.load(k.cache_key).has_value());
  ASSERT_TRUE(cache.store(k));
  EXPECT_TRUE(fsys::exists(dir_ / "modules" / (k.cache_key + ".fsmod")));
  const auto back = cache.load(k.cache_key);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(same(*back, k));
  // No temp files left behind.
  int files = 0;
  for (const auto& e : fsys::directory_iterator(dir_ / "modules")) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".fsmod") << e.path();
  }
  EXPECT_EQ(files, 1);
}

// A writer killed between its temp file and the rename left the temp file
// for good until session 40. A store now removes those an hour old and keeps
// younger ones (another process's write may be in progress).
TEST_F(CacheDirTest, StoreRemovesStaleTempFiles) {
  const fs::DiskCache cache(dir_);
  fsys::create_directories(cache.modules_dir());
  const fsys::path stale = cache.modules_dir() / (std::string(32, 'c') + ".fsmod.tmp.AbCdEf");
  const fsys::path young = cache.modules_dir() / (std::string(32, 'd') + ".fsmod.tmp.GhIjKl");
  const fsys::path other = cache.modules_dir() / "notes.txt";  // not ours: kept at any age
  for (const auto& p : {stale, young, other}) std::ofstream(p) << "partial";
  const auto two_hours_ago = fsys::file_time_type::clock::now() - std::chrono::hours(2);
  fsys::last_write_time(stale, two_hours_ago);
  fsys::last_write_time(other, two_hours_ago);
  ASSERT_TRUE(cache.store(fake_kernel(4)));
  EXPECT_FALSE(fsys::exists(stale));
  EXPECT_TRUE(fsys::exists(young));
  EXPECT_TRUE(fsys::exists(other));
}

TEST_F(CacheDirTest, CorruptFilesAreIgnoredWithOneWarningAndRebuilt) {
  const fs::DiskCache cache(dir_);
  const auto good = fake_kernel(1);
  const std::string bytes = fs::encode_module(good);
  // Each case builds a defective file for kernel k (whose key names the file).
  struct Case {
    const char* name;
    std::string (*make)(const fs::CompiledKernel& k);
    const char* why;
  };
  const std::vector<Case> cases = {
      {"truncated", [](const fs::CompiledKernel& k) { auto b = fs::encode_module(k); return b.substr(0, b.size() / 2); },
       "size mismatch"},
      {"header only", [](const fs::CompiledKernel& k) { return fs::encode_module(k).substr(0, 20); }, "truncated"},
      {"empty", [](const fs::CompiledKernel&) { return std::string(); }, "truncated"},
      {"garbage", [](const fs::CompiledKernel&) { return std::string(5000, '\x5a'); }, "bad magic"},
      {"wrong key", [](const fs::CompiledKernel&) { return fs::encode_module(fake_kernel(2)); }, "holds key"},
      {"wrong version",
       [](const fs::CompiledKernel& k) { auto b = fs::encode_module(k); b[8] ^= 0x7f; return b; }, "format version"},
      // a payload length that wraps the header's sum: the message said "header says 63" until session 60
      {"huge payload length",
       [](const fs::CompiledKernel& k) {
         auto b = fs::encode_module(k);
         for (int i = 16; i < 24; ++i) b[i] = '\xff';
         return b;
       },
       "18446744073709551615 (payload)"},
      {"bit flip",
       [](const fs::CompiledKernel& k) { auto b = fs::encode_module(k); b[b.size() - 10] ^= 0x01; return b; },
       "checksum"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].name);
    // A fresh key per case so the once-per-file warning fires each time.
    auto k = good;
    k.cache_key = hex_key(100 + int(i));
    const std::string c = cases[i].make(k);
    fsys::create_directories(dir_ / "modules");
    write_bytes(cache.module_path(k.cache_key), c);
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(cache.load(k.cache_key).has_value());
    EXPECT_FALSE(cache.load(k.cache_key).has_value());
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("corrupt"), std::string::npos) << err;
    EXPECT_NE(err.find(cases[i].why), std::string::npos) << err;
    EXPECT_EQ(err.find("corrupt"), err.rfind("corrupt")) << "warned twice: " << err;
    // Rebuilt: storing overwrites the bad file, and it then loads.
    ASSERT_TRUE(cache.store(k));
    const auto back = cache.load(k.cache_key);
    ASSERT_TRUE(back.has_value());
    EXPECT_TRUE(same(*back, k));
  }
  EXPECT_THROW(fs::decode_module(bytes, hex_key(999)), fs::FileError);
}

// Session 31: a directory where a module file belongs made the read throw
// (std::ios_base::failure), and the compile failed instead of going on
// uncached.
TEST_F(CacheDirTest, DirectoryInPlaceOfAModuleIsAMiss) {
  const fs::DiskCache cache(dir_);
  auto k = fake_kernel(1);
  k.cache_key = hex_key(300);
  fsys::create_directories(cache.module_path(k.cache_key));
  ::testing::internal::CaptureStderr();
  std::optional<fs::CompiledKernel> got;
  EXPECT_NO_THROW(got = cache.load(k.cache_key));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(got.has_value());
  EXPECT_NE(err.find("is a directory"), std::string::npos) << err;
}

TEST_F(CacheDirTest, LoadOrCompileUsesDiskAndRebuildsCorruptEntries) {
  const fs::DiskCache cache(dir_);
  const fs::RenderedKernel r = fs::render_kernel(rare_spec());
  const std::string key = fs::kernel_cache_key(r);
  bool from_disk = true;
  const fs::CompiledKernel first = fs::load_or_compile(r, &cache, &from_disk);
  EXPECT_FALSE(from_disk);
  EXPECT_EQ(first.cache_key, key);
  ASSERT_TRUE(fsys::exists(cache.module_path(key)));
  const fs::CompiledKernel second = fs::load_or_compile(r, &cache, &from_disk);
  EXPECT_TRUE(from_disk);
  EXPECT_TRUE(same(first, second));
  // Garble it: the next call warns, compiles again and rewrites a good file.
  const std::string good = read_bytes(cache.module_path(key));
  write_bytes(cache.module_path(key), good.substr(0, good.size() - 100));
  ::testing::internal::CaptureStderr();
  const fs::CompiledKernel third = fs::load_or_compile(r, &cache, &from_disk);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(from_disk);
  EXPECT_NE(err.find("corrupt"), std::string::npos);
  EXPECT_EQ(third.ptx, first.ptx);
  EXPECT_EQ(read_bytes(cache.module_path(key)), good);
}

// A module whose log has no ptxas -v report (what NVRTC 12.9+ returned for a
// program served from its own cache, before nvrtc_options turned that cache
// off) is compiled again and replaced: kernel_resources() reads that report,
// and the tuner's spill screen passed spilling kernels without it (session 37).
TEST_F(CacheDirTest, ModulesWithoutPtxasReportAreRebuilt) {
  const fs::DiskCache cache(dir_);
  const fs::RenderedKernel r = fs::render_kernel(rare_spec());
  bool from_disk = true;
  const fs::CompiledKernel first = fs::load_or_compile(r, &cache, &from_disk);
  ASSERT_TRUE(fs::has_ptxas_report(first.log)) << first.log;
  fs::CompiledKernel logless = first;
  logless.log.clear();
  ASSERT_TRUE(cache.store(logless));
  ::testing::internal::CaptureStderr();
  const fs::CompiledKernel again = fs::load_or_compile(r, &cache, &from_disk);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");  // not a corrupt file: no warning
  EXPECT_FALSE(from_disk);
  EXPECT_TRUE(fs::kernel_resources(again, "fs_fused_kernel").has_value()) << again.log;
  EXPECT_TRUE(fs::has_ptxas_report(cache.load(first.cache_key)->log));
}

TEST(NvrtcOptions, OwnCacheOffFromNvrtc129AndNotInTheKey) {
  const fs::RenderedKernel r = fs::render_kernel(rare_spec());
  const auto opts = fs::nvrtc_options(r);
  const std::string version = fs::nvrtc_version();
  const int major = std::stoi(version), minor = std::stoi(version.substr(version.find('.') + 1));
  const bool own_cache = major > 12 || (major == 12 && minor >= 9);
  EXPECT_EQ(std::count(opts.begin(), opts.end(), "--no-cache"), own_cache ? 1 : 0) << version;
  EXPECT_EQ(std::count(r.options.begin(), r.options.end(), "--no-cache"), 0);  // rendered options: the key's
  EXPECT_FALSE(fs::has_ptxas_report(""));
  EXPECT_FALSE(fs::has_ptxas_report("ptxas info    : 30 bytes gmem"));
  EXPECT_TRUE(fs::has_ptxas_report("ptxas info    : Used 168 registers, used 1 barriers"));
}

// The L2 promotion of the TMA maps is a launch setting: specs that differ
// only there render the same source, share a cache key, and the binary loaded
// for one carries the spec it was asked for.
TEST_F(CacheDirTest, L2PromotionSharesTheBinary) {
  fs::KernelSpec a = fs::KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn32 td128 s4 w16x1");
  fs::KernelSpec b = a;
  b.l2_promotion = 0;
  const fs::RenderedKernel ra = fs::render_kernel(a), rb = fs::render_kernel(b);
  EXPECT_EQ(ra.source, rb.source);
  EXPECT_EQ(fs::kernel_cache_key(ra), fs::kernel_cache_key(rb));
  EXPECT_EQ(rb.spec, b);
  fs::KernelSpec other = a;  // a kernel change is still a new key
  other.stages = 5;
  EXPECT_NE(fs::kernel_cache_key(fs::render_kernel(other)), fs::kernel_cache_key(ra));
  const fs::DiskCache cache(dir_);
  bool from_disk = true;
  const fs::CompiledKernel first = fs::load_or_compile(ra, &cache, &from_disk);
  EXPECT_FALSE(from_disk);
  const fs::CompiledKernel second = fs::load_or_compile(rb, &cache, &from_disk);
  EXPECT_TRUE(from_disk);
  EXPECT_EQ(second.spec, b);
  EXPECT_EQ(second.cubin, first.cubin);
  // The process memo shares it too (from the disk entry just written), labelled per caller.
  const auto ka = fs::compile_kernel(a), kb = fs::compile_kernel(b);
  EXPECT_EQ(ka->spec, a);
  EXPECT_EQ(kb->spec, b);
  EXPECT_EQ(kb->cubin, first.cubin);
  // A promotion where it is not allowed is refused, not compiled as its binary spec.
  fs::KernelSpec no_tma = fs::KernelSpec::parse("bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1");
  no_tma.l2_promotion = 128;
  EXPECT_THROW(fs::compile_kernel(no_tma), fs::InvalidArgument);
}

TEST_F(CacheDirTest, CompileKernelStoresIntoEnvironmentCache) {
  const fs::KernelSpec spec = rare_spec();
  const std::string key = fs::kernel_cache_key(fs::render_kernel(spec));
  const auto k = fs::compile_kernel(spec);
  ASSERT_TRUE(k);
  const fs::DiskCache cache(dir_);
  if (!fsys::exists(cache.module_path(key)))
    GTEST_SKIP() << "spec was already memoized in this process; disk path covered by LoadOrCompile";
  const auto back = cache.load(key);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->ptx, k->ptx);
}

TEST_F(CacheDirTest, DisabledCacheWritesNothing) {
  ::setenv("FUSEDSAMPLE_CACHE_DISABLE", "1", 1);
  EXPECT_FALSE(fs::DiskCache::from_environment().has_value());
  ::unsetenv("FUSEDSAMPLE_CACHE_DISABLE");
  EXPECT_TRUE(fsys::is_empty(dir_));
}

TEST_F(CacheDirTest, UncreatableDirectoryWorksWithoutWrites) {
  // A cache root whose parent is a regular file: mkdir fails even as root.
  write_bytes(dir_ / "file", "x");
  const fs::DiskCache cache(dir_ / "file" / "cache");
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.store(fake_kernel(5)));
  EXPECT_FALSE(cache.store(fake_kernel(6)));
  EXPECT_FALSE(cache.load(hex_key(5)).has_value());
  const fs::RenderedKernel r = fs::render_kernel(rare_spec());
  bool from_disk = true;
  const auto k = fs::load_or_compile(r, &cache, &from_disk);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(from_disk);
  EXPECT_FALSE(k.ptx.empty());
  EXPECT_NE(err.find("not writable"), std::string::npos) << err;
  EXPECT_EQ(err.find("not writable"), err.rfind("not writable")) << "warned more than once: " << err;
  EXPECT_FALSE(fsys::exists(dir_ / "file" / "cache"));
}

TEST_F(CacheDirTest, ReadOnlyDirectoryWorksWithoutWrites) {
  const fsys::path modules = dir_ / "modules";
  fsys::create_directories(modules);
  fsys::permissions(modules, fsys::perms::owner_read | fsys::perms::owner_exec, fsys::perm_options::replace);
  {
    std::ofstream probe(modules / "probe");
    if (probe) {
      probe.close();
      fsys::remove(modules / "probe");
      GTEST_SKIP() << "running as root (or with CAP_DAC_OVERRIDE): chmod does not stop writes; "
                      "UncreatableDirectoryWorksWithoutWrites covers the unwritable case";
    }
  }
  const fs::DiskCache cache(dir_);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.store(fake_kernel(7)));
  EXPECT_FALSE(cache.load(hex_key(7)).has_value());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("not writable"), std::string::npos) << err;
  EXPECT_TRUE(fsys::is_empty(modules));
}

TEST_F(CacheDirTest, ConcurrentWritersThreadsAndProcesses) {
  constexpr int kShared = 4, kProcs = 3, kThreads = 4, kIters = 15;
  const fs::DiskCache cache(dir_);
  // One writer: stores shared keys and its own key, checking every load it sees.
  auto writer = [&](int id) -> bool {
    bool ok = true;
    for (int it = 0; it < kIters; ++it) {
      for (int s = 0; s < kShared; ++s) {
        const auto k = fake_kernel(s, 64 * 1024);
        ok &= cache.store(k);
        const auto back = cache.load(k.cache_key);
        ok &= back.has_value() && same(*back, k);
      }
      const auto mine = fake_kernel(50 + id, 16 * 1024);
      ok &= cache.store(mine);
    }
    return ok;
  };
  // Fork first (before this test starts threads), then run threads here.
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(writer(p) ? 0 : 1);
    children.push_back(pid);
  }
  std::vector<std::thread> threads;
  std::vector<char> results(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { results[t] = writer(kProcs + t); });
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(results[t]) << "thread " << t;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " status " << status;
  }
  int files = 0;
  for (const auto& e : fsys::directory_iterator(dir_ / "modules")) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".fsmod") << "leftover " << e.path();
  }
  EXPECT_EQ(files, kShared + kProcs + kThreads);
  for (int s = 0; s < kShared; ++s) {
    const auto back = cache.load(hex_key(s));
    ASSERT_TRUE(back.has_value()) << s;
    EXPECT_TRUE(same(*back, fake_kernel(s, 64 * 1024)));
  }
  for (int w = 0; w < kProcs + kThreads; ++w) {
    const auto back = cache.load(hex_key(50 + w));
    ASSERT_TRUE(back.has_value()) << w;
    EXPECT_TRUE(same(*back, fake_kernel(50 + w, 16 * 1024)));
  }
}
