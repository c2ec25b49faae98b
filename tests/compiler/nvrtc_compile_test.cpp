// nvrtc_compile_test.cpp: every kernel variant renders and compiles with
// NVRTC for each target arch, and the PTX assembles with the toolkit's ptxas
// (a second, independent check of the generated code). No GPU needed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/wgmma_emitter.hpp"
#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/tuning_db.hpp"
#include "tests/support/nvrtc_test_specs.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::nvrtc_tests;

struct Shape {
  int tv, tn, td, st, wm, wn;
};

// Tensor-core shapes: small, default-like, 2x2 warps, and 8 warps.
constexpr Shape kMmaShapes[] = {{64, 8, 32, 3, 4, 1}, {128, 16, 64, 4, 4, 1}, {128, 64, 64, 3, 2, 2}};
// SIMT shapes (T_V multiple of 32, T_N a multiple of the warp count).
constexpr Shape kSimtShapes[] = {{128, 8, 32, 3, 4, 1}, {128, 32, 32, 3, 4, 1}, {64, 64, 16, 2, 2, 2}};

std::string arch_name(Arch a) { return std::string(fs::to_string(a)); }

// Runs ptxas on `ptx` for `arch`; returns its exit status, output in `log`.
int run_ptxas(const std::string& ptx, Arch arch, std::string* log) {
  namespace stdfs = std::filesystem;
  char dir_template[] = "/tmp/fusedsample_ptxas_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) {
    *log = "mkdtemp failed";
    return -1;
  }
  const stdfs::path in = stdfs::path(dir) / "kernel.ptx", out = stdfs::path(dir) / "kernel.cubin",
                    msgs = stdfs::path(dir) / "ptxas.log";
  std::ofstream(in) << ptx;
  const std::string cmd = std::string("'") + FUSEDSAMPLE_PTXAS + "' -arch=" + arch_name(arch) + " -o '" + out.string() +
                          "' '" + in.string() + "' > '" + msgs.string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream m(msgs);
  std::stringstream ss;
  ss << m.rdbuf();
  *log = cmd + "\n" + ss.str();
  const bool produced = stdfs::exists(out) && stdfs::file_size(out) > 0;
  std::error_code ec;
  stdfs::remove_all(dir, ec);
  if (rc == 0 && !produced) {
    *log += "\n(no output file)";
    return -2;
  }
  return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

// The ".target" directive of a PTX module.
std::string ptx_target(const std::string& ptx) {
  std::smatch m;
  if (std::regex_search(ptx, m, std::regex(R"(\.target\s+(\w+))"))) return m[1];
  return "";
}

bool has_entry(const std::string& ptx, const std::string& name) {
  return std::regex_search(ptx, std::regex(R"(\.entry\s+)" + name + R"(\s*\()"));
}

void check_compiled(const KernelSpec& spec) {
  SCOPED_TRACE(spec.to_string());
  const fs::RenderedKernel r = fs::render_kernel(spec);
  EXPECT_EQ(r.spec, spec);
  EXPECT_EQ(r.source.find("#define FS_EAGER_RELEASE 1\n") != std::string::npos, spec.eager_release);
  fs::CompiledKernel k;
  try {
    k = fs::compile_uncached(r);
  } catch (const fs::CompileError& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(k.spec, spec);
  EXPECT_EQ(k.source, r.source);
  EXPECT_EQ(k.options, r.options);
  EXPECT_EQ(k.cache_key, fs::kernel_cache_key(r));
  // Both kernels the runtime looks up by name, unmangled (extern "C"); the
  // reduction is part of the fused kernel (one launch per sample call).
  EXPECT_TRUE(has_entry(k.ptx, "fs_fused_kernel")) << "no .entry fs_fused_kernel";
  EXPECT_TRUE(has_entry(k.ptx, "fs_stream_kernel")) << "no .entry fs_stream_kernel";
  EXPECT_FALSE(has_entry(k.ptx, "fs_reduce_kernel")) << "a separate reduction kernel is back";
  if (fs::is_wgmma(spec.variant)) {
    // Warpgroup MMAs of N = wgmma_instruction_n (T_N unless its accumulators
    // do not fit the launch bound) per 64 vocabulary rows and k16 step, and
    // no other shape.
    const int n = fs::wgmma_instruction_n(spec);
    const std::string ab = spec.dtype == DType::bf16 ? "bf16.bf16" : "f16.f16";
    const std::string op = fmt::format("wgmma.mma_async.sync.aligned.m64n{}k16.f32.{}", n, ab);
    EXPECT_NE(k.ptx.find(op), std::string::npos) << "no " << op;
    const std::regex shape(R"(\.m64n(\d+)k16)");
    for (std::sregex_iterator it(k.ptx.begin(), k.ptx.end(), shape), end; it != end; ++it)
      EXPECT_EQ(std::stoi((*it)[1]), n) << "a second wgmma shape";
    EXPECT_EQ(k.ptx.find("mma.sync"), std::string::npos);
    // A cluster spec requires its cluster shape and multicasts; others neither.
    const bool multicast = k.ptx.find(".multicast::cluster") != std::string::npos;
    EXPECT_EQ(multicast, spec.cluster > 1);
    if (spec.cluster > 1) EXPECT_NE(k.ptx.find(fmt::format(".reqnctapercluster {}, 1, 1", spec.cluster)), std::string::npos);
    // Logits staged in L2 are stored to global memory in 8-byte pieces;
    // staged in shared memory, no float is stored to global memory but the
    // indices (and the epilogue's atomics).
    const bool global_pairs = k.ptx.find("st.global.v2.f32") != std::string::npos;
    EXPECT_EQ(global_pairs, spec.stage_in_l2);
  } else if (spec.variant == Variant::mma_sync) {
    EXPECT_NE(k.ptx.find("mma.sync.aligned.m16n8k16"), std::string::npos);
    EXPECT_NE(k.ptx.find(spec.dtype == DType::bf16 ? ".bf16.bf16" : ".f16.f16"), std::string::npos);
  } else {
    EXPECT_EQ(k.ptx.find("mma.sync"), std::string::npos) << "tensor-core code in a " << fs::to_string(spec.variant)
                                                           << " kernel";
  }
  EXPECT_EQ(ptx_target(k.ptx), arch_name(spec.arch));
  // Every fold into p.best is a reduction (fs_fold_candidate: PTX red, no
  // returned value); an atomicMax whose result goes unused stays an atom,
  // whose ATOMG holds a scoreboard until its round trip to L2 ends (session 51).
  EXPECT_NE(k.ptx.find("red.relaxed.gpu.global.max.u64"), std::string::npos) << "no fold into p.best";
  EXPECT_FALSE(std::regex_search(k.ptx, std::regex(R"(\batom(\.[a-z0-9_:]+)*\.max\.)")))
      << "a fold that returns the old value";
  // The CUBIN is an ELF image.
  ASSERT_GE(k.cubin.size(), 4u);
  EXPECT_EQ(std::string(k.cubin.data(), 4), "\x7f" "ELF");
  std::string log;
  EXPECT_EQ(run_ptxas(k.ptx, spec.arch, &log), 0) << log;
}

struct CompileCase {
  KernelSpec spec;
};
void PrintTo(const CompileCase& c, std::ostream* os) { *os << c.spec.to_string(); }

std::vector<CompileCase> all_cases() {
  std::vector<CompileCase> out;
  for (DType d : {DType::bf16, DType::fp16, DType::fp32}) {
    const Variant v = d == DType::fp32 ? Variant::simt : Variant::mma_sync;
    for (const Shape& s : d == DType::fp32 ? kSimtShapes : kMmaShapes)
      for (Arch a : kArchs) out.push_back({make_spec(d, v, a, s.tv, s.tn, s.td, s.st, s.wm, s.wn)});
  }
  // The sampler half of the unfused pipeline (materialized fp32 logits), as
  // the runtime configures it.
  out.push_back({make_spec(DType::bf16, Variant::logits, Arch::sm_90a, 256, 8, 64, 4, 4, 1)});
  // The smallest logits tiles validate() allows (T_V T_N = 512: exactly 32 threads sample a tile, so warp 0's
  // part is the whole tile; sample_logits.cuh's static_assert holds), and the large built-in one.
  out.push_back({make_spec(DType::fp32, Variant::logits, Arch::sm_90, 64, 8, 64, 2, 4, 1)});
  out.push_back({make_spec(DType::fp32, Variant::logits, Arch::sm_90, 16, 32, 64, 3, 1, 1)});
  out.push_back({make_spec(DType::fp32, Variant::logits, Arch::sm_90, 512, 8, 64, 2, 4, 1)});
  // Hopper's warpgroup MMA (sm_90a only): the smallest and largest N, two
  // 64-row blocks per warpgroup, two warpgroups.
  for (DType d : {DType::bf16, DType::fp16}) {
    out.push_back({make_spec(d, Variant::wgmma, Arch::sm_90a, 64, 8, 64, 4, 4, 1)});
    out.push_back({make_spec(d, Variant::wgmma, Arch::sm_90a, 128, 64, 64, 3, 4, 1)});
    out.push_back({make_spec(d, Variant::wgmma, Arch::sm_90a, 128, 24, 64, 4, 8, 1)});
    out.push_back({make_spec(d, Variant::wgmma, Arch::sm_90a, 64, 256, 64, 3, 4, 1)});
    // two 64-column sub-tiles per stage (T_d = 128), with 4+ stages (MMAs of a stage in flight) and 3
    out.push_back({make_spec(d, Variant::wgmma, Arch::sm_90a, 128, 32, 128, 4, 8, 1)});
    out.push_back({make_spec(d, Variant::wgmma, Arch::sm_90a, 64, 16, 128, 3, 4, 1)});
    // Warp-specialized: smallest and largest N, one and two 64-row blocks.
    out.push_back({make_spec(d, Variant::wgmma_ws, Arch::sm_90a, 64, 8, 64, 6, 12, 1)});
    out.push_back({make_spec(d, Variant::wgmma_ws, Arch::sm_90a, 128, 128, 64, 4, 12, 1)});
    out.push_back({make_spec(d, Variant::wgmma_ws, Arch::sm_90a, 64, 256, 64, 4, 12, 1)});
    // Cooperative (`coop`: T_V, T_N, T_d, stages, warps, cluster, logits in L2):
    const auto coop = [d](int tv, int tn, int td, int st, int wm, int cluster = 1, bool l2 = false) {
      KernelSpec s = make_spec(d, Variant::wgmma_coop, Arch::sm_90a, tv, tn, td, st, wm, 1);
      s.cluster = cluster;
      s.stage_in_l2 = l2;
      return CompileCase{s};
    };
    // one and two epilogue warpgroups, one and two 64-row blocks per
    // consumer, the smallest N with two stages;
    out.push_back(coop(128, 128, 64, 4, 16));
    out.push_back(coop(256, 64, 64, 3, 20));
    out.push_back(coop(128, 8, 64, 2, 20));
    out.push_back(coop(128, 128, 64, 5, 20));
    // clusters of two and four blocks (multicast copies, cluster barriers);
    out.push_back(coop(128, 128, 64, 4, 20, 2));
    out.push_back(coop(256, 32, 64, 4, 16, 4));
    // two 64-column boxes per stage;
    out.push_back(coop(128, 64, 128, 4, 20));
    // 128 accumulators per consumer: T_N = 256 as two m64n128, two 64-row blocks;
    out.push_back(coop(128, 256, 64, 2, 16));
    out.push_back(coop(256, 128, 64, 2, 16));
    // w12x1 (producer warp + three epilogue warps, 168 registers each): T_N =
    // 256 as one m64n256 per k16 step; T_d = 32 (64-byte swizzled rows), alone
    // and in a cluster;
    out.push_back(coop(128, 256, 32, 4, 12));
    out.push_back(coop(128, 128, 32, 6, 12, 2));
    // logits staged in L2: 128 x 256 and 256 x 128 tiles with 128-byte rows,
    // alone and in a cluster.
    out.push_back(coop(128, 256, 64, 4, 12, 1, true));
    out.push_back(coop(256, 128, 64, 4, 12, 2, true));
    // stream-K (partial sums handed between blocks): two epilogue warpgroups,
    // and 128 accumulators per consumer with logits staged in L2.
    CompileCase sk = coop(128, 128, 64, 4, 20);
    sk.spec.stream_k = true;
    out.push_back(sk);
    sk = coop(256, 128, 64, 4, 12, 1, true);
    sk.spec.stream_k = true;
    out.push_back(sk);
    // The register epilogue (consumers sample their accumulators): 64 and
    // 128 accumulators per consumer, and 128 x 256 tiles (one m64n256 per
    // consumer and k16 step, two batch columns per consumer thread).
    for (auto [tv, tn] : {std::pair{128, 128}, {256, 128}, {128, 256}}) {
      CompileCase re = coop(tv, tn, 64, 4, 12);
      re.spec.reg_epilogue = true;
      out.push_back(re);
    }
    for (auto [tv, tn] : {std::pair{256, 128}, {128, 256}}) {  // with stream-K
      CompileCase re_sk = coop(tv, tn, 64, 4, 12);
      re_sk.spec.reg_epilogue = re_sk.spec.stream_k = true;
      out.push_back(re_sk);
    }
    CompileCase re_c2 = coop(256, 128, 64, 4, 12, 2);  // and in a cluster
    re_c2.spec.reg_epilogue = true;
    out.push_back(re_c2);
    // Ping-pong: each consumer multiplies and samples whole 128 x 128 tiles.
    CompileCase pp = coop(128, 128, 64, 6, 12);
    pp.spec.reg_epilogue = pp.spec.ping_pong = true;
    out.push_back(pp);
    pp.spec.cluster = 2;  // and in a cluster
    out.push_back(pp);
    // The eager stage release: the N <= 64 tile of the tables (l2p0 is a
    // launch setting, not compiled), in a cluster, with ping-pong, and wgmma_ws.
    CompileCase er = coop(128, 64, 128, 4, 16);
    er.spec.eager_release = true;
    out.push_back(er);
    er.spec.cluster = 2;
    out.push_back(er);
    pp.spec.eager_release = true;
    out.push_back(pp);
    CompileCase er_ws{make_spec(d, Variant::wgmma_ws, Arch::sm_90a, 128, 40, 64, 3, 12, 1)};
    er_ws.spec.eager_release = true;
    out.push_back(er_ws);
  }
  return out;
}

// Corners of the spec space: one warp with the deepest T_d (fewest threads
// per 16-byte chunk column), one warp with a shallow T_d, four warps with the
// deepest, and the most warps with the shallowest. Whatever validate()
// accepts must compile (what it rejects is covered in kernel_spec_validate_test.cpp).
std::vector<CompileCase> edge_cases() {
  const KernelSpec candidates[] = {
      make_spec(DType::bf16, Variant::mma_sync, Arch::sm_80, 16, 8, 128, 2, 1, 1),
      make_spec(DType::bf16, Variant::mma_sync, Arch::sm_80, 16, 8, 32, 2, 1, 1),
      make_spec(DType::bf16, Variant::mma_sync, Arch::sm_90, 64, 8, 128, 2, 4, 1),
      make_spec(DType::fp32, Variant::simt, Arch::sm_90, 32, 8, 128, 2, 1, 1),
      make_spec(DType::fp16, Variant::mma_sync, Arch::sm_90, 256, 16, 16, 2, 16, 1),
      // T_N that no power of two divides: one m64n192 fits w16x1's registers,
      // 200 is split into five m64n40.
      make_spec(DType::bf16, Variant::wgmma_coop, Arch::sm_90a, 128, 192, 64, 2, 16, 1),
      make_spec(DType::bf16, Variant::wgmma_coop, Arch::sm_90a, 128, 200, 64, 2, 16, 1),
  };
  std::vector<CompileCase> out;
  for (const KernelSpec& s : candidates) {
    try {
      s.validate();
      out.push_back({s});
    } catch (const fs::Error&) {
    }
  }
  return out;
}

// The defaults of the GPUs with 99 KiB of shared memory per block (sm_86,
// sm_89), which fit_shared_memory sizes down from the portable heuristic
// (fewer, shallower stages): each distinct one, every dtype and batch
// bucket.
std::vector<CompileCase> small_shared_memory_defaults() {
  std::vector<CompileCase> out;
  std::vector<std::string> seen;
  for (Arch a : {Arch::sm_86, Arch::sm_89})
    for (DType d : {DType::bf16, DType::fp16, DType::fp32})
      for (int b = 0; b < fs::kNumBatchBuckets; ++b) {
        const KernelSpec s = fs::default_spec(d, a, fs::bucket_rows(b));
        if (std::find(seen.begin(), seen.end(), s.to_string()) != seen.end()) continue;
        seen.push_back(s.to_string());
        out.push_back({s});
      }
  return out;
}

class NvrtcCompile : public ::testing::TestWithParam<CompileCase> {};

TEST_P(NvrtcCompile, CompilesAndAssembles) { check_compiled(GetParam().spec); }

std::string case_name(const ::testing::TestParamInfo<CompileCase>& info) {
  std::string n = info.param.spec.to_string();
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(AllVariants, NvrtcCompile, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(ValidEdges, NvrtcCompile, ::testing::ValuesIn(edge_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(SmallSharedMemoryDefaults, NvrtcCompile, ::testing::ValuesIn(small_shared_memory_defaults()),
                         case_name);

// The eager stage release changes the consumers' k-loop: without it each
// k-step waits until only its own stage's MMA groups (two 64-column boxes at
// T_d = 128) are pending, so the previous stage can be freed; with it every
// k-step waits for all of them. A template that ignored FS_EAGER_RELEASE
// would compile both specs to the same waits.
TEST(EagerRelease, ConsumersWaitForTheirOwnStagesMmas) {
  auto waits = [](const KernelSpec& spec, int pending) {
    const std::string ptx = fs::compile_uncached(fs::render_kernel(spec)).ptx;
    const std::string op = "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";";
    std::size_t n = 0;
    for (std::size_t at = ptx.find(op); at != std::string::npos; at = ptx.find(op, at + 1)) ++n;
    return n;
  };
  for (DType d : {DType::bf16, DType::fp16}) {
    KernelSpec s = make_spec(d, Variant::wgmma_coop, Arch::sm_90a, 128, 64, 128, 4, 16, 1);
    EXPECT_GE(waits(s, 2), 1u) << s.to_string();
    s.eager_release = true;
    EXPECT_EQ(waits(s, 2), 0u) << s.to_string();
    EXPECT_GE(waits(s, 0), 1u) << s.to_string();
  }
}

}  // namespace
