// wgmma_emitter.cpp: one inline-asm wrapper per (dtype, N) wgmma shape. The
// instruction names each of its n/2 accumulator registers, so the operand
// list is generated rather than written out for all 32 shapes.
#include "compiler/wgmma_emitter.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fusedsample/errors.hpp"

namespace fusedsample {

std::string emit_wgmma_k16(DType dtype, int n) {
  if (dtype == DType::fp32) throw Unsupported("wgmma needs bf16 or fp16 operands (fp32 uses simt)");
  if (n < 8 || n > 256 || n % 8 != 0)
    throw InvalidArgument(fmt::format("wgmma: N must be a multiple of 8 in [8, 256], got {}", n));
  const int regs = n / 2;
  const char* ab = dtype == DType::bf16 ? "bf16" : "f16";
  std::string dlist, outs;
  for (int i = 0; i < regs; ++i) {
    dlist += fmt::format("{}%{}", i ? ", " : "", i);
    outs += fmt::format("{}\"+f\"(acc[{}])", i ? ", " : "", i);
  }
  return fmt::format(
      "// Generated: wgmma m64n{n}k16, fp32 += {ab} x {ab}, A and B K-major in shared memory;\n"
      "// with scale_d = 0 the accumulators are overwritten (acc = A x B), not added to.\n"
      "__device__ __forceinline__ void fs_wgmma_k16(float (&acc)[{regs}], fs_u64 desc_a, fs_u64 desc_b,\n"
      "                                             int scale_d = 1) {{\n"
      "  asm volatile(\n"
      "      \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale}, 0;\\n\"\n"
      "      \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab} {{{dlist}}}, %{da}, %{db}, p, 1, 1, 0, 0;\\n}}\\n\"\n"
      "      : {outs}\n"
      "      : \"l\"(desc_a), \"l\"(desc_b), \"r\"(scale_d));\n"
      "}}\n",
      fmt::arg("n", n), fmt::arg("ab", ab), fmt::arg("regs", regs), fmt::arg("dlist", dlist),
      fmt::arg("outs", outs), fmt::arg("da", regs), fmt::arg("db", regs + 1), fmt::arg("scale", regs + 2));
}

namespace {
// Registers one wgmma needs besides its accumulators (descriptors, predicate,
// addresses): m64n256 (128 accumulators) needs 154 by ptxas's own count.
constexpr int kRegistersBesideAccumulators = 32;
}  // namespace

int wgmma_instruction_n(const KernelSpec& spec) {
  const int regs = std::min(255, (65536 / spec.threads()) & ~7);  // per thread under the launch bound
  for (int parts = 1; parts <= spec.tile_n / 8; ++parts) {
    const int n = spec.tile_n / parts;
    if (spec.tile_n % parts == 0 && n % 8 == 0 && n / 2 + kRegistersBesideAccumulators <= regs) return n;
  }
  return 8;
}

}  // namespace fusedsample
