// file_io_test.cpp: the file helpers of the caches and the exports
// (compiler/file_io.cpp) with files that are not plain files: a FIFO or a
// device where a cache file should be, a symbolic link to the database, a
// FIFO as an export's output.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <optional>
#include <string>

#include "compiler/file_io.hpp"
#include "fusedsample/disk_cache.hpp"
#include "fusedsample/tuning_db.hpp"
#include "tests/support/temp_cache_dir.hpp"

namespace fs = fusedsample;
namespace fsys = std::filesystem;

namespace {

using FileIoTest = fusedsample::testing::TempCacheDirTest;

std::string read_text(const fsys::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Opens and closes the FIFO's writing end: a reader blocked in open() or
// read() on it goes on (and reads end of file), so a regression fails the
// test instead of hanging it.
void release_fifo(const fsys::path& fifo) {
  const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  if (fd >= 0) ::close(fd);
}

// f() on another thread, at most 10 s; after that the FIFO is released and
// the test fails.
template <typename F>
auto within_10s(const fsys::path& fifo, F f) {
  auto done = std::async(std::launch::async, f);
  if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "blocked on the FIFO " << fifo;
    release_fifo(fifo);
  }
  return done.get();
}

// Until session 40 a FIFO in a module's or the database's place blocked the
// process in open() (fusedsample info and demo hung), and a link to
// /dev/zero read until memory ran out. Now both are misses with a warning.
TEST_F(FileIoTest, CacheReadsRefuseWhatIsNotARegularFile) {
  const fs::DiskCache cache(dir_);
  fsys::create_directories(cache.modules_dir());
  const std::string key(64, 'a');
  ASSERT_EQ(::mkfifo(cache.module_path(key).c_str(), 0644), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(within_10s(cache.module_path(key), [&] { return cache.load(key).has_value(); }));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;

  const std::string zero_key(64, 'b');
  fsys::create_symlink("/dev/zero", cache.module_path(zero_key));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.load(zero_key).has_value());
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;

  const fsys::path db = dir_ / "tuning.json";
  ASSERT_EQ(::mkfifo(db.c_str(), 0644), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(within_10s(db, [&] { return fs::load_tuning_db(db).empty(); }));
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
}

// Both readers stop at a size limit: a cache file of more is unusable, and
// what a user names (1 GiB by default) too: `import /dev/zero` read until
// memory ran out until session 48.
TEST_F(FileIoTest, ReadsHaveASizeLimit) {
  const fsys::path p = dir_ / "ten";
  std::ofstream(p, std::ios::binary) << "0123456789";
  using Reader = std::function<std::optional<std::string>(const fsys::path&, std::string*, std::size_t)>;
  struct Case {
    Reader read;
    const char* too_big;  // what its error says of a 10-byte file read with a limit of 9
  };
  const Case cases[] = {
      {[](const fsys::path& f, std::string* e, std::size_t max) { return fs::detail::read_cache_file(f, e, max); },
       "10 bytes, more than 9"},
      {[](const fsys::path& f, std::string* e, std::size_t max) { return fs::detail::read_file(f, e, max); },
       "more than 9 bytes"}};
  for (const Case& c : cases) {
    const Reader& read = c.read;
    std::string error;
    EXPECT_EQ(read(p, &error, 10), "0123456789");
    EXPECT_FALSE(read(p, &error, 9).has_value());
    EXPECT_NE(error.find(c.too_big), std::string::npos) << error;
    EXPECT_FALSE(read(dir_ / "absent", &error, 10).has_value());
    EXPECT_TRUE(error.empty()) << "an absent file is not an error: " << error;
  }
  if (!fsys::exists("/dev/zero")) GTEST_SKIP() << "this machine has no /dev/zero";
  std::string error;
  EXPECT_FALSE(fs::detail::read_file("/dev/zero", &error, 1 << 20).has_value());
  EXPECT_NE(error.find("more than 1048576 bytes"), std::string::npos) << error;
}

// A symbolic link (e.g. a tuning.json kept with one's dotfiles) stays a link
// and its target gets the bytes; until session 40 the rename replaced the
// link and left the target as it was.
TEST_F(FileIoTest, AtomicWriteThroughASymbolicLink) {
  const fsys::path target = dir_ / "kept" / "tuning.json", link = dir_ / "tuning.json";
  fsys::create_directories(target.parent_path());
  std::ofstream(target) << "old";
  fsys::create_symlink(target, link);
  std::string error;
  ASSERT_TRUE(fs::detail::write_file_atomic(link, "new", &error)) << error;
  EXPECT_TRUE(fsys::is_symlink(link));
  EXPECT_EQ(read_text(target), "new");
}

// A link to what is not a regular file is refused and its target left as it
// is: until session 48 the rename replaced the target, so a cache module or
// tuning.json linked to /dev/null (run as root) replaced /dev/null with a
// regular file. (A FIFO and a directory stand in for a device here: creating
// device nodes needs root.)
TEST_F(FileIoTest, AtomicWriteRefusesALinkToWhatIsNotARegularFile) {
  const fsys::path fifo = dir_ / "a.fifo", to_fifo = dir_ / "to_fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fsys::create_symlink(fifo, to_fifo);
  std::string error;
  EXPECT_FALSE(fs::detail::write_file_atomic(to_fifo, "new", &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_TRUE(fsys::is_fifo(fsys::symlink_status(fifo))) << "the FIFO was replaced";
  EXPECT_TRUE(fsys::is_symlink(to_fifo));

  const fsys::path sub = dir_ / "sub", to_dir = dir_ / "to_dir.json";
  fsys::create_directories(sub);
  fsys::create_symlink(sub, to_dir);
  error.clear();
  EXPECT_FALSE(fs::detail::write_file_atomic(to_dir, "new", &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_TRUE(fsys::is_directory(fsys::symlink_status(sub)));
}

// A dangling link gets its target created and stays a link (weakly_canonical
// resolved it to its own path, and the rename replaced the link with a file
// until session 48); so does a chain of links, relative ones included.
TEST_F(FileIoTest, AtomicWriteThroughADanglingLinkAndAChain) {
  const fsys::path target = dir_ / "kept" / "tuning.json", link = dir_ / "tuning.json";
  fsys::create_directories(target.parent_path());
  fsys::create_symlink(target, link);
  std::string error;
  ASSERT_TRUE(fs::detail::write_file_atomic(link, "first", &error)) << error;
  EXPECT_TRUE(fsys::is_symlink(fsys::symlink_status(link)));
  EXPECT_EQ(read_text(target), "first");

  const fsys::path hop = dir_ / "hop.json", start = dir_ / "start.json";
  fsys::create_symlink("kept/tuning.json", hop);  // relative to the link's directory
  fsys::create_symlink(hop, start);
  ASSERT_TRUE(fs::detail::write_file_atomic(start, "second", &error)) << error;
  EXPECT_TRUE(fsys::is_symlink(fsys::symlink_status(start)));
  EXPECT_TRUE(fsys::is_symlink(fsys::symlink_status(hop)));
  EXPECT_EQ(read_text(target), "second");
}

// The lock of a save (lock_file_path) is beside the file it writes: one for a
// link, a chain of links and their target. Until session 63 it was
// "<path>.lock", a lock per name, so two processes saving one tuning database
// through a link and through its target did not wait for each other. Where
// nothing would be written (a loop, a link to a FIFO) it stays "<path>.lock".
TEST_F(FileIoTest, LockFilePathIsOneForEveryNameOfAFile) {
  const fsys::path target = dir_ / "kept" / "tuning.json", link = dir_ / "tuning.json";
  const fsys::path hop = dir_ / "hop.json", start = dir_ / "start.json";
  fsys::create_directories(target.parent_path());
  fsys::create_symlink(target, link);  // dangling: the save creates the target
  fsys::create_symlink("kept/tuning.json", hop);  // relative to the link's directory
  fsys::create_symlink(hop, start);
  const fsys::path lock = target.string() + ".lock";
  EXPECT_EQ(fs::detail::lock_file_path(target), lock);
  EXPECT_EQ(fs::detail::lock_file_path(link), lock);
  EXPECT_EQ(fs::detail::lock_file_path(start).lexically_normal(), lock);
  std::ofstream(target) << "{}";
  EXPECT_EQ(fs::detail::lock_file_path(link), lock);
  EXPECT_EQ(fs::detail::lock_file_path(hop).lexically_normal(), lock);

  const fsys::path loop_a = dir_ / "loop_a.json", loop_b = dir_ / "loop_b.json";
  fsys::create_symlink(loop_b, loop_a);
  fsys::create_symlink(loop_a, loop_b);
  EXPECT_EQ(fs::detail::lock_file_path(loop_a), fsys::path(loop_a.string() + ".lock"));
  const fsys::path fifo = dir_ / "a.fifo", to_fifo = dir_ / "to_fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fsys::create_symlink(fifo, to_fifo);
  EXPECT_EQ(fs::detail::lock_file_path(to_fifo), fsys::path(to_fifo.string() + ".lock"));
}

// `export -o FIFO` (or a device): a reader gets the bytes; until session 40
// the FIFO was replaced by a regular file and the reader got nothing.
TEST_F(FileIoTest, OutputFileIntoAFifo) {
  const fsys::path fifo = dir_ / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto reader = std::async(std::launch::async, [&] { return read_text(fifo); });
  std::string error;
  const bool written = fs::detail::write_output_file(fifo, "{\"entries\": []}\n", &error);
  if (!written || reader.wait_for(std::chrono::seconds(10)) != std::future_status::ready) release_fifo(fifo);
  EXPECT_TRUE(written) << error;
  EXPECT_EQ(reader.get(), "{\"entries\": []}\n");
  EXPECT_FALSE(fsys::is_regular_file(fifo));
  // A regular file is still written atomically.
  const fsys::path plain = dir_ / "out.json";
  ASSERT_TRUE(fs::detail::write_output_file(plain, "x", &error)) << error;
  EXPECT_EQ(read_text(plain), "x");
}

// A new file's permission bits follow the umask as open(O_CREAT, 0666)'s
// would (always 0644 until session 60: a umask of 077 left the caches
// readable to all); a file replaced keeps its own.
TEST_F(FileIoTest, NewFilesFollowTheUmask) {
  const mode_t saved = ::umask(077);
  std::string error;
  const fsys::path priv = dir_ / "private.json", shared = dir_ / "shared.json";
  const bool wrote_private = fs::detail::write_file_atomic(priv, "a", &error);
  ::umask(022);
  const bool wrote_shared = fs::detail::write_file_atomic(shared, "b", &error);
  ::umask(saved);
  ASSERT_TRUE(wrote_private && wrote_shared) << error;
  auto mode = [](const fsys::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(priv), 0600u);
  EXPECT_EQ(mode(shared), 0644u);
  ASSERT_TRUE(fs::detail::write_file_atomic(priv, "c", &error)) << error;  // under 022 now: keeps its 0600
  EXPECT_EQ(mode(priv), 0600u);
}

// An empty output path or a directory is named as such; until session 60 the
// error was the temp file's failed rename ("cannot rename ./.tmp.X to : No
// such file or directory", "... to /tmp/: Not a directory").
TEST_F(FileIoTest, OutputFileThatIsNoFileIsNamed) {
  std::string error;
  EXPECT_FALSE(fs::detail::write_output_file("", "x", &error));
  EXPECT_NE(error.find("empty path"), std::string::npos) << error;
  for (const fsys::path& p : {dir_, fsys::path(dir_.string() + "/"), dir_ / "missing" / ""}) {
    EXPECT_FALSE(fs::detail::write_output_file(p, "x", &error)) << p;
    EXPECT_NE(error.find("names a directory"), std::string::npos) << error;
    EXPECT_EQ(error.find(".tmp."), std::string::npos) << error;
  }
  for (const auto& e : fsys::directory_iterator(dir_)) ADD_FAILURE() << "left behind: " << e.path();
}

}  // namespace
