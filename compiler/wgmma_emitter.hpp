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
// the largest T_N / k (a multiple of 8) whose accumulators plus 32 registers
// fit the launch bound's registers per thread (65536 / threads). ptxas checks
// every instruction against that bound, not against what setmaxnreg grants a
// warpgroup: under w16x1's 128, m64n256 (154 registers) does not assemble
// ("Insufficient registers to compile instruction"), so wgmma_coop tv128
// tn256 issues two m64n128 per k16 step; every other shipped shape is T_N.
int wgmma_instruction_n(const KernelSpec& spec);

}  // namespace fusedsample
