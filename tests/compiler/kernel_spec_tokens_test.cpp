// kernel_spec_tokens_test.cpp: KernelSpec's optional trailing tokens (cN,
// l2, sk, re, pp, er, l2pN): how they print and parse, the shared memory they
// take, and the combinations validate() accepts or refuses.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/kernel_spec_checks.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::kernel_spec_tests;

// s is valid and prints as `text`, which parses back to s.
void expect_valid_text(const KernelSpec& s, const std::string& text) {
  EXPECT_NO_THROW(s.validate()) << text;
  EXPECT_EQ(s.to_string(), text);
  EXPECT_EQ(KernelSpec::parse(text), s) << text;
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
// wgmma_coop w12x1 with T_N a multiple of 8 from 64 to 256, without l2 only (clusters and, since session 28, stream-K allowed).
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
  for (auto [field, why] : {std::pair<int, const char*>{0, "re with tn56"}, {1, "re with w16x1"}, {3, "re with l2"}}) {
    KernelSpec bad = s;
    if (field == 0) bad.tile_n = 56;
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
  // Batch tiles fitted to 129-255 rows: T_N a multiple of 8 between 128 and 256 (wgmma's N step; a multiple of 32
  // until session 65), at tv128 only (tv256: more than 128 accumulators per consumer thread).
  for (int tn : {136, 144, 160, 168, 192, 200, 224, 248}) {
    KernelSpec fitted = wide;
    fitted.tile_n = tn;
    expect_valid_text(fitted, fmt::format("bf16 sm_90a wgmma_coop tv128 tn{} td64 s4 w12x1 re", tn));
    fitted.tile_v = 256;
    fitted.stages = 2;
    expect_error<fs::InvalidArgument>([&] { fitted.validate(); }, {"128 accumulators"}, "re tv256 fitted");
  }
  // and to 65-127 rows (session 66): T_N from 64, at tv256 too (at most 128 accumulators), consumer thread t
  // owning column t only for t < T_N. Below 64: refused.
  for (int tn : {64, 72, 96, 112, 120}) {
    KernelSpec narrow = s;
    narrow.tile_n = tn;
    expect_valid_text(narrow, fmt::format("bf16 sm_90a wgmma_coop tv256 tn{} td64 s4 w12x1 re", tn));
    narrow.tile_v = 128;
    expect_valid_text(narrow, fmt::format("bf16 sm_90a wgmma_coop tv128 tn{} td64 s4 w12x1 re", tn));
  }
  for (int tn : {8, 32, 56}) {  // (tn100, tn264: no tile_n of any spec)
    KernelSpec narrow = wide;
    narrow.tile_n = tn;
    expect_error<fs::InvalidArgument>([&] { narrow.validate(); }, {"register epilogue", "from 64 to 256"},
                                      fmt::format("re tn{}", tn));
  }
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

// The eager stage release prints as "er" after the epilogue tokens and
// before "l2pN"; it changes no shared memory, makes a binary of its own and
// is for the TMA-fed variants only.
TEST(KernelSpec, EagerReleaseToken) {
  KernelSpec s = spec(DType::bf16, Variant::wgmma_coop, 128, 64, 128, 4, 16, 1, Arch::sm_90a);
  const std::size_t plain = s.shared_bytes();
  EXPECT_FALSE(KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1").eager_release);
  s.eager_release = true;
  s.l2_promotion = 0;
  expect_valid_text(s, "bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1 er l2p0");
  EXPECT_EQ(s.shared_bytes(), plain);
  EXPECT_TRUE(fs::binary_spec(s).eager_release);  // another kernel, not a launch setting
  KernelSpec c2 = s;
  c2.cluster = 2;
  expect_valid_text(c2, "bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1 c2 er l2p0");
  KernelSpec re = spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 6, 12, 1, Arch::sm_90a);
  re.reg_epilogue = re.ping_pong = re.eager_release = true;
  expect_valid_text(re, "bf16 sm_90a wgmma_coop tv128 tn128 td64 s6 w12x1 re pp er");
  KernelSpec ws = spec(DType::bf16, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90a);
  ws.eager_release = true;
  expect_valid_text(ws, "bf16 sm_90a wgmma_ws tv128 tn64 td64 s4 w12x1 er");
  for (Variant v : {Variant::mma_sync, Variant::wgmma}) {
    KernelSpec cp = spec(DType::bf16, v, 128, 16, 64, 4, v == Variant::wgmma ? 8 : 4, 1,
                         v == Variant::wgmma ? Arch::sm_90a : Arch::sm_90);
    cp.eager_release = true;
    expect_error<fs::InvalidArgument>([&] { cp.validate(); }, {"eager stage release", "TMA-fed"}, "er without TMA");
  }
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn64 s4 w16x1 er er"); },
                                    {"er", "second time"}, "er twice");
}

}  // namespace
