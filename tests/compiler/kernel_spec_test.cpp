// kernel_spec_test.cpp: KernelSpec parsing, printing, validation and the
// built-in default specs.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/spec_builder.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"

namespace fs = fusedsample;
using fs::Arch;
using fs::DType;
using fs::KernelSpec;
using fs::Variant;

namespace {

constexpr DType kDTypes[] = {DType::bf16, DType::fp16, DType::fp32};
constexpr Arch kArchs[] = {Arch::sm_80, Arch::sm_86, Arch::sm_89, Arch::sm_90, Arch::sm_90a};

KernelSpec spec(DType dt, Variant var, int tv, int tn, int td, int st, int wm, int wn, Arch arch = Arch::sm_90) {
  return fusedsample::testing::build_spec(dt, var, arch, tv, tn, td, st, wm, wn);
}

KernelSpec with_cluster(KernelSpec s, int cluster) {
  s.cluster = cluster;
  return s;
}

KernelSpec in_l2(KernelSpec s) {
  s.stage_in_l2 = true;
  return s;
}

// Runs f, expecting exception E whose message contains every needle.
template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& needles, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << what << ": '" << msg << "' lacks '" << n << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": wrong exception type: " << e.what();
  }
}

// s is valid and prints as `text`, which parses back to s.
void expect_valid_text(const KernelSpec& s, const std::string& text) {
  EXPECT_NO_THROW(s.validate()) << text;
  EXPECT_EQ(s.to_string(), text);
  EXPECT_EQ(KernelSpec::parse(text), s) << text;
}

TEST(KernelSpec, EnumNames) {
  EXPECT_EQ(fs::to_string(DType::bf16), "bf16");
  EXPECT_EQ(fs::to_string(DType::fp16), "fp16");
  EXPECT_EQ(fs::to_string(DType::fp32), "fp32");
  EXPECT_EQ(fs::to_string(Arch::sm_80), "sm_80");
  EXPECT_EQ(fs::to_string(Arch::sm_86), "sm_86");
  EXPECT_EQ(fs::to_string(Arch::sm_89), "sm_89");
  EXPECT_EQ(fs::to_string(Arch::sm_90), "sm_90");
  EXPECT_EQ(fs::to_string(Arch::sm_90a), "sm_90a");
  EXPECT_EQ(fs::to_string(Variant::mma_sync), "mma_sync");
  EXPECT_EQ(fs::to_string(Variant::simt), "simt");
  EXPECT_EQ(fs::to_string(Variant::logits), "logits");
  EXPECT_EQ(fs::to_string(Variant::wgmma), "wgmma");
  EXPECT_EQ(fs::to_string(Variant::wgmma_ws), "wgmma_ws");
  for (DType d : kDTypes) EXPECT_EQ(fs::parse_dtype(fs::to_string(d)), d);
  for (Arch a : kArchs) EXPECT_EQ(fs::parse_arch(fs::to_string(a)), a);
  for (Variant v : {Variant::mma_sync, Variant::simt, Variant::logits, Variant::wgmma, Variant::wgmma_ws, Variant::wgmma_coop}) EXPECT_EQ(fs::parse_variant(fs::to_string(v)), v);
  EXPECT_EQ(fs::dtype_size(DType::bf16), 2u);
  EXPECT_EQ(fs::dtype_size(DType::fp16), 2u);
  EXPECT_EQ(fs::dtype_size(DType::fp32), 4u);
  EXPECT_EQ(fs::default_variant(DType::bf16), Variant::mma_sync);
  EXPECT_EQ(fs::default_variant(DType::fp16), Variant::mma_sync);
  EXPECT_EQ(fs::default_variant(DType::fp32), Variant::simt);
}

TEST(KernelSpec, ParseErrorsListTheChoices) {
  expect_error<fs::Unsupported>([] { fs::parse_dtype("int8"); }, {"int8", "bf16", "fp16", "fp32"}, "parse_dtype(int8)");
  expect_error<fs::Unsupported>([] { fs::parse_arch("sm_70"); }, {"sm_70", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"},
                                "parse_arch(sm_70)");
  expect_error<fs::Unsupported>([] { fs::parse_variant("wmma"); }, {"wmma", "mma_sync", "simt", "logits", "wgmma"},
                                "parse_variant(wmma)");
  expect_error<fs::Unsupported>([] { fs::parse_dtype(""); }, {"bf16"}, "parse_dtype('')");
  expect_error<fs::Unsupported>([] { fs::parse_dtype("BF16"); }, {"BF16"}, "parse is case-sensitive");
}

TEST(KernelSpec, ToStringFormat) {
  EXPECT_EQ(spec(DType::bf16, Variant::mma_sync, 128, 16, 64, 4, 4, 1).to_string(), "bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1");
  EXPECT_EQ(spec(DType::fp32, Variant::simt, 64, 32, 32, 3, 2, 2, Arch::sm_80).to_string(),
            "fp32 sm_80 simt tv64 tn32 td32 s3 w2x2");
}

TEST(KernelSpec, ParseToStringRoundTrip) {
  std::vector<KernelSpec> specs;
  for (DType d : kDTypes)
    for (Arch a : kArchs)
      for (Variant v : {Variant::mma_sync, Variant::simt, Variant::logits, Variant::wgmma, Variant::wgmma_ws, Variant::wgmma_coop})
        for (int tv : {16, 128, 512})
          for (int tn : {8, 64, 256}) specs.push_back(spec(d, v, tv, tn, tv == 16 ? 16 : 128, tn / 8 + 1, tn / 8, 3, a));
  for (const KernelSpec& s : specs) {
    const std::string text = s.to_string();
    const KernelSpec back = KernelSpec::parse(text);
    EXPECT_EQ(back, s) << text;
    EXPECT_EQ(back.to_string(), text);
  }
  // Hand-written text, tokens in any order after the first three.
  const KernelSpec p = KernelSpec::parse("fp16 sm_86 mma_sync w2x2 s3 td32 tn64 tv256");
  EXPECT_EQ(p, spec(DType::fp16, Variant::mma_sync, 256, 64, 32, 3, 2, 2, Arch::sm_86));
  // Omitted fields take the struct defaults.
  const KernelSpec q = KernelSpec::parse("  fp32   sm_89 simt ");
  KernelSpec expected;
  expected.dtype = DType::fp32;
  expected.arch = Arch::sm_89;
  expected.variant = Variant::simt;
  EXPECT_EQ(q, expected);
}

// Clusters print as a trailing "cN" only when N > 1, so every older spec
// text (tables, caches, exported configs) still parses to the same spec.
TEST(KernelSpec, ClusterToken) {
  KernelSpec c = spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 4, 20, 1, Arch::sm_90a);
  EXPECT_EQ(c.to_string(), "bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1");
  c.cluster = 2;
  expect_valid_text(c, "bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1 c2");
  EXPECT_EQ(KernelSpec::parse("bf16 sm_90a wgmma_coop c4 tv128").cluster, 4);
  EXPECT_EQ(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128").cluster, 1);
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90a wgmma_coop cx"); }, {"cx"}, "bad cluster");
  // A cluster needs no shared memory of its own: every block's `empty`
  // barriers count the whole cluster's consumers (tma_producer.cuh).
  const KernelSpec one = spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 4, 20, 1, Arch::sm_90a);
  EXPECT_EQ(c.shared_bytes(), one.shared_bytes());
}

// Logits staged in L2 print as a trailing "l2" (after any cluster), only
// when set, and take no shared memory: the staged tile's 128 KiB of tv128
// tn256 go to stages (four of 48 KiB fit, T_d = 64).
TEST(KernelSpec, L2StagingToken) {
  KernelSpec s = spec(DType::bf16, Variant::wgmma_coop, 128, 256, 64, 4, 12, 1, Arch::sm_90a);
  EXPECT_THROW(s.validate(), fs::InvalidArgument);  // 192 KiB of stages + 128 KiB of logits
  s.stage_in_l2 = true;
  expect_valid_text(s, "bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 l2");
  EXPECT_EQ(s.shared_bytes() + 256 * 128 * 4,
            spec(DType::bf16, Variant::wgmma_coop, 128, 256, 64, 4, 12, 1, Arch::sm_90a).shared_bytes());
  EXPECT_LE(s.shared_bytes(), 4u * 384 * 64 * 2 + 2048);
  s.cluster = 2;
  expect_valid_text(s, "bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 c2 l2");
  EXPECT_FALSE(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn128").stage_in_l2);
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90a wgmma_coop l3"); }, {"l3"}, "bad l2 token");
}

// Stream-K prints as a trailing "sk" (after "l2"), only when set; it needs
// 16 more bytes of shared memory (the staged tile's index) and is for
// wgmma_coop without clusters only.
TEST(KernelSpec, StreamKToken) {
  KernelSpec s = spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 4, 20, 1, Arch::sm_90a);
  const std::size_t plain = s.shared_bytes();
  s.stream_k = true;
  expect_valid_text(s, "bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1 sk");
  EXPECT_EQ(s.shared_bytes(), plain + 16);
  s.stage_in_l2 = true;
  expect_valid_text(s, "bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1 l2 sk");
  EXPECT_FALSE(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn128 s4").stream_k);
  EXPECT_EQ(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn128 s4 sk").stages, 4);  // "sk" is not a stage count
  s.cluster = 2;
  expect_error<fs::InvalidArgument>([&] { s.validate(); }, {"stream-K", "without clusters"}, "sk in a cluster");
  KernelSpec ws = spec(DType::bf16, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90a);
  ws.stream_k = true;
  expect_error<fs::InvalidArgument>([&] { ws.validate(); }, {"stream-K", "wgmma_coop only"}, "sk on wgmma_ws");
}

// The register epilogue prints as a trailing "re", only when set; it stages
// no logits (the shared memory of the staged tile is not needed), keeps each
// consumer's group words, lead noise, row values, seeds and offsets in shared memory, and is for
// wgmma_coop w12x1 with T_N = 128 or 256, without l2 only (clusters and, since session 28, stream-K allowed).
TEST(KernelSpec, RegisterEpilogueToken) {
  KernelSpec s = spec(DType::bf16, Variant::wgmma_coop, 256, 128, 64, 4, 12, 1, Arch::sm_90a);
  s.stage_in_l2 = true;
  const std::size_t unstaged = s.shared_bytes();
  s.stage_in_l2 = false;
  s.reg_epilogue = true;
  expect_valid_text(s, "bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re");
  // per consumer: words and lead noise [2][4][128], 3 x 128 row values (4 bytes each), the rows' seeds and
  // offsets (8 bytes each)
  EXPECT_EQ(s.shared_bytes(), unstaged + 2 * ((2 * 2 * 4 + 3) * 128 * 4 + 2 * 128 * 8));
  EXPECT_FALSE(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn128 s4").reg_epilogue);
  for (auto [field, why] : {std::pair<int, const char*>{0, "re with tn64"}, {1, "re with w16x1"}, {3, "re with l2"}}) {
    KernelSpec bad = s;
    if (field == 0) bad.tile_n = 64;
    if (field == 1) bad.warps_m = 16;
    if (field == 3) bad.stage_in_l2 = true;
    expect_error<fs::InvalidArgument>([&] { bad.validate(); }, {"register epilogue"}, why);
  }
  KernelSpec sk = s;  // stream-K: the consumers sample the tiles they finish (whole or after a tail's partial sums)
  sk.stream_k = true;
  expect_valid_text(sk, "bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 sk re");
  EXPECT_EQ(sk.shared_bytes(), s.shared_bytes());  // (no staged tile's index: the consumers sample)
  // T_N = 256 (tv128: one m64n256 per consumer and k16, two batch columns per consumer thread)
  KernelSpec wide = spec(DType::bf16, Variant::wgmma_coop, 128, 256, 64, 4, 12, 1, Arch::sm_90a);
  wide.reg_epilogue = true;
  expect_valid_text(wide, "bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 re");
  // per consumer: words and lead noise [1][4][256], 3 x 256 row values, seeds and offsets
  EXPECT_EQ(wide.shared_bytes(),
            std::size_t(4) * (128 + 256) * 64 * 2 + 4 * 16 + 16 + 2 * ((2 * 4 + 3) * 256 * 4 + 2 * 256 * 8) + 1024);
  KernelSpec wide256 = wide;  // 256 accumulators per consumer thread
  wide256.tile_v = 256;
  wide256.stages = 2;
  expect_error<fs::InvalidArgument>([&] { wide256.validate(); }, {"128 accumulators"}, "re tv256 tn256");
  KernelSpec wide_pp = wide;
  wide_pp.ping_pong = true;
  expect_error<fs::InvalidArgument>([&] { wide_pp.validate(); }, {"ping-pong", "tile_n 128"}, "pp with tn256");
  KernelSpec sk_pp = spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 6, 12, 1, Arch::sm_90a);
  sk_pp.reg_epilogue = sk_pp.ping_pong = sk_pp.stream_k = true;
  expect_error<fs::InvalidArgument>([&] { sk_pp.validate(); }, {"stream-K", "ping-pong"}, "sk with pp");
  KernelSpec c2 = s;  // in a cluster (sharing W at N = 256, H below), as cuBLAS's 256 x 128 tiles
  c2.cluster = 2;
  expect_valid_text(c2, "bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 c2 re");
  KernelSpec ws = spec(DType::bf16, Variant::wgmma_ws, 128, 128, 64, 4, 12, 1, Arch::sm_90a);
  ws.reg_epilogue = true;
  expect_error<fs::InvalidArgument>([&] { ws.validate(); }, {"register epilogue", "wgmma_coop only"}, "re on wgmma_ws");
}

// Ping-pong ("pp"): the register epilogue with each consumer multiplying
// whole 128 x 128 tiles (128 accumulators per consumer thread), two order
// barriers more; only with re and T_V = 128.
TEST(KernelSpec, PingPongToken) {
  KernelSpec s = spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 6, 12, 1, Arch::sm_90a);
  s.reg_epilogue = true;
  const std::size_t halves = s.shared_bytes();
  s.ping_pong = true;
  expect_valid_text(s, "bf16 sm_90a wgmma_coop tv128 tn128 td64 s6 w12x1 re pp");
  // per consumer: words and lead logits [2][4][128] instead of [1][4][128]; two 8-byte barriers
  EXPECT_EQ(s.shared_bytes(), halves + 2 * (8 * 128 * 4) + 16);
  EXPECT_FALSE(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn128 s4 w12x1 re").ping_pong);
  KernelSpec c2 = s;  // clusters: with ping-pong only
  c2.cluster = 2;
  expect_valid_text(c2, "bf16 sm_90a wgmma_coop tv128 tn128 td64 s6 w12x1 c2 re pp");
  KernelSpec no_re = s;
  no_re.reg_epilogue = false;
  expect_error<fs::InvalidArgument>([&] { no_re.validate(); }, {"ping-pong", "register epilogue"}, "pp without re");
  KernelSpec tv256 = s;
  tv256.tile_v = 256;
  tv256.stages = 3;
  expect_error<fs::InvalidArgument>([&] { tv256.validate(); }, {"ping-pong", "tile_v 128"}, "pp with tv256");
}

// The TMA maps' L2 promotion prints as a trailing "l2pN" (after every other
// token), only when it is not the default 256 bytes; it changes no shared
// memory and is for the TMA-fed variants only.
TEST(KernelSpec, L2PromotionToken) {
  KernelSpec s = spec(DType::bf16, Variant::wgmma_coop, 128, 64, 128, 4, 16, 1, Arch::sm_90a);
  const std::size_t plain = s.shared_bytes();
  EXPECT_EQ(s.l2_promotion, 256);
  EXPECT_EQ(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1").l2_promotion, 256);
  for (int bytes : {0, 64, 128}) {
    s.l2_promotion = bytes;
    expect_valid_text(s, fmt::format("bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1 l2p{}", bytes));
    EXPECT_EQ(s.shared_bytes(), plain);
  }
  EXPECT_EQ(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1 l2p256").to_string(),
            "bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1");
  KernelSpec re = spec(DType::bf16, Variant::wgmma_coop, 256, 128, 64, 4, 12, 1, Arch::sm_90a);
  re.reg_epilogue = true;
  re.l2_promotion = 128;
  expect_valid_text(re, "bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re l2p128");
  KernelSpec ws = spec(DType::bf16, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90a);
  ws.l2_promotion = 0;
  expect_valid_text(ws, "bf16 sm_90a wgmma_ws tv128 tn64 td64 s4 w12x1 l2p0");
  s.l2_promotion = 32;
  expect_error<fs::InvalidArgument>([&] { s.validate(); }, {"L2 promotion", "0 (none), 64, 128 or 256"}, "l2p32");
  for (Variant v : {Variant::mma_sync, Variant::wgmma}) {
    KernelSpec cp = spec(DType::bf16, v, 128, 16, 64, 4, v == Variant::wgmma ? 8 : 4, 1,
                         v == Variant::wgmma ? Arch::sm_90a : Arch::sm_90);
    cp.validate();
    cp.l2_promotion = 128;
    expect_error<fs::InvalidArgument>([&] { cp.validate(); }, {"L2 promotion", "TMA-fed"}, "l2p128 without TMA");
  }
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90a wgmma_coop l2pX"); }, {"l2pX"}, "bad l2p");
}

// "spec;spec" lists: trimmed items, empty ones dropped, order kept.
TEST(KernelSpec, SplitSpecList) {
  using V = std::vector<std::string>;
  EXPECT_EQ(fs::split_spec_list("bf16 sm_90 mma_sync tv64; ;  bf16 sm_90a wgmma_coop tv128 l2p0 ;"),
            (V{"bf16 sm_90 mma_sync tv64", "bf16 sm_90a wgmma_coop tv128 l2p0"}));
  EXPECT_EQ(fs::split_spec_list("one"), V{"one"});
  EXPECT_TRUE(fs::split_spec_list("").empty());
  EXPECT_TRUE(fs::split_spec_list(" ; ;").empty());
}

TEST(KernelSpec, ParseRejectsMalformedText) {
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90"); }, {"bf16 sm_90"}, "two fields");
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse(""); }, {"dtype arch variant"}, "empty");
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90 mma_sync tvX"); }, {"tvX"}, "bad number");
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90 mma_sync tv12a"); }, {"tv12a"}, "trailing junk");
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90 mma_sync w4"); }, {"w4"}, "warp token");
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90 mma_sync q7"); }, {"q7"}, "unknown token");
  expect_error<fs::Unsupported>([] { KernelSpec::parse("int8 sm_90 mma_sync"); }, {"int8"}, "bad dtype");
  expect_error<fs::Unsupported>([] { KernelSpec::parse("bf16 sm_75 mma_sync"); }, {"sm_75"}, "bad arch");
  expect_error<fs::Unsupported>([] { KernelSpec::parse("bf16 sm_90 wmma"); }, {"wmma"}, "bad variant");
}

TEST(KernelSpec, ValidSpecsPass) {
  const KernelSpec ok[] = {
      spec(DType::bf16, Variant::mma_sync, 128, 16, 64, 4, 4, 1),
      spec(DType::fp16, Variant::mma_sync, 64, 8, 32, 3, 4, 1),
      spec(DType::bf16, Variant::mma_sync, 256, 32, 64, 3, 4, 2),
      spec(DType::fp16, Variant::mma_sync, 16, 8, 16, 2, 1, 1),
      spec(DType::fp32, Variant::simt, 128, 32, 32, 3, 4, 1),
      spec(DType::fp32, Variant::simt, 32, 8, 16, 2, 1, 1),
      spec(DType::fp32, Variant::logits, 256, 8, 64, 4, 4, 1),
      spec(DType::bf16, Variant::logits, 256, 8, 0, 0, 4, 1),  // logits ignores tile_d and stages
      spec(DType::bf16, Variant::wgmma, 64, 8, 64, 4, 4, 1, Arch::sm_90a),
      spec(DType::fp16, Variant::wgmma, 128, 256, 64, 3, 8, 1, Arch::sm_90a),
      spec(DType::bf16, Variant::wgmma, 128, 128, 64, 3, 4, 1, Arch::sm_90a),  // two 64-row blocks per warpgroup
      spec(DType::bf16, Variant::wgmma, 128, 32, 128, 4, 8, 1, Arch::sm_90a),  // two 64-column sub-tiles per stage
      spec(DType::bf16, Variant::wgmma_ws, 128, 128, 64, 4, 12, 1, Arch::sm_90a),
      spec(DType::fp16, Variant::wgmma_ws, 64, 256, 64, 4, 12, 1, Arch::sm_90a),
      spec(DType::bf16, Variant::wgmma_ws, 64, 8, 64, 8, 12, 1, Arch::sm_90a),
      spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 4, 16, 1, Arch::sm_90a),
      spec(DType::fp16, Variant::wgmma_coop, 256, 64, 64, 3, 20, 1, Arch::sm_90a),  // two 64-row blocks per consumer
      spec(DType::bf16, Variant::wgmma_coop, 128, 8, 64, 2, 16, 1, Arch::sm_90a),
      spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 5, 20, 1, Arch::sm_90a),  // five stages: the staged tile is unpadded
      with_cluster(spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 5, 20, 1, Arch::sm_90a), 2),
      with_cluster(spec(DType::fp16, Variant::wgmma_coop, 256, 32, 64, 4, 16, 1, Arch::sm_90a), 4),
      spec(DType::bf16, Variant::wgmma_coop, 128, 64, 128, 4, 20, 1, Arch::sm_90a),  // two boxes per stage
      spec(DType::bf16, Variant::wgmma_coop, 128, 256, 64, 2, 16, 1, Arch::sm_90a),  // 128 accumulators: 2 x m64n128
      spec(DType::fp16, Variant::wgmma_coop, 256, 128, 64, 2, 16, 1, Arch::sm_90a),  // 128 accumulators: 2 row blocks
      spec(DType::bf16, Variant::wgmma_coop, 128, 256, 32, 4, 12, 1, Arch::sm_90a),  // w12x1: one m64n256, 64-byte rows
      spec(DType::bf16, Variant::wgmma_coop, 128, 128, 32, 6, 12, 1, Arch::sm_90a),  // w12x1 with 64 accumulators
      in_l2(spec(DType::bf16, Variant::wgmma_coop, 256, 128, 64, 4, 12, 1, Arch::sm_90a)),  // logits staged in L2
      in_l2(spec(DType::fp16, Variant::wgmma_coop, 128, 128, 64, 6, 20, 1, Arch::sm_90a)),
  };
  for (const KernelSpec& s : ok) {
    EXPECT_NO_THROW(s.validate()) << s.to_string();
    EXPECT_EQ(s.threads(), 32 * s.warps_m * s.warps_n);
  }
}

struct BadSpec {
  KernelSpec spec;
  bool unsupported;                 // Unsupported rather than InvalidArgument
  std::vector<std::string> needles;  // the message names the field
};

TEST(KernelSpec, ValidateNamesTheBadField) {
  const DType b = DType::bf16, f = DType::fp32;
  const Variant m = Variant::mma_sync, s = Variant::simt, w = Variant::wgmma;
  const std::vector<BadSpec> cases = {
      {spec(b, m, 24, 16, 64, 4, 4, 1), false, {"tile_v"}},
      {spec(b, m, 0, 16, 64, 4, 4, 1), false, {"tile_v"}},
      {spec(b, m, 528, 16, 64, 4, 4, 1), false, {"tile_v"}},
      {spec(b, m, -16, 16, 64, 4, 4, 1), false, {"tile_v"}},
      {spec(b, m, 128, 12, 64, 4, 4, 1), false, {"tile_n"}},
      {spec(b, m, 128, 0, 64, 4, 4, 1), false, {"tile_n"}},
      {spec(b, m, 128, 264, 64, 4, 4, 1), false, {"tile_n"}},
      {spec(b, m, 128, 16, 64, 4, 0, 1), false, {"warps_m"}},
      {spec(b, m, 128, 16, 64, 4, 4, 0), false, {"warps_n"}},
      {spec(b, m, 128, 16, 64, 4, 8, 4), false, {"warps_m * warps_n"}},
      {spec(b, m, 128, 16, 64, 1, 4, 1), false, {"stages"}},
      {spec(b, m, 128, 16, 64, 0, 4, 1), false, {"stages"}},
      {spec(b, m, 128, 16, 64, 64, 4, 1), false, {"stages"}},
      {spec(b, m, 128, 16, 48, 4, 4, 1), false, {"tile_d"}},
      {spec(b, m, 128, 16, 8, 4, 4, 1), false, {"tile_d"}},
      {spec(b, m, 128, 16, 256, 4, 4, 1), false, {"tile_d"}},
      {spec(f, m, 128, 16, 64, 4, 4, 1), true, {"mma_sync", "fp32"}},
      {spec(b, s, 128, 16, 32, 3, 4, 1), true, {"simt", "fp32"}},
      {spec(DType::fp16, s, 128, 16, 32, 3, 4, 1), true, {"simt"}},
      {spec(b, m, 64, 16, 64, 4, 8, 1), false, {"tile_v / warps_m"}},   // 8 rows per warp
      {spec(b, m, 48, 16, 64, 4, 2, 1), false, {"tile_v / warps_m"}},   // 24 rows per warp
      {spec(b, m, 128, 8, 64, 4, 4, 2), false, {"tile_n / warps_n"}},   // 4 columns per warp
      {spec(b, m, 128, 24, 64, 4, 4, 2), false, {"tile_n / warps_n"}},  // 12 columns per warp
      {spec(b, m, 512, 64, 32, 2, 1, 1), false, {"warp tile"}},         // 32 x 8 mma tiles
      // One warp cannot cover a 128-deep bf16 row (16 chunks) in the swizzled
      // loader (templates/pipeline.cuh: threads / chunks must be a multiple of 8).
      {spec(b, m, 16, 8, 128, 2, 1, 1), false, {"threads"}},
      {spec(f, s, 48, 16, 32, 3, 1, 1), false, {"tile_v"}},
      {spec(f, s, 128, 8, 32, 3, 4, 4), false, {"tile_n", "warp count"}},
      {spec(f, s, 512, 128, 32, 2, 1, 1), false, {"accumulators"}},
      {spec(b, m, 256, 64, 128, 8, 4, 2), false, {"shared memory"}},
      {spec(f, s, 256, 64, 128, 8, 4, 4), false, {"shared memory"}},
      // wgmma: Hopper's arch-specific target only, 64-deep stages, whole warpgroups.
      {spec(b, w, 128, 64, 64, 3, 4, 1, Arch::sm_90), true, {"wgmma", "sm_90a"}},
      {spec(b, w, 128, 64, 64, 3, 4, 1, Arch::sm_80), true, {"wgmma", "sm_90a"}},
      {spec(f, w, 128, 64, 64, 3, 4, 1, Arch::sm_90a), true, {"wgmma", "fp32"}},
      {spec(b, w, 128, 64, 32, 3, 4, 1, Arch::sm_90a), false, {"tile_d", "64", "or 128"}},
      {spec(b, w, 128, 64, 64, 3, 2, 2, Arch::sm_90a), false, {"warpgroups"}},
      {spec(b, w, 96, 64, 64, 3, 4, 1, Arch::sm_90a), false, {"64 per warpgroup"}},
      {spec(b, w, 128, 256, 64, 3, 4, 1, Arch::sm_90a), false, {"128 accumulators"}},
      {spec(b, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90), true, {"wgmma_ws", "sm_90a"}},
      {spec(b, Variant::wgmma_ws, 128, 64, 64, 4, 8, 1, Arch::sm_90a), false, {"w12x1"}},
      {spec(b, Variant::wgmma_ws, 256, 64, 64, 4, 12, 1, Arch::sm_90a), false, {"64 or 128"}},
      {spec(b, Variant::wgmma_ws, 128, 256, 64, 2, 12, 1, Arch::sm_90a), false, {"128 accumulators"}},
      {spec(b, Variant::wgmma_ws, 128, 64, 64, 2, 12, 1, Arch::sm_90a), false, {"stages"}},
      {spec(b, Variant::wgmma_ws, 128, 64, 128, 4, 12, 1, Arch::sm_90a), false, {"tile_d must be 64"}},
      {spec(b, Variant::wgmma_coop, 128, 64, 16, 4, 16, 1, Arch::sm_90a), false, {"tile_d", "or 32"}},
      {spec(b, Variant::wgmma_coop, 128, 128, 128, 3, 20, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::wgmma_coop, 128, 128, 64, 4, 16, 1, Arch::sm_90), true, {"wgmma_coop", "sm_90a"}},
      {spec(f, Variant::wgmma_coop, 128, 128, 64, 4, 16, 1, Arch::sm_90a), true, {"wgmma_coop", "fp32"}},
      {spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 8, 1, Arch::sm_90a), false, {"w12x1", "w16x1 or w20x1"}},
      {spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 4, 2, Arch::sm_90a), false, {"w12x1"}},
      {spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 24, 1, Arch::sm_90a), false, {"[1, 20]"}},
      {spec(b, Variant::wgmma_coop, 64, 64, 64, 4, 16, 1, Arch::sm_90a), false, {"128 or 256"}},
      {spec(b, Variant::wgmma_coop, 128, 256, 64, 2, 20, 1, Arch::sm_90a), false, {"need w16x1 or w12x1"}},
      // T_d = 32 with 128 KiB of staged logits: five stages of 24 KiB do not fit, four do (valid list).
      {spec(b, Variant::wgmma_coop, 128, 256, 32, 5, 12, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::wgmma_coop, 256, 256, 64, 2, 16, 1, Arch::sm_90a), false, {"128 accumulators"}},
      {spec(b, Variant::wgmma_coop, 128, 256, 64, 3, 16, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::wgmma_coop, 256, 128, 64, 2, 20, 1, Arch::sm_90a), false, {"64 accumulators"}},
      {spec(b, Variant::wgmma_coop, 128, 128, 64, 6, 16, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::wgmma_coop, 256, 64, 64, 5, 16, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::mma_sync, 128, 64, 64, 4, 20, 1), false, {"[1, 16]"}},
      {with_cluster(spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 16, 1, Arch::sm_90a), 3), false, {"cluster", "1, 2 or 4"}},
      {with_cluster(spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 16, 1, Arch::sm_90a), 8), false, {"cluster"}},
      {with_cluster(spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 16, 1, Arch::sm_90a), 0), false, {"cluster"}},
      {with_cluster(spec(b, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90a), 2), false, {"wgmma_coop only"}},
      {with_cluster(spec(b, Variant::mma_sync, 128, 16, 64, 4, 4, 1), 2), false, {"wgmma_coop only"}},
      {in_l2(spec(b, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90a)), false, {"l2", "wgmma_coop only"}},
      {in_l2(spec(b, Variant::mma_sync, 128, 16, 64, 4, 4, 1)), false, {"l2", "wgmma_coop only"}},
      {in_l2(spec(b, Variant::wgmma_coop, 128, 256, 64, 5, 12, 1, Arch::sm_90a)), false, {"shared memory"}},
      {spec(b, Variant::wgmma, 256, 256, 64, 2, 16, 1, Arch::sm_90a), false, {"128 accumulators", "registers"}},
  };
  for (const BadSpec& c : cases) {
    const std::string text = c.spec.to_string();
    if (c.unsupported) expect_error<fs::Unsupported>([&] { c.spec.validate(); }, c.needles, text);
    else expect_error<fs::InvalidArgument>([&] { c.spec.validate(); }, c.needles, text);
  }
  // InvalidArgument messages quote the whole spec.
  expect_error<fs::InvalidArgument>([] { spec(DType::bf16, Variant::mma_sync, 24, 16, 64, 4, 4, 1).validate(); },
                                    {"bf16 sm_90 mma_sync tv24 tn16 td64 s4 w4x1"}, "spec in message");
}

// What the kernels carve out of dynamic shared memory (templates/fused_mma.cuh,
// fused_simt.cuh, sample_logits.cuh): FS_STAGES pipeline stages, each a T_V x
// T_d slice of W and a T_N x T_d slice of H (simt pads rows by 4 fp32), and
// after them the T_N x (T_V + 4) fp32 staged logit tile, live at the same time
// (the persistent pipeline loads the next tile while the epilogue runs).
TEST(KernelSpec, SharedBytesCoverTheKernelsBuffers) {
  for (DType d : kDTypes)
    for (int tv : {64, 128, 256})
      for (int tn : {8, 32, 64})
        for (int td : {16, 32, 64})
          for (int st : {2, 3, 4}) {
            const Variant v = fs::default_variant(d);
            const KernelSpec s = spec(d, v, tv, tn, td, st, 2, 1);
            const std::size_t row = v == Variant::simt ? std::size_t(td + 4) * 4 : std::size_t(td) * fs::dtype_size(d);
            const std::size_t pipeline = std::size_t(st) * std::size_t(tv + tn) * row;
            const std::size_t epilogue = std::size_t(tn) * std::size_t(tv + 4) * 4;
            EXPECT_GE(s.shared_bytes(), pipeline + epilogue) << s.to_string();
          }
  const KernelSpec l = spec(DType::fp32, Variant::logits, 256, 8, 64, 4, 4, 1);
  EXPECT_GE(l.shared_bytes(), std::size_t(8) * (256 + 4) * 4);
  // wgmma (templates/fused_wgmma.cuh): 1024 bytes of alignment slack, the
  // stages, and at most 64 batch rows of staged logits at a time.
  for (int tn : {8, 64, 128, 256}) {
    const KernelSpec w = spec(DType::bf16, Variant::wgmma, 64, tn, 64, 3, 4, 1, Arch::sm_90a);
    EXPECT_GE(w.shared_bytes(), 1024 + std::size_t(3) * (64 + tn) * 128 + std::size_t(std::min(tn, 64)) * (64 + 4) * 4);
  }
}

// wgmma needs the arch-specific sm_90a target: the runtime compiles it for
// sm_90a on an sm_90 device and leaves every other combination alone.
TEST(KernelSpec, TargetArch) {
  EXPECT_EQ(fs::target_arch(Variant::wgmma, Arch::sm_90), Arch::sm_90a);
  EXPECT_EQ(fs::target_arch(Variant::wgmma, Arch::sm_90a), Arch::sm_90a);
  EXPECT_EQ(fs::target_arch(Variant::wgmma, Arch::sm_80), Arch::sm_80);  // then validate() refuses it
  EXPECT_EQ(fs::target_arch(Variant::wgmma_ws, Arch::sm_90), Arch::sm_90a);
  EXPECT_EQ(fs::target_arch(Variant::wgmma_coop, Arch::sm_90), Arch::sm_90a);
  EXPECT_TRUE(fs::uses_tma(Variant::wgmma_ws));
  EXPECT_TRUE(fs::uses_tma(Variant::wgmma_coop));
  EXPECT_FALSE(fs::uses_tma(Variant::wgmma));
  EXPECT_FALSE(fs::uses_tma(Variant::mma_sync));
  EXPECT_EQ(fs::target_arch(Variant::wgmma_ws, Arch::sm_86), Arch::sm_86);
  EXPECT_EQ(fs::target_arch(Variant::mma_sync, Arch::sm_90), Arch::sm_90);
  EXPECT_EQ(fs::target_arch(Variant::simt, Arch::sm_86), Arch::sm_86);
}

TEST(KernelSpec, DefaultSpecIsValidForEveryDTypeArchAndBatch) {
  for (DType d : kDTypes)
    for (Arch a : kArchs)
      for (std::int64_t rows = 1; rows <= 1024; ++rows) {
        const KernelSpec s = fs::default_spec(d, a, rows);
        ASSERT_NO_THROW(s.validate()) << fs::to_string(d) << " " << fs::to_string(a) << " rows " << rows << ": "
                                      << s.to_string();
        ASSERT_EQ(s.dtype, d);
        const bool hopper = (a == Arch::sm_90 || a == Arch::sm_90a) && d != DType::fp32;
        ASSERT_EQ(s.variant, hopper ? Variant::wgmma : fs::default_variant(d));
        ASSERT_EQ(s.arch, fs::target_arch(s.variant, a));
        const KernelSpec p = fs::portable_default_spec(d, a, rows);
        ASSERT_NO_THROW(p.validate()) << p.to_string();
        ASSERT_EQ(p.variant, fs::default_variant(d));
        ASSERT_EQ(p.arch, a);
        ASSERT_LE(s.shared_bytes(), 227u * 1024u);
      }
  // Larger batches never get a smaller batch tile.
  for (DType d : kDTypes) {
    int prev = 0;
    for (std::int64_t rows = 1; rows <= 1 << 20; rows *= 2) {
      const int tn = fs::default_spec(d, Arch::sm_90, rows).tile_n;
      EXPECT_GE(tn, prev) << rows;
      prev = tn;
    }
  }
}

TEST(KernelSpec, ArchForComputeCapability) {
  EXPECT_EQ(fs::arch_for_compute_capability(8, 0), Arch::sm_80);
  EXPECT_EQ(fs::arch_for_compute_capability(8, 6), Arch::sm_86);
  EXPECT_EQ(fs::arch_for_compute_capability(8, 7), Arch::sm_86);
  EXPECT_EQ(fs::arch_for_compute_capability(8, 9), Arch::sm_89);
  EXPECT_EQ(fs::arch_for_compute_capability(9, 0), Arch::sm_90);
  EXPECT_EQ(fs::arch_for_compute_capability(10, 0), Arch::sm_90);
  EXPECT_EQ(fs::arch_for_compute_capability(12, 0), Arch::sm_90);
  expect_error<fs::Unsupported>([] { fs::arch_for_compute_capability(7, 5); }, {"7.5"}, "Turing");
  expect_error<fs::Unsupported>([] { fs::arch_for_compute_capability(6, 0); }, {"6.0"}, "Pascal");
}

}  // namespace
