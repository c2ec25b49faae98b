// tensor_maps_test.cpp: the tensor maps of the TMA-fed kernels refuse what
// the copy engine cannot address, on the host and before any driver call
// (these run without a GPU); the encoding itself is exercised by every
// wgmma_ws / wgmma_coop GPU test.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "fusedsample/errors.hpp"
#include "runtime/tensor_maps.hpp"

namespace fs = fusedsample;
using fs::runtime::operand_tensor_map;

namespace {

const void* fake(std::uintptr_t addr) { return reinterpret_cast<const void*>(addr); }

template <typename E, typename F>
void expect_message(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(TensorMaps, RefusesWhatTheCopyEngineCannotAddress) {
  const auto bf16 = fs::DType::bf16;
  expect_message<fs::InvalidArgument>([&] { operand_tensor_map(fake(0x1008), bf16, 100, 4096, 128, 64, 256, "weights"); },
                                      "not 16-byte aligned");
  expect_message<fs::InvalidArgument>([&] { operand_tensor_map(fake(0x1000), bf16, 100, 4100, 128, 64, 256, "weights"); },
                                      "[100, 4100]");
  expect_message<fs::InvalidArgument>([&] { operand_tensor_map(fake(0x1000), bf16, 0, 4096, 128, 64, 256, "hidden_states"); },
                                      "hidden_states");
  expect_message<fs::InvalidArgument>([&] { operand_tensor_map(fake(0x1000), bf16, 100, 4096, 512, 64, 256, "weights"); },
                                      "box of 512 rows");
  expect_message<fs::Unsupported>([&] { operand_tensor_map(fake(0x1000), fs::DType::fp32, 100, 4096, 128, 64, 256, "weights"); },
                                  "fp32");
  // Boxes are 64 (128-byte swizzle) or 32 columns (64-byte swizzle) wide.
  expect_message<fs::InvalidArgument>([&] { operand_tensor_map(fake(0x1000), bf16, 100, 4096, 128, 16, 256, "weights"); },
                                      "box of 16 columns");
  // The L2 promotion is one the driver names: none, 64, 128 or 256 bytes.
  expect_message<fs::InvalidArgument>([&] { operand_tensor_map(fake(0x1000), bf16, 100, 4096, 128, 64, 32, "weights"); },
                                      "L2 promotion of 32 bytes");
}

// The per-Sampler cache re-validates every key it has not encoded: a refused
// operand is refused again (nothing half-cached), and a new key is checked.
TEST(TensorMaps, CacheKeepsNoRefusedKey) {
  fs::runtime::OperandMapCache cache;
  const auto bf16 = fs::DType::bf16;
  for (int i = 0; i < 2; ++i)
    expect_message<fs::InvalidArgument>([&] { cache.get(fake(0x1008), bf16, 100, 4096, 128, 64, 256, "weights"); },
                                        "not 16-byte aligned");
  expect_message<fs::InvalidArgument>([&] { cache.get(fake(0x1000), bf16, 100, 4096, 300, 64, 256, "hidden_states"); },
                                      "box of 300 rows");
}
