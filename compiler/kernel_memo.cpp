// kernel_memo.cpp: compiled kernels memoized per spec for the life of the
// process. Concurrent requests for one spec compile it once; a failed
// compile is not memoized (the next request retries and reports again).
// A memo miss consults the on-disk module cache (disk_cache.cpp) first.
// Specs with one binary_spec (they differ only in launch settings) share the
// compilation; each caller gets the kernel labelled with its own spec.
#include <future>
#include <map>
#include <mutex>

#include "fusedsample/compiler.hpp"
#include "fusedsample/disk_cache.hpp"

namespace fusedsample {

std::shared_ptr<const CompiledKernel> compile_kernel(const KernelSpec& spec) {
  using Result = std::shared_ptr<const CompiledKernel>;
  spec.validate();  // the spec itself: binary_spec() below may drop what makes it invalid
  static std::mutex mu;
  static std::map<std::string, std::shared_future<Result>> memo;
  const std::string key = binary_spec(spec).to_string();
  std::promise<Result> promise;
  std::shared_future<Result> entry;
  bool owner = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = memo.find(key);
    if (it != memo.end()) {
      entry = it->second;
    } else {
      entry = promise.get_future().share();
      memo.emplace(key, entry);
      owner = true;
    }
  }
  if (owner) {
    try {
      // Memo miss: the on-disk cache (read from the environment now), else
      // NVRTC (and the result is stored on disk).
      const std::optional<DiskCache> disk = DiskCache::from_environment();
      promise.set_value(std::make_shared<const CompiledKernel>(
          load_or_compile(render_kernel(binary_spec(spec)), disk ? &*disk : nullptr)));
    } catch (...) {
      {  // out of the memo first, so that a request arriving from now on compiles again (until session 60 one
         // arriving between the two steps got this failure instead of the retry)
        std::lock_guard<std::mutex> lock(mu);
        memo.erase(key);
      }
      promise.set_exception(std::current_exception());
    }
  }
  Result k = entry.get();
  if (k->spec == spec) return k;
  auto labelled = std::make_shared<CompiledKernel>(*k);
  labelled->spec = spec;
  return labelled;
}

}  // namespace fusedsample
