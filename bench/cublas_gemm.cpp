#include "bench/cublas_gemm.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

#include <vector>

#include "bench/event_timer.hpp"
#include "fusedsample/errors.hpp"
#include "runtime/device_memory.hpp"

namespace fusedsample::bench {
namespace {

void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(fmt::format("{} failed: cublasStatus {}", call, int(s)));
}
#define FS_LT(call) check(call, #call)

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp16: return CUDA_R_16F;
    case DType::fp32: return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

}  // namespace

struct CublasGemm::Impl {
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  int chosen = 0;
  int tried = 0;
  double chosen_us = 0;
  runtime::DeviceMemory workspace{std::size_t(64) << 20};
  CUstream stream;
  float alpha = 1.0f, beta = 0.0f;
};

CublasGemm::CublasGemm(DType dtype, std::int64_t V, std::int64_t d, std::int64_t N, bool out_fp32, CUstream stream)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.stream = stream;
  FS_LT(cublasLtCreate(&m.lt));
  FS_LT(cublasLtMatmulDescCreate(&m.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  FS_LT(cublasLtMatmulDescSetAttribute(m.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  FS_LT(cublasLtMatmulDescSetAttribute(m.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  // Column-major view: logits^T [V, N] = (W [d, V])^T * H^T [d, N].
  FS_LT(cublasLtMatrixLayoutCreate(&m.a, cuda_type(dtype), d, V, d));
  FS_LT(cublasLtMatrixLayoutCreate(&m.b, cuda_type(dtype), d, N, d));
  FS_LT(cublasLtMatrixLayoutCreate(&m.c, out_fp32 ? CUDA_R_32F : cuda_type(dtype), V, N, V));
  FS_LT(cublasLtMatmulPreferenceCreate(&m.pref));
  const std::size_t ws = m.workspace.size();
  FS_LT(cublasLtMatmulPreferenceSetAttribute(m.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  m.algos.resize(kMaxAlgorithms);
  int returned = 0;
  FS_LT(cublasLtMatmulAlgoGetHeuristic(m.lt, m.op, m.a, m.b, m.c, m.c, m.pref, int(m.algos.size()), m.algos.data(),
                                       &returned));
  if (returned == 0) throw Error("cuBLASLt found no algorithm for the LM-head GEMM");
  m.algos.resize(returned);
}

CublasGemm::~CublasGemm() {
  auto& m = *impl_;
  if (m.pref) cublasLtMatmulPreferenceDestroy(m.pref);
  if (m.c) cublasLtMatrixLayoutDestroy(m.c);
  if (m.b) cublasLtMatrixLayoutDestroy(m.b);
  if (m.a) cublasLtMatrixLayoutDestroy(m.a);
  if (m.op) cublasLtMatmulDescDestroy(m.op);
  if (m.lt) cublasLtDestroy(m.lt);
}

void CublasGemm::run(const void* w, const void* h, void* logits) {
  auto& m = *impl_;
  FS_LT(cublasLtMatmul(m.lt, m.op, &m.alpha, w, m.a, h, m.b, &m.beta, logits, m.c, logits, m.c,
                       &m.algos[m.chosen].algo, reinterpret_cast<void*>(m.workspace.get()), m.workspace.size(),
                       reinterpret_cast<cudaStream_t>(m.stream)));
}

void CublasGemm::autotune(const void* w, const void* h, void* logits, int candidates) {
  auto& m = *impl_;
  double best = 1e30;
  int best_i = 0;
  const int n = std::min<int>(candidates, int(m.algos.size()));
  m.tried = 0;
  for (int i = 0; i < n; ++i) {
    m.chosen = i;
    try {
      const double t = median(time_us([&] { run(w, h, logits); }, m.stream, 3, 15));
      ++m.tried;
      if (t < best) {
        best = t;
        best_i = i;
      }
    } catch (const Error&) {
      // an algorithm that fails to launch is skipped
    }
  }
  m.chosen = best_i;
  m.chosen_us = best;
}

int CublasGemm::algorithms_tried() const { return impl_->tried; }

std::string CublasGemm::chosen_text() const {
  const auto& m = *impl_;
  const cublasLtMatmulAlgo_t& algo = m.algos[std::size_t(m.chosen)].algo;
  const auto attr = [&](cublasLtMatmulAlgoConfigAttributes_t a) {
    std::uint32_t v = 0;  // ID, TILE_ID, STAGES_ID and SPLITK_NUM are 32-bit (cublasLt.h)
    std::size_t written = 0;
    return cublasLtMatmulAlgoConfigGetAttribute(&algo, a, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS
               ? std::to_string(v)
               : std::string("?");
  };
  return fmt::format("rank {} of {}: id {} tile {} stages {} splitk {} ({:.1f} us)", m.chosen, m.tried,
                     attr(CUBLASLT_ALGO_CONFIG_ID), attr(CUBLASLT_ALGO_CONFIG_TILE_ID),
                     attr(CUBLASLT_ALGO_CONFIG_STAGES_ID), attr(CUBLASLT_ALGO_CONFIG_SPLITK_NUM), m.chosen_us);
}

}  // namespace fusedsample::bench
