// call_order.hpp: the order in which the interleaved benchmark and the
// tuner's finalist round call their pipelines (lines 0 .. n-1), back to back
// on one stream (kernel_timer.hpp: time_in_order_us).
//
// Under the GPU's power limit the SM clock follows the recent work, so the
// order decides what each line is measured after. Measured (H200, session
// 12, --fs_by_predecessor): a line's median moves by at most ~1.5 % with the
// line just before it, while the mix of the last second moves every line by
// up to 20 %; so the lines of one call share one mix, and the balanced order
// also rules out the immediate predecessor by design.
#pragma once
#include <cstddef>
#include <vector>

namespace fusedsample::autotune {

// Rounds of 0, 1, .., n-1 rotated by one per round (the benchmark's order in
// sessions 9-11). The rounds run back to back, so the stream is the cycle
// 0 1 .. n-1 repeated with one line shifted per round: line i follows line
// i-1 in all but one round of n (line 3, the fused sampler, followed the
// unfused pipeline; line 1, cuBLAS, the bandwidth floor).
std::vector<std::size_t> rotating_call_order(std::size_t n, int rounds);

// Every ordered pair (a, b), a == b included, exactly once per n*n calls: the
// de Bruijn sequence B(n, 2), repeated (its wrap-around pair is the joint
// between repetitions) until every line has at least `rounds` calls. So each
// line runs after every line, itself included, equally often.
std::vector<std::size_t> balanced_call_order(std::size_t n, int rounds);

}  // namespace fusedsample::autotune
