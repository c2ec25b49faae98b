// markdown_links_test.cpp: every relative link of the repository's markdown
// (README.md, BENCHMARKS.md, docs/, bench/results/) names a file that exists,
// and every #anchor into a markdown file names one of its headings, as GitHub
// makes anchors from headings. Until session 60 README's link to BENCHMARKS.md's
// "Current results" carried the heading's session number, so it broke each
// time a session moved the record (found by a review, not by a test).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace fsys = std::filesystem;
const fsys::path kRoot = FUSEDSAMPLE_SOURCE_DIR;

std::string read_text(const fsys::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The next UTF-8 code point of s at i (advancing i); malformed bytes one at a time.
char32_t next_code_point(const std::string& s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (len == 1 || i + len > s.size()) return ++i, b;
  char32_t c = b & (0x7f >> len);
  for (int k = 1; k < len; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  i += len;
  return c;
}

// GitHub's heading anchor: the text as rendered (links by their text, code
// without backticks), lower-cased, every character that is not a letter,
// digit, '_', '-' or space dropped, spaces turned into '-'. Non-ASCII letters
// are approximated by the Latin-1/Latin Extended and Greek ranges (µ, é, τ
// stay; ×, ≤, –, — go), which is all these documents use.
std::string anchor_of(std::string heading) {
  static const std::regex link(R"(\[([^\]]*)\]\([^)]*\))");
  heading = std::regex_replace(heading, link, "$1");
  std::string out;
  for (std::size_t i = 0; i < heading.size();) {
    const std::size_t at = i;
    const char32_t c = next_code_point(heading, i);
    if (c < 0x80) {
      const char a = static_cast<char>(c);
      if (std::isalnum(static_cast<unsigned char>(a)) || a == '_' || a == '-') out += char(std::tolower(a));
      else if (a == ' ') out += '-';
    } else if (c == 0xb5 || (c >= 0xc0 && c <= 0x24f && c != 0xd7 && c != 0xf7) || (c >= 0x370 && c <= 0x3ff)) {
      out += heading.substr(at, i - at);  // kept as written (these documents' letters are already lower case)
    }
  }
  return out;
}

// The anchors of a markdown file's headings (outside fenced code), with
// GitHub's -1, -2 ... for repeats.
std::set<std::string> anchors_of(const fsys::path& md) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  std::istringstream in(read_text(md));
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.empty() || line[0] != '#') continue;
    static const std::regex heading(R"(#{1,6}\s+(.*?)\s*#*\s*)");
    std::smatch m;
    if (!std::regex_match(line, m, heading)) continue;
    const std::string a = anchor_of(m[1].str());
    const int n = seen[a]++;
    anchors.insert(n == 0 ? a : a + "-" + std::to_string(n));
  }
  return anchors;
}

std::vector<fsys::path> markdown_files() {
  std::vector<fsys::path> files;
  for (const auto& e : fsys::directory_iterator(kRoot))
    if (e.path().extension() == ".md") files.push_back(e.path());
  for (const char* dir : {"docs", "bench/results"})
    for (const auto& e : fsys::directory_iterator(kRoot / dir))
      if (e.path().extension() == ".md") files.push_back(e.path());
  return files;
}

// The anchor rule itself, on headings of the kinds these documents have.
TEST(MarkdownLinks, AnchorsAreGitHubs) {
  EXPECT_EQ(anchor_of("Current results"), "current-results");
  EXPECT_EQ(anchor_of("Tuning for your GPU (`fusedsample tune`)"), "tuning-for-your-gpu-fusedsample-tune");
  EXPECT_EQ(anchor_of("Session 60 (2026-11-29): N = 256 1.014 × cuBLAS; τ ≤ 1"),
            "session-60-2026-11-29-n--256-1014--cublas-τ--1");
  EXPECT_EQ(anchor_of("See [docs](docs/rng.md) first"), "see-docs-first");
}

TEST(MarkdownLinks, RelativeLinksAndAnchorsResolve) {
  const std::regex link(R"(\]\(([^)\s]+)\))"), code_span("`[^`]*`"), scheme("^[a-z]+:");
  std::map<fsys::path, std::set<std::string>> anchors;  // per target file, made once
  int checked = 0;
  for (const fsys::path& md : markdown_files()) {
    std::istringstream in(read_text(md));
    bool fenced = false;
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      if (line.rfind("```", 0) == 0) fenced = !fenced;
      if (fenced) continue;
      if (line.find("](") == std::string::npos) continue;
      line = std::regex_replace(line, code_span, "");  // links inside code spans are text
      for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
        const std::string target = (*it)[1].str();
        if (std::regex_search(target, scheme)) continue;  // http:, https:, mailto:
        const auto hash = target.find('#');
        const std::string file = target.substr(0, hash), anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
        const fsys::path to = file.empty() ? md : md.parent_path() / file;
        const std::string where = fsys::relative(md, kRoot).string() + ":" + std::to_string(line_no);
        ++checked;
        if (!fsys::exists(to)) {
          ADD_FAILURE() << where << ": link to a missing file: " << target;
          continue;
        }
        if (anchor.empty() || to.extension() != ".md") continue;
        const fsys::path key = fsys::canonical(to);
        if (!anchors.count(key)) anchors[key] = anchors_of(key);
        EXPECT_TRUE(anchors[key].count(anchor)) << where << ": no heading of " << file << " makes the anchor #" << anchor;
      }
    }
  }
  EXPECT_GT(checked, 50) << "the scan found too few links: is the pattern still right?";
}

}  // namespace
