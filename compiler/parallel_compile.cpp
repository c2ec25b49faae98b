// parallel_compile.cpp: see parallel_compile.hpp.
#include "compiler/parallel_compile.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "fusedsample/compiler.hpp"
#include "fusedsample/disk_cache.hpp"

namespace fusedsample {

std::vector<CompileOutcome> compile_all(const std::vector<KernelSpec>& specs, unsigned threads,
                                        const std::function<void(const CompileOutcome&, std::size_t)>& on_done) {
  std::vector<CompileOutcome> out(specs.size());
  if (specs.empty()) return out;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = unsigned(std::min<std::size_t>(threads, specs.size()));
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::size_t done = 0;
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < specs.size();) {
      CompileOutcome& o = out[i];
      o.spec = specs[i];
      const auto t0 = std::chrono::steady_clock::now();
      try {
        const auto k = compile_kernel(specs[i]);
        // A kernel this process already had comes from its memo, which does
        // not look at the disk: store it where the environment's cache lacks
        // it (compiled with the cache off or in another directory, or the
        // file since removed), so the promise of the header holds.
        if (const auto disk = DiskCache::from_environment()) {
          std::error_code ec;
          if (!std::filesystem::exists(disk->module_path(k->cache_key), ec)) disk->store(*k);
        }
        o.ok = true;
        if (const auto r = kernel_resources(*k, "fs_fused_kernel")) {
          o.spill_bytes = r->spill_store_bytes + r->spill_load_bytes;
          o.wgmma_serialized = r->wgmma_serialized;
        }
      } catch (const std::exception& e) {
        o.error = e.what();
      } catch (...) {
        o.error = "unknown error";
      }
      o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (on_done) {
        try {
          on_done(o, done);
        } catch (...) {
          // A progress callback must not take a worker thread down.
        }
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace fusedsample
