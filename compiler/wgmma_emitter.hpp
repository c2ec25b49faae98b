// wgmma_emitter.hpp: generates the inline-PTX wrapper of one wgmma
// instruction shape, which templates/fused_wgmma.cuh calls as fs_wgmma_k16.
#pragma once
#include <string>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample {

// CUDA C++ source of
//   __device__ void fs_wgmma_k16(float (&acc)[n / 2], fs_u64 desc_a, fs_u64 desc_b)
// issuing wgmma.mma_async m64{n}k16 with fp32 accumulation for bf16 or fp16,
// both operands K-major in shared memory. Throws InvalidArgument for an n that
// is not a multiple of 8 in [8, 256] and Unsupported for fp32.
std::string emit_wgmma_k16(DType dtype, int n);

// The N of the one wgmma instruction shape a spec's kernel issues (FS_WGMMA_N):
// T_N, except for wgmma_coop with T_N > 128, which issues T_N / 128 m64n128
// instructions per k16 step. ptxas checks every instruction against the
// kernel's launch-bound register budget (128 for w16x1), not against what
// setmaxnreg grants the consumers: m64n256 needs 154 ("Insufficient registers
// to compile instruction"), m64n128 fits.
int wgmma_instruction_n(const KernelSpec& spec);

}  // namespace fusedsample
