// argument_checks_test.cpp: every bad sampler input is refused on the host,
// before any driver call, with a message naming the problem. The checks never
// dereference pointers, so fake addresses stand in for device memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/sampler.hpp"
#include "runtime/argument_checks.hpp"

namespace fs = fusedsample;
using fs::runtime::check_args;
using fs::runtime::check_logits_args;
using fs::runtime::check_options;

namespace {

template <typename T = void>
T* fake(std::uintptr_t addr) {
  return reinterpret_cast<T*>(addr);
}

fs::SamplerOptions good_options(fs::DType dt = fs::DType::bf16) {
  fs::SamplerOptions o;
  o.vocab = 151936;
  o.hidden = 4096;
  o.dtype = dt;
  return o;
}

fs::SampleArgs good_args() {
  fs::SampleArgs a;
  a.weights = fake(0x10000);
  a.hidden_states = fake(0x20000);
  a.rows = 4;
  a.out = fake(0x30000);
  a.seed = 1;
  return a;
}

template <typename E>
void expect_error(const std::function<void()>& f, const std::vector<std::string>& needles, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": accepted";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << what << ": '" << msg << "' lacks '" << n << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": wrong exception type: " << e.what();
  }
}

void expect_bad_options(const fs::SamplerOptions& o, const std::vector<std::string>& needles, const std::string& what) {
  expect_error<fs::InvalidArgument>([&] { check_options(o); }, needles, what);
}

void expect_bad_args(const fs::SampleArgs& a, const std::vector<std::string>& needles, const std::string& what) {
  expect_error<fs::InvalidArgument>([&] { check_args(good_options(), a); }, needles, what);
}

// ------------------------------------------------------------------ options

TEST(ArgumentChecks, ValidOptionsPass) {
  for (fs::DType d : {fs::DType::bf16, fs::DType::fp16, fs::DType::fp32}) EXPECT_NO_THROW(check_options(good_options(d)));
  fs::SamplerOptions o = good_options();
  o.vocab = 1;
  o.hidden = 8;
  EXPECT_NO_THROW(check_options(o));
  o.vocab = std::numeric_limits<std::int32_t>::max() - 1024;  // the documented maximum
  EXPECT_NO_THROW(check_options(o));
  o = good_options();
  o.spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_90, 16);
  EXPECT_NO_THROW(check_options(o));
  o = good_options(fs::DType::fp32);
  o.spec = fs::default_spec(fs::DType::fp32, fs::Arch::sm_80, 64);
  EXPECT_NO_THROW(check_options(o));
}

TEST(ArgumentChecks, BadVocab) {
  for (std::int64_t v : {std::int64_t(0), std::int64_t(-1), std::int64_t(-151936), std::numeric_limits<std::int64_t>::min()}) {
    fs::SamplerOptions o = good_options();
    o.vocab = v;
    expect_bad_options(o, {"vocab", std::to_string(v)}, "vocab " + std::to_string(v));
  }
  for (std::int64_t v : {std::int64_t(std::numeric_limits<std::int32_t>::max() - 1023),
                         std::int64_t(std::numeric_limits<std::int32_t>::max()), std::int64_t(1) << 40}) {
    fs::SamplerOptions o = good_options();
    o.vocab = v;
    expect_bad_options(o, {"vocab", std::to_string(v)}, "vocab " + std::to_string(v));
  }
}

TEST(ArgumentChecks, BadHidden) {
  for (std::int64_t d : {0, -8, 4, 12, 4097, 4100}) {
    fs::SamplerOptions o = good_options();
    o.hidden = d;
    expect_bad_options(o, {"hidden", std::to_string(d)}, "hidden " + std::to_string(d));
  }
  fs::SamplerOptions o = good_options();
  o.hidden = (std::int64_t(1) << 24) + 8;
  expect_bad_options(o, {"hidden"}, "huge hidden");
}

TEST(ArgumentChecks, ForcedSpecWithWrongDType) {
  fs::SamplerOptions o = good_options(fs::DType::fp16);
  o.spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_90, 8);
  expect_bad_options(o, {"dtype", "bf16", "fp16"}, "bf16 spec for an fp16 sampler");
  o = good_options(fs::DType::fp32);
  o.spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_90, 8);
  expect_bad_options(o, {"dtype", "fp32"}, "bf16 spec for an fp32 sampler");
}

TEST(ArgumentChecks, ForcedSpecInvalid) {
  fs::SamplerOptions o = good_options();
  o.spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_90, 8);
  o.spec->tile_v = 24;
  expect_bad_options(o, {"tile_v"}, "forced tile_v 24");
  o.spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_90, 8);
  o.spec->stages = 1;
  expect_bad_options(o, {"stages"}, "forced stages 1");
  o.spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_90, 8);
  o.spec->variant = fs::Variant::logits;
  expect_bad_options(o, {"logits"}, "forced logits variant");
  // mma_sync for fp32: Unsupported.
  o = good_options(fs::DType::fp32);
  o.spec = fs::default_spec(fs::DType::fp32, fs::Arch::sm_90, 8);
  o.spec->variant = fs::Variant::mma_sync;
  expect_error<fs::Unsupported>([&] { check_options(o); }, {"mma_sync"}, "fp32 mma_sync");
}

// SamplerOptions::logits_spec (session 62): a logits spec, valid.
TEST(ArgumentChecks, ForcedLogitsSpec) {
  fs::SamplerOptions o = good_options();
  o.logits_spec = fs::KernelSpec::parse("fp32 sm_90 logits tv256 tn8 td64 s3 w4x1");
  EXPECT_NO_THROW(check_options(o));
  o.logits_spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_90, 8);
  expect_bad_options(o, {"logits spec", "variant", "not"}, "a matmul spec as the logits spec");
  o.logits_spec = fs::KernelSpec::parse("fp32 sm_90 logits tv256 tn8 td64 s3 w4x1");
  o.logits_spec->stages = 1;
  expect_bad_options(o, {"stages"}, "logits spec with one stage");
  o.logits_spec->stages = 3;
  o.logits_spec->tile_v = 20;
  expect_bad_options(o, {"tile_v"}, "logits spec tile_v 20");
}

TEST(ArgumentChecks, BadDTypeValue) {
  fs::SamplerOptions o = good_options();
  o.dtype = static_cast<fs::DType>(7);
  expect_error<fs::Unsupported>([&] { check_options(o); }, {"dtype"}, "dtype 7");
}

// A forced spec's variant and arch are enums too: out of range, the spec was
// accepted (validate() checked neither) and compiled as mma_sync.
TEST(ArgumentChecks, BadEnumValuesInForcedSpec) {
  fs::SamplerOptions o = good_options();
  o.spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_90, 8);
  o.spec->variant = static_cast<fs::Variant>(42);
  expect_error<fs::Unsupported>([&] { check_options(o); }, {"variant", "42"}, "variant 42");
  o.spec = fs::default_spec(fs::DType::bf16, fs::Arch::sm_86, 8);  // fits any arch's shared memory
  o.spec->arch = static_cast<fs::Arch>(9);
  expect_error<fs::Unsupported>([&] { check_options(o); }, {"arch", "9"}, "arch 9");
}

// --------------------------------------------------------------------- args

TEST(ArgumentChecks, ValidArgsPass) {
  EXPECT_NO_THROW(check_args(good_options(), good_args()));
  fs::SampleArgs a = good_args();
  a.temperature = 0.0f;  // greedy
  a.rows = 1;
  a.num_samples = 64;
  EXPECT_NO_THROW(check_args(good_options(), a));
  a.temperatures = fake<const float>(0x40004);
  a.seeds = fake<const std::uint64_t>(0x50008);
  a.offsets = fake<const std::uint64_t>(0x60010);
  a.temperature = std::numeric_limits<float>::quiet_NaN();  // ignored with a per-row array
  EXPECT_NO_THROW(check_args(good_options(), a));
  a = good_args();
  a.index_type = fs::IndexType::int32;
  a.out = fake(0x30004);  // 4-byte aligned is enough for int32
  EXPECT_NO_THROW(check_args(good_options(), a));
  a = good_args();
  a.temperature = std::numeric_limits<float>::max();
  EXPECT_NO_THROW(check_args(good_options(), a));
  a.temperature = fs::kMinTemperature;  // 2^-64, the smallest positive temperature
  EXPECT_NO_THROW(check_args(good_options(), a));
}

TEST(ArgumentChecks, NullPointers) {
  fs::SampleArgs a = good_args();
  a.weights = nullptr;
  expect_bad_args(a, {"weights", "null"}, "null weights");
  a = good_args();
  a.hidden_states = nullptr;
  expect_bad_args(a, {"hidden_states", "null"}, "null hidden");
  a = good_args();
  a.out = nullptr;
  expect_bad_args(a, {"out", "null"}, "null out");
}

TEST(ArgumentChecks, MisalignedPointers) {
  for (std::uintptr_t off : {2, 4, 8}) {
    fs::SampleArgs a = good_args();
    a.weights = fake(0x10000 + off);
    expect_bad_args(a, {"weights", "aligned"}, "weights +" + std::to_string(off));
    a = good_args();
    a.hidden_states = fake(0x20000 + off);
    expect_bad_args(a, {"hidden_states", "aligned"}, "hidden +" + std::to_string(off));
  }
  fs::SampleArgs a = good_args();
  a.out = fake(0x30004);
  expect_bad_args(a, {"out", "8-byte aligned"}, "int64 out +4");
  a.index_type = fs::IndexType::int32;
  a.out = fake(0x30002);
  expect_bad_args(a, {"out", "4-byte aligned"}, "int32 out +2");
}

TEST(ArgumentChecks, MisalignedPerRowArrays) {
  fs::SampleArgs a = good_args();
  a.temperatures = fake<const float>(0x40002);
  expect_bad_args(a, {"temperatures", "aligned"}, "temperatures +2");
  a = good_args();
  a.seeds = fake<const std::uint64_t>(0x50004);
  expect_bad_args(a, {"seeds", "aligned"}, "seeds +4");
  a = good_args();
  a.offsets = fake<const std::uint64_t>(0x60001);
  expect_bad_args(a, {"offsets", "aligned"}, "offsets +1");
}

TEST(ArgumentChecks, BadRowsAndSamples) {
  for (std::int64_t n : {std::int64_t(0), std::int64_t(-1), std::int64_t(1) << 31}) {
    fs::SampleArgs a = good_args();
    a.rows = n;
    expect_bad_args(a, {"rows", std::to_string(n)}, "rows " + std::to_string(n));
  }
  for (int s : {0, -3}) {
    fs::SampleArgs a = good_args();
    a.num_samples = s;
    expect_bad_args(a, {"num_samples", std::to_string(s)}, "num_samples " + std::to_string(s));
  }
}

// Sampler::reserve takes the same limits as a launch (until session 40 it took
// any rows >= 1: reserve(2^61, 1) sized a 6144-byte workspace, wrapped).
TEST(ArgumentChecks, BadReserve) {
  using fs::runtime::check_reserve;
  EXPECT_NO_THROW(check_reserve(1, 1));
  EXPECT_NO_THROW(check_reserve((std::int64_t(1) << 31) - 1, 1));
  for (std::int64_t n : {std::int64_t(0), std::int64_t(-1), std::int64_t(1) << 31, std::int64_t(1) << 61})
    expect_error<fs::InvalidArgument>([&] { check_reserve(n, 1); }, {"reserve", "rows", std::to_string(n)},
                                      "reserve rows " + std::to_string(n));
  expect_error<fs::InvalidArgument>([&] { check_reserve(4, 0); }, {"reserve", "num_samples"}, "reserve S 0");
  expect_error<fs::InvalidArgument>([&] { check_reserve((std::int64_t(1) << 31) - 1, 1000); },
                                    {"reserve", "rows * num_samples"}, "reserve rows * S");
}

TEST(ArgumentChecks, BadDevice) {
  fs::SamplerOptions o = good_options();
  o.device = -1;  // the current context's device
  EXPECT_NO_THROW(check_options(o));
  for (int dev : {-2, -100}) {
    o.device = dev;
    expect_bad_options(o, {"device", std::to_string(dev)}, "device " + std::to_string(dev));
  }
}

TEST(ArgumentChecks, BadScalarTemperature) {
  fs::SampleArgs a = good_args();
  a.temperature = std::numeric_limits<float>::quiet_NaN();
  expect_bad_args(a, {"temperature", "NaN"}, "NaN temperature");
  a.temperature = -std::numeric_limits<float>::quiet_NaN();
  expect_bad_args(a, {"temperature", "NaN"}, "-NaN temperature");
  a.temperature = -0.5f;
  expect_bad_args(a, {"temperature", "-0.5"}, "negative temperature");
  a.temperature = -std::numeric_limits<float>::denorm_min();
  expect_bad_args(a, {"temperature"}, "tiny negative temperature");
  a.temperature = std::numeric_limits<float>::infinity();
  expect_bad_args(a, {"temperature", "infinite"}, "+inf temperature");
  a.temperature = -std::numeric_limits<float>::infinity();
  expect_bad_args(a, {"temperature"}, "-inf temperature");
  // Positive below 2^-64: l / tau overflows fp32 (session 31: 1e-39 sampled
  // token 0 for every row with a positive logit).
  for (const float tiny : {1e-39f, std::numeric_limits<float>::denorm_min(), 1e-30f,
                           std::nextafter(fs::kMinTemperature, 0.0f)}) {
    a.temperature = tiny;
    expect_bad_args(a, {"temperature", "2^-64"}, "tiny positive temperature");
  }
}

TEST(ArgumentChecks, BadIndexType) {
  fs::SampleArgs a = good_args();
  a.index_type = static_cast<fs::IndexType>(5);
  expect_bad_args(a, {"index_type"}, "index_type 5");
}

// ------------------------------------------------------------------- logits

TEST(ArgumentChecks, LogitsArgs) {
  fs::SampleArgs a = good_args();
  a.weights = nullptr;  // unused by the logits path
  a.hidden_states = nullptr;
  EXPECT_NO_THROW(check_logits_args(good_options(), fake<const float>(0x70004), a));
  expect_error<fs::InvalidArgument>([&] { check_logits_args(good_options(), nullptr, a); }, {"logits", "null"},
                                    "null logits");
  expect_error<fs::InvalidArgument>([&] { check_logits_args(good_options(), fake<const float>(0x70002), a); },
                                    {"logits", "aligned"}, "logits +2");
  a.rows = 0;
  expect_error<fs::InvalidArgument>([&] { check_logits_args(good_options(), fake<const float>(0x70000), a); }, {"rows"},
                                    "logits rows 0");
  a = good_args();
  a.temperature = -1.0f;
  expect_error<fs::InvalidArgument>([&] { check_logits_args(good_options(), fake<const float>(0x70000), a); },
                                    {"temperature"}, "logits negative temperature");
  a = good_args();
  a.out = fake(0x30002);
  expect_error<fs::InvalidArgument>([&] { check_logits_args(good_options(), fake<const float>(0x70000), a); }, {"out"},
                                    "logits misaligned out");
}

}  // namespace
