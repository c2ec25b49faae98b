// tuning_store_test.cpp: the tuning database persisted in the cache dir:
// save merges, corrupt files are ignored with a warning, import/export of
// files, and tuned_spec() reading <cache dir>/tuning.json.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/temp_cache_dir.hpp"
#include "compiler/file_io.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fs = fusedsample;
namespace fsys = std::filesystem;

namespace {

using TuningStoreTest = fusedsample::testing::TempCacheDirTest;

const fs::DeviceIdentity kGpu{"NVIDIA L40S", 142, 8, 9};
const std::string kSpec = "bf16 sm_89 mma_sync tv128 tn8 td64 s4 w4x1";

fs::TuningKey key8() { return {kGpu, fs::DType::bf16, 32000, 4096, fs::batch_bucket(8)}; }

void write_text(const fsys::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// The files beside `path` that a save set aside (<name>.unreadable-*).
std::vector<fsys::path> set_aside(const fsys::path& path) {
  std::vector<fsys::path> out;
  for (const auto& e : fsys::directory_iterator(path.parent_path()))
    if (e.path().filename().string().rfind(path.filename().string() + ".unreadable-", 0) == 0) out.push_back(e.path());
  return out;
}

std::string read_text(const fsys::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST_F(TuningStoreTest, SaveLoadAndMergeOnSave) {
  ASSERT_EQ(fs::tuning_db_path(), dir_ / "tuning.json");
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  ASSERT_TRUE(fs::save_tuning_db(a, dir_ / "tuning.json"));
  fs::TuningDb b;
  b.record(key8(), {kSpec, 12.0, 11.0, "t2"});  // slower: the file keeps 10.0
  b.record(key8(), {"bf16 sm_89 mma_sync tv128 tn8 td128 s3 w4x1", 11.0, 10.0, "t2"});
  ASSERT_TRUE(fs::save_tuning_db(b, dir_ / "tuning.json"));
  const fs::TuningDb back = fs::load_tuning_db(dir_ / "tuning.json");
  ASSERT_EQ(back.entries().size(), 1u);
  ASSERT_EQ(back.entries()[0].configs.size(), 2u);
  EXPECT_EQ(back.entries()[0].configs[0].median_us, 10.0);
  EXPECT_EQ(back.entries()[0].best()->spec, kSpec);
  for (const auto& e : fsys::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "leftover " << e.path();
}

TEST_F(TuningStoreTest, CorruptDatabaseIsIgnoredWithAWarningAndRewritten) {
  const fsys::path path = dir_ / "tuning.json";
  write_text(path, "{\"schema\": \"fusedsample-tuning\", \"version\": 1, \"entries\": [");
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(fs::load_tuning_db(path).empty());
  EXPECT_TRUE(fs::load_tuning_db(path).empty());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("corrupt tuning database"), std::string::npos) << err;
  EXPECT_EQ(err.find("corrupt"), err.rfind("corrupt")) << "warned twice: " << err;
  // tuned_spec still works (falls back), and the next save replaces the file.
  EXPECT_EQ(fs::tuned_spec(kGpu, fs::DType::bf16, 32000, 4096, 8, fs::Arch::sm_89).level,
            fs::MatchLevel::builtin_default);
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(fs::save_tuning_db(a, path));
  (void)::testing::internal::GetCapturedStderr();
  EXPECT_EQ(fs::load_tuning_db(path).entries().size(), 1u);
  EXPECT_EQ(set_aside(path).size(), 1u) << "the corrupt file was not kept aside";
}

// Session 31: a number past a double (nlohmann's out_of_range, not a parse
// error) escaped load_tuning_db, so `info`, `export` and `import` all failed
// and the file was never rewritten; a directory in the file's place threw
// from the read.
TEST_F(TuningStoreTest, DatabaseThatCannotBeReadIsIgnoredAndRewritten) {
  const fsys::path path = dir_ / "tuning.json";
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  std::string text = fs::tuning_db_to_json(a);
  const std::string median = "\"median_us\": 10.0";
  ASSERT_NE(text.find(median), std::string::npos) << text;
  text.replace(text.find(median), median.size(), "\"median_us\": 1e400");
  write_text(path, text);
  ::testing::internal::CaptureStderr();
  fs::TuningDb loaded;
  EXPECT_NO_THROW(loaded = fs::load_tuning_db(path));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(loaded.empty());
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find("1e400"), std::string::npos) << err;
  ASSERT_TRUE(fs::save_tuning_db(a, path));
  EXPECT_EQ(fs::load_tuning_db(path).entries().size(), 1u);

  const fsys::path as_dir = dir_ / "sub" / "tuning.json";
  fsys::create_directories(as_dir);
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(loaded = fs::load_tuning_db(as_dir));
  const std::string err2 = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(loaded.empty());
  EXPECT_NE(err2.find("is a directory"), std::string::npos) << err2;
  try {
    fs::import_tuning_file(as_dir);
    ADD_FAILURE() << "imported a directory";
  } catch (const fs::FileError& e) {
    EXPECT_NE(std::string(e.what()).find(as_dir.string() + ": it is a directory"), std::string::npos) << e.what();
  }
}

// A database with one entry this build cannot read (a newer generator's spec
// token) is ignored as a whole, and a save keeps it aside instead of
// replacing it: until session 40 importing one file into it lost the other
// entries.
TEST_F(TuningStoreTest, SaveKeepsAnUnreadableDatabaseAside) {
  const fsys::path path = dir_ / "tuning.json";
  fs::TuningDb older;
  older.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  older.record({kGpu, fs::DType::bf16, 32000, 4096, fs::batch_bucket(64)},
               {"bf16 sm_89 mma_sync tv128 tn64 td32 s5 w4x2", 20.0, 9.0, "t1"});
  std::string text = fs::tuning_db_to_json(older);
  const std::string spec64 = "tn64 td32 s5 w4x2";
  ASSERT_NE(text.find(spec64), std::string::npos) << text;
  text.replace(text.find(spec64), spec64.size(), spec64 + " zz");
  write_text(path, text);
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(fs::load_tuning_db(path).empty());
  fs::TuningDb incoming;
  incoming.record({kGpu, fs::DType::bf16, 32000, 4096, fs::batch_bucket(16)}, {kSpec, 12.0, 9.0, "t2"});
  ASSERT_TRUE(fs::save_tuning_db(incoming, path));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("zz"), std::string::npos) << err;
  const auto aside = set_aside(path);
  ASSERT_EQ(aside.size(), 1u) << err;
  EXPECT_EQ(read_text(aside[0]), text) << "the unreadable database was not kept as it was";
  EXPECT_NE(err.find(aside[0].string()), std::string::npos) << "the warning does not name " << aside[0] << ": " << err;
  EXPECT_EQ(fs::load_tuning_db(path).entries().size(), 1u);
  // A second save of a readable database sets nothing more aside.
  ASSERT_TRUE(fs::save_tuning_db(incoming, path));
  EXPECT_EQ(set_aside(path).size(), 1u);
}

// A private (0600) database that cannot be read is set aside, and the file
// the save writes in its place keeps its permission bits, as a save over a
// readable one does (write_file_atomic). It became 0666 less the umask: a
// private database turned readable to all by one bad byte.
TEST_F(TuningStoreTest, SaveOverAnUnreadableDatabaseKeepsItsPermissions) {
  const fsys::path path = dir_ / "tuning.json";
  write_text(path, "{ not json");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  const mode_t saved = ::umask(022);
  fs::TuningDb incoming;
  incoming.record(key8(), {kSpec, 12.0, 9.0, "t2"});
  ::testing::internal::CaptureStderr();
  const bool ok = fs::save_tuning_db(incoming, path);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ::umask(saved);
  ASSERT_TRUE(ok) << err;
  ASSERT_EQ(set_aside(path).size(), 1u) << err;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the new database is not private like the one it replaces";
  EXPECT_EQ(fs::load_tuning_db(path).entries().size(), 1u);
}

// tuning.json a link to what is not a regular file (a FIFO here; /dev/null
// as the helper of session 48 found, run as root): the read fails ("not a
// regular file") and the save leaves the target as it is and saves nothing.
// Until session 48 the save set the target aside, renaming /dev/null.
TEST_F(TuningStoreTest, SaveLeavesALinksTargetThatIsNotARegularFile) {
  const fsys::path fifo = dir_ / "elsewhere.fifo", path = dir_ / "tuning.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fsys::create_symlink(fifo, path);
  fs::TuningDb incoming;
  incoming.record(key8(), {kSpec, 12.0, 9.0, "t2"});
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(fs::save_tuning_db(incoming, path));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
  EXPECT_TRUE(fsys::is_fifo(fsys::symlink_status(fifo))) << "the link's target was moved or replaced";
  EXPECT_TRUE(fsys::is_symlink(fsys::symlink_status(path)));
  EXPECT_TRUE(set_aside(fifo).empty());
  EXPECT_TRUE(set_aside(path).empty());
}

// tuning.json a link to a database elsewhere: a save through the link waits
// for the lock of a save through the target ("<target>.lock", held here as
// that save would hold it), so the two load + merge + write steps do not
// interleave. Until session 63 the lock was "<path>.lock", one per name: the
// save through the link went ahead and one of the two saves' entries was lost.
TEST_F(TuningStoreTest, SaveThroughALinkTakesTheLockOfItsTarget) {
  const fsys::path target = dir_ / "elsewhere" / "real.json", link = dir_ / "tuning.json";
  fsys::create_directories(target.parent_path());
  fsys::create_symlink(target, link);
  const std::string lock_path = target.string() + ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << lock_path << ": " << std::strerror(errno);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0) << std::strerror(errno);
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  std::packaged_task<bool()> save([&] { return fs::save_tuning_db(a, link); });
  std::future<bool> saved = save.get_future();
  std::thread saver(std::move(save));
  // While the lock is held the save cannot finish, however long this waits;
  // one that does not take it finishes in well under this.
  const bool waited = saved.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout;
  const bool written_while_locked = fsys::exists(target);
  ::flock(fd, LOCK_UN);
  ::close(fd);
  saver.join();
  EXPECT_TRUE(waited) << "the save through the link did not wait for the lock on " << lock_path;
  EXPECT_FALSE(written_while_locked) << "the save through the link wrote while " << lock_path << " was held";
  EXPECT_TRUE(saved.get());
  EXPECT_TRUE(fsys::is_symlink(fsys::symlink_status(link)));
  EXPECT_EQ(fs::load_tuning_db(target).entries().size(), 1u);
  EXPECT_FALSE(fsys::exists(link.string() + ".lock")) << "a lock of the link's own name";
}

// A config whose spec this build parses but no longer accepts (here one that
// needs more than 227 KiB of shared memory, as a template change can make a
// spec tuned by an older build) is not used, with a warning naming it; the
// rest of the database is, and a save writes the config back (a build that
// accepts it still finds it) without setting the file aside. Until session
// 44 the whole database was ignored: in that session's call 4 a spec grown
// past 227 KiB made every built-in table unreadable and N = 256 ran
// default_spec at 2 x the cycles.
TEST_F(TuningStoreTest, ConfigThisBuildNoLongerAcceptsIsUnusedNotTheDatabase) {
  const fsys::path path = dir_ / "tuning.json";
  const std::string grown = "bf16 sm_89 mma_sync tv256 tn64 td128 s8 w4x2";  // parses, fails validate()
  fs::TuningDb older;
  older.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  const fs::TuningKey key64{kGpu, fs::DType::bf16, 32000, 4096, fs::batch_bucket(64)};
  older.record(key64, {"bf16 sm_89 mma_sync tv128 tn64 td32 s5 w4x2", 20.0, 9.0, "t1"});
  nlohmann::json doc = nlohmann::json::parse(fs::tuning_db_to_json(older));
  nlohmann::json& cfg = doc["entries"][1]["configs"][0];
  ASSERT_EQ(cfg["spec"], "bf16 sm_89 mma_sync tv128 tn64 td32 s5 w4x2") << doc.dump(2);
  cfg["spec"] = grown;
  cfg.erase("params");  // they restate the spec; the reader takes them as optional
  const std::string text = doc.dump(2);
  write_text(path, text);
  ::testing::internal::CaptureStderr();
  const fs::TuningDb loaded = fs::load_tuning_db(path);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(loaded.entries().size(), 2u) << err << text;
  EXPECT_EQ(loaded.entries()[0].key, key8());
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find(grown), std::string::npos) << err;
  EXPECT_NE(err.find("shared memory"), std::string::npos) << err;
  EXPECT_EQ(fs::tuned_spec(kGpu, fs::DType::bf16, 32000, 4096, 8, fs::Arch::sm_89).spec.to_string(), kSpec);
  const fs::TunedSpec at64 = fs::tuned_spec(kGpu, fs::DType::bf16, 32000, 4096, 64, fs::Arch::sm_89);
  EXPECT_NE(at64.spec.to_string(), grown);
  EXPECT_NE(at64.level, fs::MatchLevel::exact_device);

  fs::TuningDb incoming;
  incoming.record({kGpu, fs::DType::bf16, 32000, 4096, fs::batch_bucket(16)}, {kSpec, 12.0, 9.0, "t2"});
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(fs::save_tuning_db(incoming, path));
  const std::string err2 = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(set_aside(path).empty()) << err2;
  EXPECT_EQ(fs::load_tuning_db(path).entries().size(), 3u);
  EXPECT_NE(read_text(path).find(grown), std::string::npos) << "the save dropped the config a newer build may accept";
}

// A database that could not be read this time (here: no file descriptor
// left, EMFILE) is not the file's fault: the save leaves it where it is and
// returns false (the review of session 40 found the first version of the
// set-aside moving a good file away and then failing to write any). In a
// child process, whose descriptor limit is lowered to those it has open.
[[noreturn]] void save_without_descriptors(const fsys::path& path) {
  fs::TuningDb b;
  b.record(key8(), {kSpec, 5.0, 9.0, "t2"});
  const int lowest_free = ::dup(0);
  if (lowest_free < 0) std::_Exit(4);
  ::close(lowest_free);
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = rlim_t(lowest_free);
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) std::_Exit(4);
  std::_Exit(fs::save_tuning_db(b, path) ? 2 : 0);
}

TEST_F(TuningStoreTest, SaveLeavesADatabaseItCouldNotReadThisTime) {
  const fsys::path path = dir_ / "tuning.json";
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  ASSERT_TRUE(fs::save_tuning_db(a, path));
  const std::string before = read_text(path);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(save_without_descriptors(path), ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(read_text(path), before);
  EXPECT_TRUE(set_aside(path).empty()) << "a readable database was set aside";
}

// The same when the host runs out of memory reading or parsing the file.
// Until session 60 a std::bad_alloc from the JSON parser read as "corrupt
// tuning database (std::bad_alloc)", and the save set the good file aside and
// replaced it with its own configs only; one from the read's buffer
// (read_cache_file) escaped save_tuning_db, which never throws, and ended the
// process. In a child process whose address space is limited to what it uses
// plus `room` bytes. (A threadsafe death test runs SetUp again: the child
// works in a cache dir of its own, and says by its exit code what became of
// the file there.)
[[noreturn]] void save_without_memory(const fsys::path& path, std::size_t file_bytes, std::size_t room) {
  fs::TuningDb b;
  b.record(key8(), {kSpec, 5.0, 9.0, "t2"});
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  if (!(statm >> pages)) std::_Exit(4);
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = rlim_t(pages * std::size_t(::sysconf(_SC_PAGESIZE)) + room);
  if (::setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(4);
  const bool saved = fs::save_tuning_db(b, path);
  std::error_code ec;
  const int code = saved ? 2 : !set_aside(path).empty() ? 3 : fsys::file_size(path, ec) != file_bytes ? 5 : 0;
  fsys::remove_all(path.parent_path(), ec);  // this child's own cache dir: its TearDown does not run
  std::_Exit(code);
}

// One config's 64 MiB timestamp: room to read the file but not to parse it
// (the parser's token buffer and the string it makes), then not even to read it.
TEST_F(TuningStoreTest, SaveLeavesADatabaseItRanOutOfMemoryReading) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow memory does not fit under RLIMIT_AS";
#endif
  const fsys::path path = dir_ / "tuning.json";
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, std::string(std::size_t(64) << 20, '7')});
  ASSERT_TRUE(fs::save_tuning_db(a, path));
  const std::string before = read_text(path);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 0: not saved, the file left as it was; 2: saved over it; 3: set aside; a
  // signal (std::terminate's abort): an exception escaped.
  EXPECT_EXIT(save_without_memory(path, before.size(), before.size() + (std::size_t(96) << 20)),
              ::testing::ExitedWithCode(0), "")
      << "room to read, not to parse";
  EXPECT_EXIT(save_without_memory(path, before.size(), std::size_t(16) << 20), ::testing::ExitedWithCode(0), "")
      << "no room to read";
  EXPECT_EQ(read_text(path), before);
}

// A save removes tuning.json temp files an hour old (left by a killed save;
// kept for good until session 40), not younger ones.
TEST_F(TuningStoreTest, SaveRemovesStaleTempFiles) {
  const fsys::path path = dir_ / "tuning.json";
  const fsys::path stale = dir_ / "tuning.json.tmp.AbCdEf", young = dir_ / "tuning.json.tmp.GhIjKl";
  write_text(stale, "{");
  write_text(young, "{");
  fsys::last_write_time(stale, fsys::file_time_type::clock::now() - std::chrono::hours(2));
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  ASSERT_TRUE(fs::save_tuning_db(a, path));
  EXPECT_FALSE(fsys::exists(stale));
  EXPECT_TRUE(fsys::exists(young));
}

TEST_F(TuningStoreTest, TunedSpecReadsTheCacheDirDatabase) {
  EXPECT_EQ(fs::tuned_spec(kGpu, fs::DType::bf16, 32000, 4096, 5, fs::Arch::sm_89).level,
            fs::MatchLevel::builtin_default);
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  ASSERT_TRUE(fs::save_tuning_db(a, *fs::tuning_db_path()));
  const auto r = fs::tuned_spec(kGpu, fs::DType::bf16, 32000, 4096, 5, fs::Arch::sm_89);
  EXPECT_EQ(r.level, fs::MatchLevel::exact_device);
  EXPECT_EQ(r.spec.to_string(), kSpec);
  ::setenv("FUSEDSAMPLE_CACHE_DISABLE", "1", 1);
  EXPECT_EQ(fs::tuned_spec(kGpu, fs::DType::bf16, 32000, 4096, 5, fs::Arch::sm_89).level,
            fs::MatchLevel::builtin_default);
  ::unsetenv("FUSEDSAMPLE_CACHE_DISABLE");
}

// A database replaced by one of the same size within one tick of the file
// system's clock (ext4 stamps files with a coarse clock: two saves a few
// milliseconds apart have the same mtime) was not re-read: tuned_spec kept
// answering from the old one, whose path, size and mtime it matched.
TEST_F(TuningStoreTest, TunedSpecRereadsADatabaseReplacedWithinOneClockTick) {
  const fsys::path path = *fs::tuning_db_path();
  const std::string other = "bf16 sm_89 mma_sync tv64 tn8 td64 s4 w4x1";
  auto db_with = [&](double spec_us, double other_us) {
    fs::TuningDb db;
    db.record(key8(), {kSpec, spec_us, 9.0, "t1"});
    db.record(key8(), {other, other_us, 9.0, "t1"});
    return fs::tuning_db_to_json(db);
  };
  auto best = [] { return fs::tuned_spec(kGpu, fs::DType::bf16, 32000, 4096, 5, fs::Arch::sm_89).spec.to_string(); };
  std::string error;
  ASSERT_TRUE(fs::detail::write_file_atomic(path, db_with(10.0, 20.0), &error)) << error;
  const auto mtime = fsys::last_write_time(path);
  ASSERT_EQ(best(), kSpec);
  ASSERT_TRUE(fs::detail::write_file_atomic(path, db_with(20.0, 10.0), &error)) << error;  // the same size
  fsys::last_write_time(path, mtime);  // the same clock tick, whatever this file system's clock
  EXPECT_EQ(best(), other) << "tuned_spec answered from the database the save replaced";
}

TEST_F(TuningStoreTest, ExportImportFiles) {
  fs::TuningDb a;
  a.record(key8(), {kSpec, 10.0, 9.0, "t1"});
  fs::export_tuning_file(a, dir_ / "out" / "h.json");
  const fs::TuningDb back = fs::import_tuning_file(dir_ / "out" / "h.json");
  EXPECT_EQ(back.entries().size(), 1u);
  EXPECT_THROW(fs::import_tuning_file(dir_ / "missing.json"), fs::FileError);
  write_text(dir_ / "file", "x");
  EXPECT_THROW(fs::export_tuning_file(a, dir_ / "file" / "h.json"), fs::FileError);
  // Unwritable database location: save returns false, no throw.
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(fs::save_tuning_db(a, dir_ / "file" / "tuning.json"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cannot write " + (dir_ / "file" / "tuning.json").string()), std::string::npos) << err;
  EXPECT_NE(err.find("results are not saved"), std::string::npos) << err;
}
