#include "bench/bench_tables.hpp"

#include <fmt/format.h>

#include <sstream>

namespace fusedsample::bench {

std::string summary_table(const Results& r, std::string_view dtype) {
  std::ostringstream o;
  for (const auto& [shape, rows] : r.lines) {
    o << fmt::format("\n### V={}, d={} ({}), median µs\n\n", shape.first, shape.second, dtype);
    o << "| N | fused | floor | cuBLAS GEMM | unfused (GEMM+sample) | fused/floor | fused/cuBLAS | fused/unfused | fused GB/s |\n";
    o << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    const double wbytes = double(shape.first) * double(shape.second) * 2;
    for (const auto& [n, t] : rows) {
      if (t.fused <= 0) continue;
      o << fmt::format("| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.3f} | {:.3f} | {:.3f} | {:.0f} |\n", n, t.fused,
                       t.floor, t.cublas, t.unfused, t.floor > 0 ? t.fused / t.floor : 0,
                       t.cublas > 0 ? t.fused / t.cublas : 0, t.unfused > 0 ? t.fused / t.unfused : 0,
                       wbytes / (t.fused * 1e-6) / 1e9);
    }
  }
  return o.str();
}

std::string cublas_table(const Results& r) {
  std::ostringstream o;
  if (r.cublas_algorithms.empty()) return "";
  o << "\n### cuBLASLt algorithms: the fastest of every one its heuristic returned (median of 15 back-to-back "
       "calls each)\n\n| V | d | N | cuBLAS GEMM (bf16 logits) | unfused's GEMM (fp32 logits) |\n|---:|---:|---:|---|---|\n";
  for (const auto& [key, chosen] : r.cublas_algorithms) {
    const auto [v, d, n] = key;
    o << fmt::format("| {} | {} | {} | {} | {} |\n", v, d, n, chosen.first, chosen.second);
  }
  return o.str();
}

std::string predecessor_table(const Results& r) {
  std::ostringstream o;
  for (const auto& [shape, rows] : r.by_predecessor) {
    o << fmt::format("\n### V={}, d={}: median µs by the line that ran just before\n\n| N | line |", shape.first,
                     shape.second);
    for (const char* name : kLineNames) o << " after " << name << " |";
    o << "\n|---:|---|---:|---:|---:|---:|\n";
    for (const auto& [n, table] : rows)
      for (std::size_t l = 0; l < table.size(); ++l) {
        o << fmt::format("| {} | {} |", n, kLineNames[l]);
        for (double us : table[l]) o << (us > 0 ? fmt::format(" {:.1f} |", us) : std::string(" - |"));
        o << "\n";
      }
  }
  return o.str();
}

std::string sweep_table(const Results& r, bool same_call) {
  std::ostringstream o;
  if (!r.sweep.empty())
    o << "\n### Config sweep (µs; x floor, x cuBLAS GEMM of the same call when interleaved)\n\n"
         "| V | d | N | spec | µs | x floor | x cuBLAS |\n|---:|---:|---:|---|---:|---:|---:|\n";
  for (const auto& [key, specs] : r.sweep) {
    const auto [v, d, n] = key;
    LineTimes t;
    if (const auto s = r.lines.find({v, d}); s != r.lines.end())
      if (const auto row = s->second.find(n); row != s->second.end()) t = row->second;
    for (const auto& [spec, us] : specs)
      o << fmt::format("| {} | {} | {} | {} | {:.1f} | {} | {} |\n", v, d, n, spec, us,
                       t.floor > 0 ? fmt::format("{:.3f}", us / t.floor) : "n/a (floor not run)",
                       same_call && t.cublas > 0 ? fmt::format("{:.3f}", us / t.cublas) : "n/a");
  }
  return o.str();
}

std::string logits_alone_table(const Results& r) {
  std::ostringstream o;
  if (!r.logits_alone.empty())
    o << "\n### sample_logits alone (µs; GB/s of reading the N x V fp32 logits once; same interleaved call)\n\n"
         "| V | d | N | sample_logits spec | µs | GB/s |\n|---:|---:|---:|---|---:|---:|\n";
  for (const auto& [key, specs] : r.logits_alone) {
    const auto [v, d, n] = key;
    for (const auto& [spec, us] : specs)
      o << fmt::format("| {} | {} | {} | {} | {:.1f} | {:.0f} |\n", v, d, n, spec, us,
                       us > 0 ? double(v) * double(n) * 4.0 / (us * 1e-6) / 1e9 : 0.0);
  }
  return o.str();
}

}  // namespace fusedsample::bench
