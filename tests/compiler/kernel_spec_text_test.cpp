// kernel_spec_text_test.cpp: KernelSpec as text: the enum names, printing,
// parsing (round trips, malformed text, errors that list the choices) and
// "spec;spec" lists.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/kernel_spec_checks.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::kernel_spec_tests;

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
  // A field given twice (the last one won until session 48).
  for (const char* twice : {"bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1 tv256", "bf16 sm_90 mma_sync s4 s3",
                            "bf16 sm_90 mma_sync w4x1 w2x2", "bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re re",
                            "bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1 l2p0 l2p128"})
    expect_error<fs::InvalidArgument>([&] { KernelSpec::parse(twice); }, {"a second time"}, twice);
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90 mma_sync tv12a"); }, {"tv12a"}, "trailing junk");
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90 mma_sync w4"); }, {"w4"}, "warp token");
  // The whole warp token is named, not the half that failed ("bad number in spec token '1x1'" until session 60).
  for (const char* w : {"w4x1x1", "wAx1", "w4x"})
    expect_error<fs::InvalidArgument>([&] { KernelSpec::parse(std::string("bf16 sm_90 mma_sync ") + w); },
                                      {std::string("'") + w + "'", "wMxN"}, w);
  expect_error<fs::InvalidArgument>([] { KernelSpec::parse("bf16 sm_90 mma_sync q7"); }, {"q7"}, "unknown token");
  expect_error<fs::Unsupported>([] { KernelSpec::parse("int8 sm_90 mma_sync"); }, {"int8"}, "bad dtype");
  expect_error<fs::Unsupported>([] { KernelSpec::parse("bf16 sm_75 mma_sync"); }, {"sm_75"}, "bad arch");
  expect_error<fs::Unsupported>([] { KernelSpec::parse("bf16 sm_90 wmma"); }, {"wmma"}, "bad variant");
}

}  // namespace
