// kernel_resources.cpp: reads ptxas's -v report out of the NVRTC log:
//   ptxas info    : Compiling entry function 'fs_fused_kernel' for 'sm_90a'
//   ptxas info    : Function properties for fs_fused_kernel
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 118 registers, used 1 barriers, 16 bytes smem
// and ptxas's advisories that it serialized a kernel's wgmma instructions
// (before the per-kernel reports; C7515 here, other codes for other causes):
//   ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async
//   instructions are serialized due to ... in the function 'fs_fused_kernel'
#include <regex>
#include <sstream>

#include "fusedsample/compiler.hpp"

namespace fusedsample {

std::optional<KernelResources> kernel_resources(const CompiledKernel& k, const std::string& kernel) {
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::istringstream in(k.log);
  std::string line;
  bool in_kernel = false, found = false;
  KernelResources r;
  const std::string quoted = "'" + kernel + "'";
  while (std::getline(in, line)) {
    // Any code (C7515: accumulators defined by other instructions; C7511 and
    // others: e.g. too few registers for the wgmma pipeline).
    if (line.find("wgmma.mma_async instructions are serialized") != std::string::npos &&
        line.find(quoted) != std::string::npos)
      r.wgmma_serialized = true;
    if (line.find("Compiling entry function") != std::string::npos) {
      in_kernel = !found && line.find(quoted) != std::string::npos;  // (read on: an advisory may come later)
      continue;
    }
    if (!in_kernel) continue;
    std::smatch m;
    if (std::regex_search(line, m, frame)) {
      r.stack_bytes = std::stoi(m[1]);
      r.spill_store_bytes = std::stoi(m[2]);
      r.spill_load_bytes = std::stoi(m[3]);
    }
    if (std::regex_search(line, m, used)) {
      r.registers = std::stoi(m[1]);
      found = true;
      if (std::regex_search(line, m, smem)) r.shared_static_bytes = std::stoi(m[1]);
    }
  }
  if (!found) return std::nullopt;
  return r;
}

bool has_ptxas_report(const std::string& log) {
  static const std::regex used(R"(ptxas info\s*: Used \d+ registers)");
  return std::regex_search(log, used);
}

}  // namespace fusedsample
