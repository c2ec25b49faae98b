// current_results_test.cpp: BENCHMARKS.md's "Current results" (issue #3's
// record) and README's summary of it are hand-copied from fusedsample_bench's
// output each time a session moves the record. Checked here: each GPU and
// shape has one table, its rows are N = 1, 2, 4, ..., 256 in order, every ratio
// is its row's fused time over the named line (to the rounding of the printed
// µs), and README's summary table quotes those tables. Until session 61 the
// H200 large shape's heading held two tables (the small shape's pasted under
// it as well), found by reading, not by a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace fsys = std::filesystem;
const fsys::path kRoot = FUSEDSAMPLE_SOURCE_DIR;

std::vector<std::string> read_lines(const fsys::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Row {
  int n = 0;
  double fused = 0, floor = 0, cublas = 0, unfused = 0, x_floor = 0, x_cublas = 0, x_unfused = 0;
};

struct Table {
  int header_rows = 0;
  std::vector<Row> rows;
};

// "#### H200, V=128256, d=8192 (bf16), median µs" -> its table, per "GPU large|small".
std::map<std::string, Table> current_results_tables() {
  const auto lines = read_lines(kRoot / "BENCHMARKS.md");
  std::map<std::string, Table> tables;
  const std::regex heading(R"(#### (\w+), V=(\d+), d=(\d+) \(bf16\), median µs)");
  const std::regex row(
      R"(\| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| \d+ \|)");
  bool in_section = false;
  Table* current = nullptr;
  for (const std::string& line : lines) {
    if (line.rfind("## ", 0) == 0) {
      if (in_section) break;
      in_section = line == "## Current results";
      continue;
    }
    if (!in_section) continue;
    std::smatch m;
    if (std::regex_match(line, m, heading)) {
      const std::string shape = m[2] == "128256" && m[3] == "8192" ? "large" : m[2] == "151936" ? "small" : "other";
      current = &tables[m[1].str() + " " + shape];
    } else if (line.rfind("#", 0) == 0) {
      current = nullptr;
    } else if (current && line.rfind("| N | fused |", 0) == 0) {
      ++current->header_rows;
    } else if (current && std::regex_match(line, m, row)) {
      Row r;
      r.n = std::stoi(m[1]);
      double* f[] = {&r.fused, &r.floor, &r.cublas, &r.unfused, &r.x_floor, &r.x_cublas, &r.x_unfused};
      for (int i = 0; i < 7; ++i) *f[i] = std::stod(m[i + 2]);
      current->rows.push_back(r);
    }
  }
  return tables;
}

TEST(CurrentResults, OneTablePerGpuAndShapeWithConsistentRatios) {
  const auto tables = current_results_tables();
  for (const char* key : {"H200 large", "H200 small", "H100 large", "H100 small"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(tables.count(key)) << "no table under a '#### " << key << "' heading in Current results";
    const Table& t = tables.at(key);
    EXPECT_EQ(t.header_rows, 1) << "tables under one heading";
    std::vector<int> ns;
    for (const Row& r : t.rows) ns.push_back(r.n);
    EXPECT_EQ(ns, (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
    for (const Row& r : t.rows) {
      // µs printed to 0.1 (~280-1100 µs) and ratios to 0.001: 0.0015 covers both roundings.
      EXPECT_NEAR(r.fused / r.floor, r.x_floor, 0.0015) << "N = " << r.n << ": fused/floor";
      EXPECT_NEAR(r.fused / r.cublas, r.x_cublas, 0.0015) << "N = " << r.n << ": fused/cuBLAS";
      EXPECT_NEAR(r.fused / r.unfused, r.x_unfused, 0.0015) << "N = " << r.n << ": fused/unfused";
    }
  }
}

// README's "| | H200 large / small | H100 large / small |" table, cell by
// cell, from the Current results tables: ranges over N <= 16, N = 32 and 64
// x floor, N = 128 and 256 x cuBLAS, and the worst fused/unfused.
TEST(CurrentResults, ReadmeSummaryQuotesTheRecord) {
  const auto tables = current_results_tables();
  std::map<std::string, std::string> expected_rows;
  const auto f3 = [](double x) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.3f", x);
    return std::string(buf);
  };
  const auto cell = [&](const std::string& gpu, auto&& text_of) {
    return text_of(tables.at(gpu + " large")) + " / " + text_of(tables.at(gpu + " small"));
  };
  const auto at = [](const Table& t, int n) {
    for (const Row& r : t.rows)
      if (r.n == n) return r;
    return Row{};
  };
  for (const char* gpu : {"H200", "H100"}) {
    ASSERT_TRUE(tables.count(std::string(gpu) + " large") && tables.count(std::string(gpu) + " small"));
    expected_rows["N ≤ 16, × floor"] += "| " + cell(gpu, [&](const Table& t) {
      double lo = 1e9, hi = 0;
      for (const Row& r : t.rows)
        if (r.n <= 16) lo = std::min(lo, r.x_floor), hi = std::max(hi, r.x_floor);
      return f3(lo) + "–" + f3(hi);
    }) + " ";
    expected_rows["N = 32, 64, × floor"] += "| " + cell(gpu, [&](const Table& t) {
      return f3(at(t, 32).x_floor) + ", " + f3(at(t, 64).x_floor);
    }) + " ";
    expected_rows["N = 128, × cuBLAS GEMM alone"] +=
        "| " + cell(gpu, [&](const Table& t) { return f3(at(t, 128).x_cublas); }) + " ";
    expected_rows["N = 256, × cuBLAS GEMM alone"] +=
        "| " + cell(gpu, [&](const Table& t) { return f3(at(t, 256).x_cublas); }) + " ";
    expected_rows["fused / unfused, worst N"] += "| " + cell(gpu, [&](const Table& t) {
      double hi = 0;
      for (const Row& r : t.rows) hi = std::max(hi, r.x_unfused);
      return f3(hi);
    }) + " ";
  }
  const auto readme = read_lines(kRoot / "README.md");
  for (const auto& [label, cells] : expected_rows) {
    const std::string want = "| " + label + " " + cells + "|";
    EXPECT_NE(std::find(readme.begin(), readme.end(), want), readme.end())
        << "README.md has no summary row\n  " << want << "\n(quoted from BENCHMARKS.md's Current results)";
  }
}

// BENCHMARKS.md's own "The goals of issue #3 against these runs" table, cell
// by cell, from the same section's tables: the range of fused/floor over
// N <= 64, fused/cuBLAS at N = 128 and 256, the worst fused/unfused, each
// bold where its goal is met. Until this test only README's summary was
// checked, and session 60 moved the H200 tables to its call 4 but left this
// table (and the sentence after it) on session 59's run: N = 256 "1.018"
// (missed) where the table above read 0.979, N = 128 0.992 / 0.983 for
// 0.975 / 0.974.
TEST(CurrentResults, GoalsTableQuotesTheRecord) {
  const auto tables = current_results_tables();
  const auto f3 = [](double x) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.3f", x);
    return std::string(buf);
  };
  const auto bold = [](bool met, const std::string& text) { return met ? "**" + text + "**" : text; };
  const auto at = [](const Table& t, int n) {
    for (const Row& r : t.rows)
      if (r.n == n) return r;
    return Row{};
  };
  std::map<std::string, std::string> expected_rows;
  for (const char* key : {"H200 large", "H200 small", "H100 large", "H100 small"}) {
    ASSERT_TRUE(tables.count(key)) << key;
    const Table& t = tables.at(key);
    double lo = 1e9, hi = 0, unf = 0;
    for (const Row& r : t.rows) {
      if (r.n <= 64) lo = std::min(lo, r.x_floor), hi = std::max(hi, r.x_floor);
      unf = std::max(unf, r.x_unfused);
    }
    expected_rows["N ≤ 64: fused ≤ 1.05 × floor"] += "| " + bold(hi <= 1.05, f3(lo) + "–" + f3(hi)) + " ";
    const double x128 = at(t, 128).x_cublas, x256 = at(t, 256).x_cublas;
    expected_rows["N = 128: fused ≤ cuBLAS GEMM"] += "| " + bold(x128 <= 1.0, f3(x128)) + " ";
    expected_rows["N = 256: fused ≤ cuBLAS GEMM"] += "| " + bold(x256 <= 1.0, f3(x256)) + " ";
    expected_rows["fused < unfused (cuBLAS GEMM + our sampler) at every N"] += "| " + bold(unf < 1.0, "≤ " + f3(unf)) + " ";
  }
  std::vector<std::string> section;
  bool in_section = false;
  for (const std::string& line : read_lines(kRoot / "BENCHMARKS.md")) {
    if (line.rfind("## ", 0) == 0) {
      if (in_section) break;
      in_section = line == "## Current results";
    } else if (in_section) {
      section.push_back(line);
    }
  }
  for (const auto& [label, cells] : expected_rows) {
    const std::string want = "| " + label + " " + cells + "|";
    EXPECT_NE(std::find(section.begin(), section.end(), want), section.end())
        << "Current results has no goals row\n  " << want << "\n(from the tables above it)";
  }
}

}  // namespace
