// Tests of runtime/cuda_driver.cpp that need no GPU: which CUresults leave the
// context unusable (driver::is_sticky), checked against cuda.h's own
// documentation of every error code.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "fusedsample/errors.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample {
namespace {

// Every CUDA_ERROR_X = N of cuda.h's CUresult enum with the text of the
// comment block just before it.
std::map<int, std::pair<std::string, std::string>> documented_results() {
  std::ifstream in(FUSEDSAMPLE_CUDA_H);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  const std::size_t begin = all.find("typedef enum cudaError_enum");
  const std::size_t end = all.find("} CUresult;", begin);
  std::map<int, std::pair<std::string, std::string>> out;
  if (begin == std::string::npos || end == std::string::npos) return out;
  const std::string body = all.substr(begin, end - begin);
  for (std::size_t at = body.find("/**"); at != std::string::npos; at = body.find("/**", at)) {
    const std::size_t close = body.find("*/", at);
    if (close == std::string::npos) break;
    std::string doc = body.substr(at + 3, close - at - 3);
    for (char& c : doc)
      if (c == '*' || c == '\n') c = ' ';
    std::istringstream rest(body.substr(close + 2, 200));
    std::string name, eq;
    long value = 0;
    at = close;
    if (!(rest >> name >> eq >> value) || eq != "=" || name.rfind("CUDA_", 0) != 0) continue;
    out[int(value)] = {name, doc};
  }
  return out;
}

// What cuda.h says of an error that leaves the process or context unusable.
bool documented_sticky(std::string doc) {
  std::string flat;
  std::istringstream words(doc);
  for (std::string w; words >> w;) flat += (flat.empty() ? "" : " ") + w;
  return flat.find("inconsistent state") != std::string::npos ||
         flat.find("must be terminated and relaunched") != std::string::npos ||
         flat.find("cannot be used anymore") != std::string::npos;
}

TEST(CudaDriver, IsStickyMatchesCudaHeaderDocumentation) {
  const auto results = documented_results();
  ASSERT_GT(results.size(), 50u) << "could not read the CUresult enum from " << FUSEDSAMPLE_CUDA_H;
  int sticky = 0;
  for (const auto& [value, named] : results) {
    const bool expect = documented_sticky(named.second);
    sticky += expect;
    EXPECT_EQ(driver::is_sticky(static_cast<CUresult>(value)), expect) << named.first << " = " << value;
  }
  // The device exceptions, assert, timeout, contained and MPS errors of CUDA 13's cuda.h.
  EXPECT_GE(sticky, 13);
}

TEST(CudaDriver, IsStickyForDeviceFaultsOnly) {
  EXPECT_TRUE(driver::is_sticky(CUDA_ERROR_ILLEGAL_ADDRESS));
  EXPECT_TRUE(driver::is_sticky(CUDA_ERROR_LAUNCH_FAILED));
  EXPECT_TRUE(driver::is_sticky(CUDA_ERROR_CONTAINED));
  EXPECT_FALSE(driver::is_sticky(CUDA_SUCCESS));
  EXPECT_FALSE(driver::is_sticky(CUDA_ERROR_OUT_OF_MEMORY));
  EXPECT_FALSE(driver::is_sticky(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
  EXPECT_FALSE(driver::is_sticky(CUDA_ERROR_INVALID_PTX));
  EXPECT_FALSE(driver::is_sticky(CUDA_ERROR_NO_BINARY_FOR_GPU));
}

// check() throws CudaError naming the call; a sticky one says the context is
// gone, so a server knows to restart instead of retrying.
TEST(CudaDriver, CheckSaysWhenTheContextIsUnusable) {
  try {
    driver::check(CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize(stream)");
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), int(CUDA_ERROR_ILLEGAL_ADDRESS));
    EXPECT_TRUE(e.sticky());
    EXPECT_NE(std::string(e.what()).find("cuStreamSynchronize(stream) failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("context is unusable"), std::string::npos) << e.what();
  }
  try {
    driver::check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(&p, bytes)");
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_FALSE(e.sticky());
    EXPECT_EQ(std::string(e.what()).find("unusable"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(driver::check(CUDA_SUCCESS, "cuInit(0)"));
}

}  // namespace
}  // namespace fusedsample
