// kernel_memo.cpp: compiled kernels memoized per spec for the life of the
// process. Concurrent requests for one spec compile it once; a failed
// compile is not memoized (the next request retries and reports again).
#include <future>
#include <map>
#include <mutex>

#include "fusedsample/compiler.hpp"

namespace fusedsample {

std::shared_ptr<const CompiledKernel> compile_kernel(const KernelSpec& spec) {
  using Result = std::shared_ptr<const CompiledKernel>;
  static std::mutex mu;
  static std::map<std::string, std::shared_future<Result>> memo;
  const std::string key = spec.to_string();
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
      promise.set_value(std::make_shared<const CompiledKernel>(compile_uncached(render_kernel(spec))));
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard<std::mutex> lock(mu);
      memo.erase(key);
    }
  }
  return entry.get();
}

}  // namespace fusedsample
