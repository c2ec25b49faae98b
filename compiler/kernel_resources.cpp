// kernel_resources.cpp: reads ptxas's -v report out of the NVRTC log:
//   ptxas info    : Compiling entry function 'fs_fused_kernel' for 'sm_90a'
//   ptxas info    : Function properties for fs_fused_kernel
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 118 registers, used 1 barriers, 16 bytes smem
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
  while (std::getline(in, line)) {
    if (line.find("Compiling entry function") != std::string::npos) {
      if (found) break;  // the next kernel's report
      in_kernel = line.find("'" + kernel + "'") != std::string::npos;
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

}  // namespace fusedsample
