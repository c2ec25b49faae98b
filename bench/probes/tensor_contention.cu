// tensor_contention.cu: a session-55 probe, not part of the library or its build. What does other work on the
// same SM cost Hopper's tensor pipe while two warpgroups keep it busy with the cooperative tile's MMAs?
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -o tensor_contention \
//     bench/probes/tensor_contention.cu && ./tensor_contention [STAGES] [REPS]
// Sessions 20-54 found that every piece of the sampling costs about its own cycles wherever it runs on the SM: in
// the consumers' k-loop hook, on the producer's idle warps, or in a helper warp (BENCHMARKS.md, sessions 23, 50).
// This probe measures it directly, with no TMA, no sampling and no global memory in the loop:
//  - consumers: warpgroups 0 and 1 each issue, per stage, 4 k16 steps x MI 64-row blocks of
//    wgmma m64n128k16 (bf16, fp32 accumulators, A and B K-major in shared memory with the 128-byte swizzle, as
//    fs_wgmma_stage does for `tv256 tn128`: MI = 2), commit, then wait for the previous stage's group
//    (wgmma.wait_group 1), for STAGES stages over the same shared tiles;
//  - side work: warps 8..8+SW-1 (warpgroup 2, where the real kernel's producer runs) run one instruction class in
//    an unrolled loop (8 independent chains) until both consumers are done, and count their loops;
//  - hook: the consumer threads themselves run work per stage between the commit and the wait (where the register
//    epilogue's k-loop hook makes the group words): fma.rn.f32, or Philox4x32-10 calls.
// Philox is computed three ways, all checked against templates/philox.cuh on the host: the 64-bit product
// (what ptxas makes IMAD.WIDE.U32), mul.hi + mul.lo (IMAD.HI.U32 + IMAD), and 16-bit limbs (32-bit IMADs, shifts,
// adds). Reported: consumer cycles per stage (clock64 of warpgroup 0, mean over blocks), the tensor pipe's share
// against 2048 bf16 multiply-adds per cycle per SM, side ops per SM per cycle, and the tensor cycles one side op
// (one hook op, per warp) costs: (cycles - baseline) / ops.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench/probes/probe_util.cuh"
// The host reference: the library's own Philox, compiled as host code (fs_types.cuh picks host-only functions).
#pragma push_macro("__CUDACC__")
#undef __CUDACC__
#include "templates/philox.cuh"
#pragma pop_macro("__CUDACC__")

namespace {

enum Mode : int {
  kNone, kSleep, kFfma, kIaddImm, kImadLo, kImadHi, kImadWide, kMadReg, kLop3, kShf, kDfma, kHfma2, kI2f, kShfl,
  kPhiloxWide, kPhiloxHiLo, kPhiloxLimbs, kModes
};
const char* const kNames[kModes] = {
    "none", "nanosleep", "fma.rn.f32", "add.u32 imm", "mul.lo.u32 imm", "mul.hi.u32 imm", "mul.wide.u32 imm",
    "mad.lo.u32 regs", "lop3 regs", "shf.l.wrap", "fma.rn.f64", "fma.rn.f16x2", "cvt.rn.f32.u32", "shfl.bfly",
    "Philox call, 64-bit product", "Philox call, mul.hi + mul.lo", "Philox call, 16-bit limbs"};
__host__ __device__ constexpr bool is_philox(int m) { return m >= kPhiloxWide; }
// Ops per side loop: 32 instructions (4 x 8 chains), or 2 Philox calls (two independent counters).
__host__ __device__ constexpr int ops_per_loop(int m) { return is_philox(m) ? 2 : 32; }

constexpr int kThreads = 384;          // consumer warpgroups 0-1, side warpgroup 2
constexpr int kWBytes = 2 * 64 * 128;  // per consumer: MI <= 2 blocks of 64 rows x 128 bytes
constexpr int kHBytes = 128 * 128;     // 128 rows (batch columns) x 128 bytes
constexpr int kSmem = 1024 + 2 * kWBytes + kHBytes + 64;

struct Args {
  int mi, consumers, side_mode, side_warps, hook_mode, hook;  // hook: ops per 8 stages per consumer thread
  long long iters;
  unsigned long long* cycles;      // [blocks]
  unsigned long long* side_loops;  // [1]
  unsigned* sink;
};

__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// K-major, 128-byte swizzled rows, 8-row groups 1024 bytes apart (templates/wgmma_ops.cuh, fs_wgmma_desc<128>).
__device__ __forceinline__ uint64_t desc128(unsigned addr) {
  uint64_t d = (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)1 << 16;
  d |= (uint64_t)(1024 >> 4) << 32;
  d |= (uint64_t)1 << 62;
  return d;
}

__device__ __forceinline__ void wgmma_n128(float (&a)[64], uint64_t da, uint64_t db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      :
        "+f"(a[0]), "+f"(a[1]), "+f"(a[2]), "+f"(a[3]), "+f"(a[4]), "+f"(a[5]), "+f"(a[6]), "+f"(a[7]),
        "+f"(a[8]), "+f"(a[9]), "+f"(a[10]), "+f"(a[11]), "+f"(a[12]), "+f"(a[13]), "+f"(a[14]), "+f"(a[15]),
        "+f"(a[16]), "+f"(a[17]), "+f"(a[18]), "+f"(a[19]), "+f"(a[20]), "+f"(a[21]), "+f"(a[22]), "+f"(a[23]),
        "+f"(a[24]), "+f"(a[25]), "+f"(a[26]), "+f"(a[27]), "+f"(a[28]), "+f"(a[29]), "+f"(a[30]), "+f"(a[31]),
        "+f"(a[32]), "+f"(a[33]), "+f"(a[34]), "+f"(a[35]), "+f"(a[36]), "+f"(a[37]), "+f"(a[38]), "+f"(a[39]),
        "+f"(a[40]), "+f"(a[41]), "+f"(a[42]), "+f"(a[43]), "+f"(a[44]), "+f"(a[45]), "+f"(a[46]), "+f"(a[47]),
        "+f"(a[48]), "+f"(a[49]), "+f"(a[50]), "+f"(a[51]), "+f"(a[52]), "+f"(a[53]), "+f"(a[54]), "+f"(a[55]),
        "+f"(a[56]), "+f"(a[57]), "+f"(a[58]), "+f"(a[59]), "+f"(a[60]), "+f"(a[61]), "+f"(a[62]), "+f"(a[63])
      : "l"(da), "l"(db), "r"(1));
}

// a * b as (hi, lo) three ways; a is one of Philox's constants.
template <int V>
__device__ __forceinline__ unsigned mulhilo(unsigned a, unsigned b, unsigned* hi) {
  if constexpr (V == 0) {
    const unsigned long long p = (unsigned long long)a * b;
    *hi = (unsigned)(p >> 32);
    return (unsigned)p;
  } else if constexpr (V == 1) {
    *hi = __umulhi(a, b);
    return a * b;
  } else {
    const unsigned al = a & 0xFFFFu, ah = a >> 16, bl = b & 0xFFFFu, bh = b >> 16;
    const unsigned ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    const unsigned mid = (ll >> 16) + (lh & 0xFFFFu) + (hl & 0xFFFFu);
    *hi = hh + (lh >> 16) + (hl >> 16) + (mid >> 16);
    return a * b;
  }
}

template <int V>
__device__ __forceinline__ void philox10(unsigned (&c)[4], unsigned k0, unsigned k1) {
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    unsigned hi0, hi1;
    const unsigned lo0 = mulhilo<V>(0xD2511F53u, c[0], &hi0);
    const unsigned lo1 = mulhilo<V>(0xCD9E8D57u, c[2], &hi1);
    const unsigned n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

// Eight ops of one class over 8 chains (f, u), or one Philox call on (u[4s..4s+3]).
template <int MODE>
__device__ __forceinline__ void ops(float (&f)[8], unsigned (&u)[8], double (&d)[2], int s) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if constexpr (MODE == kSleep) {
      if (i == 0) asm volatile("nanosleep.u32 100;");
    } else if constexpr (MODE == kFfma) {
      asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(f[i]) : "f"(0.999f), "f"(f[(i + 1) & 7]));
    } else if constexpr (MODE == kIaddImm) {
      asm volatile("add.u32 %0, %0, 1;" : "+r"(u[i]));
    } else if constexpr (MODE == kImadLo) {
      asm volatile("mul.lo.u32 %0, %0, 0xD2511F53;" : "+r"(u[i]));
    } else if constexpr (MODE == kImadHi) {
      asm volatile("mul.hi.u32 %0, %0, 0xD2511F53;" : "+r"(u[i]));
    } else if constexpr (MODE == kImadWide) {
      asm volatile("{\n\t.reg .u64 t;\n\tmul.wide.u32 t, %0, 0xD2511F53;\n\tmov.b64 {%0, %1}, t;\n\t}"
                   : "+r"(u[i]), "+r"(u[(i + 4) & 7]));
    } else if constexpr (MODE == kMadReg) {
      asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(u[i]) : "r"(u[(i + 1) & 7]), "r"(u[(i + 2) & 7]));
    } else if constexpr (MODE == kLop3) {
      asm volatile("lop3.b32 %0, %0, %1, %2, 0x96;" : "+r"(u[i]) : "r"(u[(i + 1) & 7]), "r"(u[(i + 2) & 7]));
    } else if constexpr (MODE == kShf) {
      asm volatile("shf.l.wrap.b32 %0, %0, %1, 7;" : "+r"(u[i]) : "r"(u[(i + 1) & 7]));
    } else if constexpr (MODE == kDfma) {
      if (i < 2) asm volatile("fma.rn.f64 %0, %0, 0d3FEFFFFFFFFFFFFF, 0d3F50624DD2F1A9FC;" : "+d"(d[i]));
    } else if constexpr (MODE == kHfma2) {
      asm volatile("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(u[i]) : "r"(0x3BFF3BFFu), "r"(u[(i + 1) & 7]));
    } else if constexpr (MODE == kI2f) {
      asm volatile("cvt.rn.f32.u32 %0, %1;" : "=f"(f[i]) : "r"(u[i]));
      u[i] += __float_as_uint(f[i]);
    } else if constexpr (MODE == kShfl) {
      asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 31, -1;" : "+r"(u[i]));
    }
  }
  if constexpr (is_philox(MODE)) {
    unsigned c[4] = {u[4 * s], u[4 * s + 1], u[4 * s + 2], u[4 * s + 3]};
    philox10<MODE - kPhiloxWide>(c, u[(4 * s + 4) & 7], 0x1234567u);
#pragma unroll
    for (int i = 0; i < 4; ++i) u[4 * s + i] = c[i];
  }
}

template <int MODE>
__device__ __forceinline__ void hook_ops(float (&f)[8], unsigned (&u)[8], double (&d)[2], int n) {
  if constexpr (is_philox(MODE)) {
    for (int j = 0; j < n; ++j) ops<MODE>(f, u, d, j & 1);
  } else {
    for (int j = 0; j < n; j += 8) ops<MODE>(f, u, d, 0);
  }
}

template <int MI>
__device__ void consume(const Args& p, unsigned w_addr, unsigned h_addr, volatile int* done) {
  float acc[MI][64];
#pragma unroll
  for (int m = 0; m < MI; ++m)
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[m][i] = 0.0f;
  float f[8];
  unsigned u[8];
  double d[2] = {1.0, 2.0};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    f[i] = 1.0f + threadIdx.x * 1e-3f + i;
    u[i] = 0x9E3779B9u * (threadIdx.x + 8 * i + 1);
  }
  const uint64_t dw = desc128(w_addr), dh = desc128(h_addr);
  const int iters = (int)p.iters;
  int owed = 0;  // hook ops owed, in eighths (32-bit arithmetic only: a 64-bit multiply here is an IMAD.WIDE)
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int m = 0; m < MI; ++m) wgmma_n128(acc[m], dw + ((m * 64 * 128 + kk * 32) >> 4), dh + ((kk * 32) >> 4));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    owed += p.hook;
    const int n = owed >> 3;
    owed &= 7;
    switch (p.hook_mode) {
      case kFfma: hook_ops<kFfma>(f, u, d, n); break;
      case kImadWide: hook_ops<kImadWide>(f, u, d, n); break;
      case kPhiloxWide: hook_ops<kPhiloxWide>(f, u, d, n); break;
      case kPhiloxHiLo: hook_ops<kPhiloxHiLo>(f, u, d, n); break;
      case kPhiloxLimbs: hook_ops<kPhiloxLimbs>(f, u, d, n); break;
      default: break;
    }
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int m = 0; m < MI; ++m)
#pragma unroll
    for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(acc[m][i])::"memory");  // no read moves above the wait
  const long long t1 = clock64();
  unsigned s = 0;
#pragma unroll
  for (int m = 0; m < MI; ++m)
#pragma unroll
    for (int i = 0; i < 64; ++i) s += __float_as_uint(acc[m][i]);
#pragma unroll
  for (int i = 0; i < 8; ++i) s += __float_as_uint(f[i]) + u[i];
  if (s == 0x12345678u) p.sink[threadIdx.x] = s;  // keeps the accumulators and the hook's results live
  if (threadIdx.x == 0) p.cycles[blockIdx.x] = (unsigned long long)(t1 - t0);
  __syncwarp();
  if ((threadIdx.x & 127) == 0) atomicAdd((int*)done, 1);
}

template <int MODE>
__device__ void side_loop(const Args& p, volatile int* done) {
  const int lane = threadIdx.x & 31;
  float f[8];
  unsigned u[8];
  double d[2] = {1.0 + lane, 2.0};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    f[i] = 1.5f + lane + i;
    u[i] = 0x9E3779B9u * (lane + 8 * i + 1);
  }
  unsigned long long loops = 0;
  while (*done < p.consumers) {
    if constexpr (is_philox(MODE)) {
      ops<MODE>(f, u, d, 0);
      ops<MODE>(f, u, d, 1);
    } else {
#pragma unroll
      for (int r = 0; r < 4; ++r) ops<MODE>(f, u, d, 0);
    }
    ++loops;
  }
  unsigned s = (unsigned)d[0] + (unsigned)d[1];
#pragma unroll
  for (int i = 0; i < 8; ++i) s += __float_as_uint(f[i]) + u[i];
  if (s == 0x12345678u) p.sink[threadIdx.x] = s;
  if (lane == 0) atomicAdd(p.side_loops, loops);
}

template <int... M>
__device__ void side_dispatch(const Args& p, volatile int* done, std::integer_sequence<int, M...>) {
  ((p.side_mode == M ? side_loop<M>(p, done) : void()), ...);
}

__global__ void __launch_bounds__(kThreads, 1) contention_kernel(Args p) {
  extern __shared__ unsigned char raw[];
  const unsigned a = smem_u32(raw);
  unsigned char* base = raw + (((a + 1023u) & ~1023u) - a);
  unsigned char* hb = base + 2 * kWBytes;
  volatile int* done = reinterpret_cast<volatile int*>(hb + kHBytes);
  // Operands: bf16 values of magnitude ~1 that vary by position.
  for (int i = threadIdx.x; i < (2 * kWBytes + kHBytes) / 4; i += kThreads) {
    const unsigned x = (unsigned)i * 2654435761u;
    const unsigned lo = 0x3F80u | ((x >> 8) & 0x7Fu), hi = 0xBF80u | ((x >> 20) & 0x7Fu);
    reinterpret_cast<unsigned*>(base)[i] = lo | (hi << 16);
  }
  if (threadIdx.x == 0) *done = 0;
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int wg = threadIdx.x / 128, warp = threadIdx.x / 32;
  if (wg < p.consumers) {
    const unsigned wa = smem_u32(base + wg * kWBytes), ha = smem_u32(hb);
    if (p.mi == 2)
      consume<2>(p, wa, ha, done);
    else
      consume<1>(p, wa, ha, done);
  } else if (wg == 2 && warp - 8 < p.side_warps) {
    side_dispatch(p, done, std::make_integer_sequence<int, kModes>{});
  }
}

// The three Philox forms against templates/philox.cuh (host), for 4096 counters and keys.
__global__ void philox_check_kernel(unsigned* out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned c0[4] = {t * 2654435761u, ~t, t ^ 0x5bd1e995u, t * 7u}, c1[4], c2[4];
  for (int i = 0; i < 4; ++i) c1[i] = c2[i] = c0[i];
  const unsigned k0 = t * 0x85ebca6bu, k1 = 0xc2b2ae35u ^ t;
  philox10<0>(c0, k0, k1);
  philox10<1>(c1, k0, k1);
  philox10<2>(c2, k0, k1);
  for (int i = 0; i < 4; ++i) {
    out[t * 12 + i] = c0[i];
    out[t * 12 + 4 + i] = c1[i];
    out[t * 12 + 8 + i] = c2[i];
  }
}

bool philox_forms_agree() {
  constexpr int n = 4096;
  unsigned* d = nullptr;
  CHECK(cudaMalloc(&d, n * 12 * sizeof(unsigned)));
  philox_check_kernel<<<n / 128, 128>>>(d);
  CHECK(cudaGetLastError());
  std::vector<unsigned> h(n * 12);
  CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));
  for (unsigned t = 0; t < n; ++t) {
    fs_philox_ctr c{{t * 2654435761u, ~t, t ^ 0x5bd1e995u, t * 7u}};
    c = fs_philox4x32_10(c, t * 0x85ebca6bu, 0xc2b2ae35u ^ t);
    for (int f = 0; f < 3; ++f)
      for (int i = 0; i < 4; ++i)
        if (h[t * 12 + 4 * f + i] != c.v[i]) return false;
  }
  return true;
}

struct Result {
  double cycles_per_stage, side_per_cycle, us;
};

Result run(int sms, const Args& a0, int reps) {
  unsigned long long *cycles, *loops;
  unsigned* sink;
  CHECK(cudaMalloc(&cycles, sms * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&loops, sizeof(unsigned long long)));
  CHECK(cudaMalloc(&sink, kThreads * sizeof(unsigned)));
  Args p = a0;
  p.cycles = cycles;
  p.side_loops = loops;
  p.sink = sink;
  EventTimer timer;
  std::vector<float> cps, side, us;
  for (int r = 0; r < reps + 1; ++r) {
    CHECK(cudaMemset(loops, 0, sizeof(unsigned long long)));
    const float t = timer.us([&] { contention_kernel<<<sms, kThreads, kSmem>>>(p); });
    std::vector<unsigned long long> c(sms);
    unsigned long long l = 0;
    CHECK(cudaMemcpy(c.data(), cycles, sms * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&l, loops, sizeof(l), cudaMemcpyDeviceToHost));
    double mean = 0;
    for (auto x : c) mean += (double)x / sms;
    if (r == 0) continue;  // warm-up
    cps.push_back((float)(mean / p.iters));
    side.push_back((float)((double)l * ops_per_loop(p.side_mode) / sms / mean));
    us.push_back(t);
  }
  CHECK(cudaFree(cycles));
  CHECK(cudaFree(loops));
  CHECK(cudaFree(sink));
  return {median(cps), median(side), median(us)};
}

}  // namespace

int main(int argc, char** argv) {
  const long long iters = argc > 1 ? std::atoll(argv[1]) : 4096;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  int dev = 0, sms = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, dev));
  CHECK(cudaFuncSetAttribute(contention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const bool agree = philox_forms_agree();
  std::printf("# %s, %d SMs, %lld stages per consumer, median of %d launches; Philox forms equal to "
              "templates/philox.cuh on 4096 inputs: %s\n",
              prop.name, sms, iters, reps, agree ? "yes" : "NO");
  if (!agree) return 1;
  std::printf("| MI | consumers | side work | side warps | hook | hook ops / 8 stages / thread | cycles/stage | "
              "tensor pipe | side ops/SM/cycle | tensor cycles per op |\n");
  std::printf("|---:|---:|---|---:|---|---:|---:|---:|---:|---:|\n");
  struct Case {
    int mi, consumers, side, warps, hook_mode, hook;
  };
  std::vector<Case> cases;
  for (int mi : {1, 2})
    for (int c : {1, 2}) cases.push_back({mi, c, kNone, 0, kNone, 0});
  for (int m = kSleep; m < kModes; ++m) cases.push_back({2, 2, m, 4, kNone, 0});
  for (int m : {kImadLo, kImadHi, kImadWide, kPhiloxWide, kPhiloxHiLo, kPhiloxLimbs}) cases.push_back({2, 2, m, 1, kNone, 0});
  for (int h : {64, 256, 1024}) cases.push_back({2, 2, kNone, 0, kFfma, h});
  for (int h : {8, 32, 128}) cases.push_back({2, 2, kNone, 0, kImadWide, h});
  for (int m : {kPhiloxWide, kPhiloxHiLo, kPhiloxLimbs})
    for (int h : {1, 4, 16}) cases.push_back({2, 2, kNone, 0, m, h});
  double base = 0;
  for (const Case& k : cases) {
    Args a{k.mi, k.consumers, k.side, k.warps, k.hook_mode, k.hook, iters, nullptr, nullptr, nullptr};
    const Result r = run(sms, a, reps);
    const double ideal = k.consumers * k.mi * 4 * 64.0;  // m64n128k16: 131072 multiply-adds, 64 cycles at 2048/cycle
    const bool baseline = k.mi == 2 && k.consumers == 2 && k.side == kNone && k.hook == 0;
    if (baseline) base = r.cycles_per_stage;
    const double extra = r.cycles_per_stage - base;
    char cost[64] = "";
    if (!baseline && base > 0 && k.side > kSleep)
      std::snprintf(cost, sizeof cost, "%.3f", extra / (r.side_per_cycle * r.cycles_per_stage));
    if (!baseline && base > 0 && k.hook > 0)  // hook ops per stage per warp, 8 consumer warps
      std::snprintf(cost, sizeof cost, "%.3f", extra / (8.0 * k.hook / 8.0));
    std::printf("| %d | %d | %s | %d | %s | %d | %.1f | %.1f %% | %.3f | %s |\n", k.mi, k.consumers, kNames[k.side],
                k.warps, k.hook ? kNames[k.hook_mode] : "-", k.hook, r.cycles_per_stage,
                100.0 * ideal / r.cycles_per_stage, r.side_per_cycle, cost);
    std::fflush(stdout);
  }
  return 0;
}
