// nvrtc_compile_test.cpp: every kernel variant renders and compiles with
// NVRTC for each target arch, and the PTX assembles with the toolkit's ptxas
// (a second, independent check of the generated code). No GPU needed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <latch>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/spec_builder.hpp"
#include "compiler/wgmma_emitter.hpp"
#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fs = fusedsample;
using fs::Arch;
using fs::DType;
using fs::KernelSpec;
using fs::Variant;

namespace {

KernelSpec make_spec(DType dt, Variant var, Arch arch, int tv, int tn, int td, int st, int wm, int wn) {
  return fusedsample::testing::build_spec(dt, var, arch, tv, tn, td, st, wm, wn);
}

struct Shape {
  int tv, tn, td, st, wm, wn;
};

// Tensor-core shapes: small, default-like, 2x2 warps, and 8 warps.
constexpr Shape kMmaShapes[] = {{64, 8, 32, 3, 4, 1}, {128, 16, 64, 4, 4, 1}, {128, 64, 64, 3, 2, 2}};
// SIMT shapes (T_V multiple of 32, T_N a multiple of the warp count).
constexpr Shape kSimtShapes[] = {{128, 8, 32, 3, 4, 1}, {128, 32, 32, 3, 4, 1}, {64, 64, 16, 2, 2, 2}};
constexpr Arch kArchs[] = {Arch::sm_80, Arch::sm_90, Arch::sm_90a};

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
  }
  return out;
}

// Corners of the spec space: one warp with the deepest T_d (fewest threads
// per 16-byte chunk column), one warp with a shallow T_d, four warps with the
// deepest, and the most warps with the shallowest. Whatever validate()
// accepts must compile (what it rejects is covered in kernel_spec_test.cpp).
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

// ------------------------------------------------------------ self-contained

// Names in `#include "x"` / `#include <x>` lines that the device compiler
// sees. Branches only taken by the host compiler (`#else` of `#if
// defined(__CUDACC__)`, `#ifndef __CUDACC__`, `#if !defined(__CUDACC__)`)
// are skipped: NVRTC defines __CUDACC__.
std::vector<std::string> device_includes(const std::string& text) {
  static const std::regex include_re(R"(^\s*#\s*include\s*([<"])([^">]+)[">])");
  static const std::regex if_cuda_re(R"(^\s*#\s*(if\s+defined\s*\(?\s*__CUDACC__\s*\)?|ifdef\s+__CUDACC__)\b)");
  static const std::regex if_not_cuda_re(R"(^\s*#\s*(if\s+!\s*defined\s*\(?\s*__CUDACC__\s*\)?|ifndef\s+__CUDACC__)\b)");
  static const std::regex if_re(R"(^\s*#\s*if)");
  static const std::regex else_re(R"(^\s*#\s*(else|elif)\b)");
  static const std::regex endif_re(R"(^\s*#\s*endif\b)");
  // Stack of conditionals: +1 device-only branch live, -1 host-only, 0 other.
  struct Cond {
    int kind;      // 1: #if __CUDACC__, -1: #if !__CUDACC__, 0: other
    bool in_else;  // past #else
  };
  std::vector<Cond> stack;
  auto host_only = [&] {
    for (const Cond& c : stack)
      if ((c.kind == 1 && c.in_else) || (c.kind == -1 && !c.in_else)) return true;
    return false;
  };
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, if_cuda_re)) stack.push_back({1, false});
    else if (std::regex_search(line, if_not_cuda_re)) stack.push_back({-1, false});
    else if (std::regex_search(line, if_re)) stack.push_back({0, false});
    else if (std::regex_search(line, else_re)) {
      if (!stack.empty()) stack.back().in_else = true;
    } else if (std::regex_search(line, endif_re)) {
      if (!stack.empty()) stack.pop_back();
    } else if (std::regex_search(line, m, include_re) && !host_only()) {
      out.push_back(std::string(m[1]) + std::string(m[2]));
    }
  }
  return out;
}

TEST(NvrtcSource, IncludeParserSkipsHostOnlyBranches) {
  const std::string text =
      "#include \"a.cuh\"\n#if defined(__CUDACC__)\n#include \"b.cuh\"\n#else\n#include <cmath>\n#endif\n"
      "#ifndef __CUDACC__\n#include <cstring>\n#endif\n#if FOO\n#include \"c.cuh\"\n#else\n#include <d>\n#endif\n";
  EXPECT_EQ(device_includes(text), (std::vector<std::string>{"\"a.cuh", "\"b.cuh", "\"c.cuh", "<d"}));
}

TEST(NvrtcSource, IncludesOnlyEmbeddedTemplates) {
  std::set<std::string> embedded;
  for (const auto& f : fs::embedded_templates()) {
    EXPECT_TRUE(embedded.insert(f.name).second) << "duplicate embedded name " << f.name;
    EXPECT_EQ(std::string(f.data, f.size).size(), std::strlen(f.data)) << f.name << ": embedded size/NUL mismatch";
  }
  // Every template in the source tree is embedded, byte for byte.
  std::size_t on_disk = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(FUSEDSAMPLE_SOURCE_DIR) / "templates")) {
    if (e.path().extension() != ".cuh") continue;
    ++on_disk;
    const std::string name = e.path().filename().string();
    ASSERT_TRUE(embedded.count(name)) << name << " is not embedded";
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    for (const auto& t : fs::embedded_templates()) {
      if (name == t.name) {
        EXPECT_TRUE(std::string(t.data, t.size) == ss.str()) << name << " differs from its embedded copy (stale build?)";
      }
    }
  }
  EXPECT_EQ(on_disk, embedded.size());

  auto check = [&](const std::string& where, const std::string& text) {
    for (const std::string& inc : device_includes(text)) {
      EXPECT_EQ(inc[0], '"') << where << " includes system header <" << inc.substr(1) << ">";
      EXPECT_TRUE(embedded.count(inc.substr(1))) << where << " includes '" << inc.substr(1) << "', not embedded";
    }
  };
  for (const auto& f : fs::embedded_templates()) check(f.name, std::string(f.data, f.size));
  for (DType d : {DType::bf16, DType::fp16, DType::fp32})
    for (Variant v : {fs::default_variant(d), Variant::logits}) {
      KernelSpec s = fs::default_spec(d, Arch::sm_90, 16);
      s.variant = v;
      const fs::RenderedKernel r = fs::render_kernel(s);
      const auto incs = device_includes(r.source);
      EXPECT_FALSE(incs.empty());
      check("rendered " + s.to_string(), r.source);
    }
}

TEST(NvrtcSource, RenderRejectsInvalidSpecs) {
  KernelSpec s = fs::default_spec(DType::bf16, Arch::sm_90, 1);
  s.tile_v = 24;
  EXPECT_THROW(fs::render_kernel(s), fs::InvalidArgument);
  s = fs::default_spec(DType::fp32, Arch::sm_90, 1);
  s.variant = Variant::mma_sync;
  EXPECT_THROW(fs::render_kernel(s), fs::Unsupported);
}

// The instruction shape follows the launch bound's registers: whole T_N
// where its accumulators fit (ws at 168, wgmma at 255, coop w20x1 at 96),
// the largest part of T_N that fits where not (coop w16x1 at 128).
TEST(WgmmaInstruction, LargestPartOfTnThatFitsTheLaunchBound) {
  const auto b = DType::bf16;
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_ws, Arch::sm_90a, 64, 256, 64, 4, 12, 1)), 256);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma, Arch::sm_90a, 128, 256, 64, 3, 8, 1)), 256);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 128, 64, 4, 20, 1)), 128);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 256, 64, 2, 16, 1)), 128);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 192, 64, 2, 16, 1)), 192);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 200, 64, 2, 16, 1)), 40);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 8, 64, 2, 16, 1)), 8);
  // w12x1: 384 threads get 168 registers, enough for one m64n256.
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 256, 32, 4, 12, 1)), 256);
}

// The generated wgmma wrapper takes wgmma's scale-d as an argument (default 1:
// accumulate): the register epilogue's tiles start with scale-d = 0 on their
// first k16 step, which overwrites the accumulators instead of zeroing them
// after each tile (the GPU exactness tests of every `re` config check the result).
TEST(WgmmaInstruction, ScaleDIsAnArgument) {
  const std::string w = fs::emit_wgmma_k16(DType::bf16, 128);
  for (const char* needle : {"int scale_d = 1", "\"r\"(scale_d)", "setp.ne.b32 p, %66, 0",
                             "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"})
    EXPECT_NE(w.find(needle), std::string::npos) << needle << " not in:\n" << w;
}

TEST(NvrtcSource, RenderedSourceFixesTheSpec) {
  const KernelSpec s = make_spec(DType::fp16, Variant::mma_sync, Arch::sm_90a, 256, 32, 64, 3, 4, 2);
  const fs::RenderedKernel r = fs::render_kernel(s);
  for (const char* needle : {"#define FS_TV 256", "#define FS_TN 32", "#define FS_TD 64", "#define FS_STAGES 3",
                             "#define FS_WARPS_M 4", "#define FS_WARPS_N 2", "FS_DTYPE_F16"})
    EXPECT_NE(r.source.find(needle), std::string::npos) << needle;
  bool arch_option = false;
  for (const auto& o : r.options) arch_option |= o.find("sm_90a") != std::string::npos;
  EXPECT_TRUE(arch_option);
  EXPECT_STRNE(fs::generator_version(), "");
  EXPECT_TRUE(std::regex_match(fs::nvrtc_version(), std::regex(R"(\d+\.\d+)"))) << fs::nvrtc_version();
}

// ---------------------------------------------------------------- cache key

TEST(NvrtcCacheKey, StableAndSensitive) {
  const KernelSpec s = fs::default_spec(DType::bf16, Arch::sm_90, 16);
  const fs::RenderedKernel r = fs::render_kernel(s);
  const std::string key = fs::kernel_cache_key(r);
  EXPECT_TRUE(std::regex_match(key, std::regex("[0-9a-f]{32}"))) << key;
  EXPECT_EQ(fs::kernel_cache_key(r), key);
  EXPECT_EQ(fs::kernel_cache_key(fs::render_kernel(s)), key);

  std::set<std::string> keys = {key};
  fs::RenderedKernel t = r;
  t.source += "\n// changed\n";
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "source change";
  t = r;
  t.options.push_back("-lineinfo");
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "added option";
  t = r;
  t.options.back() += "x";
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "changed option";
  t = r;
  std::swap(t.options.front(), t.options.back());
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "reordered options";
  t = r;
  t.spec.arch = Arch::sm_80;  // the arch alone, options untouched
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "arch change";
  // Field boundaries are unambiguous: moving text between option strings changes the key.
  t = r;
  t.options = {"ab", "c"};
  fs::RenderedKernel u = r;
  u.options = {"a", "bc"};
  EXPECT_NE(fs::kernel_cache_key(t), fs::kernel_cache_key(u));
  // Distinct specs render to distinct keys; equal specs to equal keys.
  std::map<std::string, std::string> key_of_spec;
  std::set<std::string> spec_keys;
  for (Arch a : kArchs)
    for (DType d : {DType::bf16, DType::fp16, DType::fp32})
      for (std::int64_t rows : {1, 16, 64, 1024}) {
        const KernelSpec v = fs::default_spec(d, a, rows);
        const std::string k = fs::kernel_cache_key(fs::render_kernel(v));
        auto [it, fresh] = key_of_spec.emplace(v.to_string(), k);
        if (fresh) {
          EXPECT_TRUE(spec_keys.insert(k).second) << "key collision for " << v.to_string();
        } else {
          EXPECT_EQ(it->second, k) << v.to_string();
        }
        if (v == s) {
          EXPECT_EQ(k, key);
        }
      }
  EXPECT_EQ(spec_keys.size(), key_of_spec.size());
  EXPECT_GE(spec_keys.size(), 20u);
}

// ------------------------------------------------------------ compile error

TEST(NvrtcCompileError, CarriesLogOptionsAndSource) {
  const KernelSpec s = make_spec(DType::bf16, Variant::mma_sync, Arch::sm_80, 64, 8, 32, 3, 4, 1);
  fs::RenderedKernel r = fs::render_kernel(s);
  r.source += "\nthis is not valid CUDA C++ @@@;\n";
  try {
    fs::compile_uncached(r);
    FAIL() << "a syntax error compiled";
  } catch (const fs::CompileError& e) {
    EXPECT_FALSE(e.log().empty());
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_EQ(e.source(), r.source);
    for (const auto& o : r.options) EXPECT_NE(e.options().find(o), std::string::npos) << o;
    const std::string what = e.what();
    EXPECT_NE(what.find(s.to_string()), std::string::npos) << what;
    EXPECT_NE(what.find(e.log()), std::string::npos) << "what() should include the log";
  }
}

// -------------------------------------------------------------------- memo

TEST(NvrtcMemo, SameSpecSamePointer) {
  const KernelSpec s = make_spec(DType::fp16, Variant::mma_sync, Arch::sm_80, 64, 8, 32, 2, 4, 1);
  const auto a = fs::compile_kernel(s);
  const auto b = fs::compile_kernel(s);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->spec, s);
  EXPECT_FALSE(a->ptx.empty());
  EXPECT_FALSE(a->cubin.empty());
  // An invalid spec throws every time and is not memoized as a success.
  KernelSpec bad = s;
  bad.tile_n = 12;
  EXPECT_THROW(fs::compile_kernel(bad), fs::InvalidArgument);
  EXPECT_THROW(fs::compile_kernel(bad), fs::InvalidArgument);
}

TEST(NvrtcMemo, ConcurrentRequestsShareOneCompile) {
  const KernelSpec s = make_spec(DType::fp32, Variant::simt, Arch::sm_80, 64, 8, 16, 2, 2, 1);
  constexpr int kThreads = 4;
  std::vector<const fs::CompiledKernel*> got(kThreads, nullptr);
  std::vector<std::string> errors(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        got[std::size_t(t)] = fs::compile_kernel(s).get();  // the memo keeps it alive
      } catch (const std::exception& e) {
        errors[std::size_t(t)] = e.what();
      }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[std::size_t(t)], "") << "thread " << t;
    EXPECT_NE(got[std::size_t(t)], nullptr);
    EXPECT_EQ(got[std::size_t(t)], got[0]) << "thread " << t;
  }
  EXPECT_EQ(fs::compile_kernel(s).get(), got[0]);
}

}  // namespace

// ------------------------------------------------------------ resources

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
  // H100/H200 without a local tune).
  std::set<std::string> winners;
  for (const auto& e : fs::builtin_tuning_db().entries())
    if (const auto* b = e.best()) winners.insert(b->spec);
  EXPECT_GE(winners.size(), 5u);
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
