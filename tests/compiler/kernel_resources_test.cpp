// kernel_resources_test.cpp: the resource report of a compiled kernel (ptxas
// -v in the NVRTC log): the shipped specs do not spill, and the wgmma
// serialization advisory is read for the kernel it names. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "compiler/parallel_compile.hpp"
#include "fusedsample/compiler.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fs = fusedsample;
using fs::Arch;
using fs::DType;
using fs::KernelSpec;

// The resource report (ptxas -v in the NVRTC log) names every kernel, and the
// specs the library ships (default_spec for each batch bucket, Hopper and
// Ampere) use no local memory: no spills, no stack frame.
TEST(KernelResources, ShippedSpecsDoNotSpill) {
  for (Arch a : {Arch::sm_90, Arch::sm_80})
    for (std::int64_t rows : {1, 16, 32, 64, 128}) {
      const KernelSpec s = fs::default_spec(DType::bf16, a, rows);
      SCOPED_TRACE(s.to_string());
      const auto k = fs::compile_kernel(s);
      for (const char* name : {"fs_fused_kernel", "fs_stream_kernel"}) {
        const auto r = fs::kernel_resources(*k, name);
        ASSERT_TRUE(r.has_value()) << "no ptxas report for " << name << " in:\n" << k->log;
        EXPECT_GT(r->registers, 0);
        EXPECT_LE(r->registers, 255);
        EXPECT_EQ(r->spill_store_bytes, 0) << name;
        EXPECT_EQ(r->spill_load_bytes, 0) << name;
        EXPECT_EQ(r->stack_bytes, 0) << name;
      }
    }
  // Every winner in the built-in tuning tables (what a Sampler runs on an
  // H100/H200 without a local tune), and the Sampler's logits kernels
  // (runtime/sampler.cpp, logits_spec: up to 64 rows and above; until session
  // 64 the first spilled 64 / 84 bytes on sm_90).
  std::set<std::string> winners;
  for (const auto& e : fs::builtin_tuning_db().entries())
    if (const auto* b = e.best()) winners.insert(b->spec);
  EXPECT_GE(winners.size(), 5u);
  for (const char* text : {"fp32 sm_90 logits tv256 tn8 td64 s4 w4x1", "fp32 sm_90 logits tv512 tn8 td64 s2 w4x1",
                           "fp32 sm_80 logits tv256 tn8 td64 s4 w4x1", "fp32 sm_80 logits tv512 tn8 td64 s2 w4x1"})
    winners.insert(text);
  for (const std::string& text : winners) {
    SCOPED_TRACE(text);
    const auto k = fs::compile_kernel(fs::KernelSpec::parse(text));
    const auto r = fs::kernel_resources(*k, "fs_fused_kernel");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->spill_store_bytes, 0);
    EXPECT_EQ(r->spill_load_bytes, 0);
    EXPECT_EQ(r->stack_bytes, 0);
    EXPECT_FALSE(r->wgmma_serialized) << "ptxas serialized the wgmma instructions:\n" << k->log;
  }
  // A kernel the module does not contain has no report.
  EXPECT_FALSE(fs::kernel_resources(*fs::compile_kernel(fs::default_spec(DType::bf16, Arch::sm_80, 1)), "no_such_kernel"));
}

// The batch tiles the Sampler fits the tables' register-epilogue winners to
// (fit_batch_tile: any multiple of 8 from 64 to 256) spill nothing either,
// and keep their MMAs unserialized. Per bf16 winner its three widest fitted
// tiles (the most accumulators below its own; the group maxima's last chunk
// with 3, 2 and 1 of its column groups; bucket 128's winners also tn72,
// column t only for consumer thread t < 72), and the tiles it is grown to for
// the parts nearer its bucket than the next (grow_batch_tile: 8 and 16 rows
// wider, with its stages); fp16 compiles to the same registers.
TEST(KernelResources, FittedBatchTilesDoNotSpill) {
  std::vector<KernelSpec> fitted;
  const auto add = [&](const KernelSpec& f) {
    if (std::find(fitted.begin(), fitted.end(), f) == fitted.end()) fitted.push_back(f);
  };
  for (const auto& e : fs::builtin_tuning_db().entries())
    if (const auto* b = e.best()) {
      const KernelSpec s = fs::KernelSpec::parse(b->spec);
      if (s.dtype != DType::bf16 || !s.reg_epilogue) continue;
      for (int more : {8, 16})
        if (const auto g = fs::grow_batch_tile(s, s.tile_n + more)) add(*g);
      if (s.tile_n <= 64) continue;
      for (int less : {8, 16, 24})
        if (const KernelSpec f = fs::fit_batch_tile(s, s.tile_n - less); f != s) add(f);
      if (const KernelSpec f = fs::fit_batch_tile(s, 72); s.tile_n == 128 && f != s) add(f);  // N = 65-72 (session 66)
    }
  EXPECT_GE(fitted.size(), 12u) << "the tables' buckets 160-256 lost their register-epilogue winners";
  add(KernelSpec::parse("bf16 sm_90a wgmma_coop tv256 tn64 td64 s4 w12x1 re"));  // re's narrowest tile
  add(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn64 td64 s4 w12x1 re"));
  for (const fs::CompileOutcome& c : fs::compile_all(fitted)) {
    SCOPED_TRACE(c.spec.to_string());
    ASSERT_TRUE(c.ok) << c.error;
    EXPECT_EQ(c.spill_bytes, 0);
    EXPECT_FALSE(c.wgmma_serialized);
  }
}

// ptxas's C7515 advisory (it serialized a kernel's wgmma instructions: a
// session-28 stream-K experiment that loaded partial sums into the
// accumulators before the k-loop ran 30-40 % slower) comes before the
// per-kernel reports and names its kernel; only that kernel is flagged.
TEST(KernelResources, ReadsTheWgmmaSerializationAdvisory) {
  fs::CompiledKernel k;
  k.log =
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non "
      "wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage in "
      "the function 'fs_fused_kernel'\n"
      "ptxas info    : 30 bytes gmem\n"
      "ptxas info    : Compiling entry function 'fs_stream_kernel' for 'sm_90a'\n"
      "ptxas info    : Function properties for fs_stream_kernel\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers\n"
      "ptxas info    : Compiling entry function 'fs_fused_kernel' for 'sm_90a'\n"
      "ptxas info    : Function properties for fs_fused_kernel\n"
      "ptxas         .     8 bytes stack frame, 16 bytes spill stores, 24 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 16 barriers, 8 bytes cumulative stack size\n";
  const auto fused = fs::kernel_resources(k, "fs_fused_kernel");
  ASSERT_TRUE(fused.has_value());
  EXPECT_TRUE(fused->wgmma_serialized);
  EXPECT_EQ(fused->registers, 168);
  EXPECT_EQ(fused->stack_bytes, 8);
  EXPECT_EQ(fused->spill_store_bytes, 16);
  EXPECT_EQ(fused->spill_load_bytes, 24);
  const auto stream = fs::kernel_resources(k, "fs_stream_kernel");
  ASSERT_TRUE(stream.has_value());
  EXPECT_FALSE(stream->wgmma_serialized);
  EXPECT_EQ(stream->registers, 32);
  EXPECT_EQ(stream->spill_store_bytes, 0);
  // Other codes name other causes; the kernel is serialized all the same.
  k.log = "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
          "insufficient register resources for the wgmma pipeline in the function 'fs_fused_kernel'\n"
          "ptxas info    : Compiling entry function 'fs_fused_kernel' for 'sm_90a'\n"
          "ptxas info    : Used 168 registers, used 16 barriers\n";
  EXPECT_TRUE(fs::kernel_resources(k, "fs_fused_kernel")->wgmma_serialized);
  // The shipped default for N = 256 on Hopper is not serialized.
  const auto shipped = fs::kernel_resources(*fs::compile_kernel(fs::default_spec(DType::bf16, Arch::sm_90, 256)));
  ASSERT_TRUE(shipped.has_value());
  EXPECT_FALSE(shipped->wgmma_serialized);
}
