// candidate_screen.hpp: step 2 of a tune (tuner.cpp). Every distinct
// candidate of the buckets is compiled in parallel (parallel_compile.hpp,
// into the on-disk module cache) and screened: one that does not compile,
// spills registers or has its wgmma instructions serialized by ptxas is not
// timed. A bucket's default config is never screened out for the last two:
// it is the baseline and the exactness reference, and what runs without a
// tune anyway.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/tuner.hpp"

namespace fusedsample::autotune {

struct ScreenedCandidates {
  std::vector<KernelSpec> distinct;             // every distinct spec, in the buckets' order
  std::map<std::string, std::string> rejected;  // spec string -> why it is not timed (one line)
  int compiled = 0;                             // compiled without error (rejected ones included)
  int compile_failures = 0;                     // did not compile
  int spilling = 0;                             // compiled, but spills or has serialized wgmma
  double seconds = 0;                           // wall time of the compilation
};

// `emit` gets progress lines and each failure; `elapsed` the tune's seconds
// so far, which the progress lines show.
ScreenedCandidates compile_and_screen(const std::vector<BucketResult>& buckets,
                                      const std::function<void(const std::string&)>& emit,
                                      const std::function<double()>& elapsed);

// The first line of a message, cut to 240 characters: what a progress line
// and a candidate's detail show of an error.
std::string first_line(const std::string& message);

}  // namespace fusedsample::autotune
