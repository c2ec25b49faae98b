// tune_report.cpp: the tuner's result types (tuner.hpp): status names and
// the per-bucket summaries the CLI's table is made of.
#include <algorithm>

#include "fusedsample/tuner.hpp"

namespace fusedsample {

std::string_view to_string(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::timed: return "timed";
    case CandidateStatus::mismatch: return "mismatch";
    case CandidateStatus::failed: return "failed";
    case CandidateStatus::over_budget: return "over_budget";
  }
  return "?";
}

const CandidateResult* BucketResult::best() const {
  // The table's order (ranks_before, tuning_db.cpp), equal times to the
  // smaller spec text: until session 40 the report took the first in
  // candidate order and the table the first in record order, which could differ.
  const auto timing = [](const CandidateResult& c, double us) {
    Measurement m;
    m.spec = c.spec.to_string();
    m.median_us = us;
    return m;
  };
  const auto before = [&](double a_us, const CandidateResult& a, double b_us, const CandidateResult& b) {
    return ranks_before(timing(a, a_us), timing(b, b_us));
  };
  const CandidateResult *best = nullptr, *final = nullptr;
  for (const auto& c : candidates) {
    if (c.status != CandidateStatus::timed) continue;
    if (!best || before(c.median_us, c, best->median_us, *best)) best = &c;
    if (c.final_us > 0 && (!final || before(c.final_us, c, final->final_us, *final))) final = &c;
  }
  return final ? final : best;
}

const CandidateResult* BucketResult::baseline() const {
  for (const auto& c : candidates)
    if (c.spec == default_spec) return c.status == CandidateStatus::timed ? &c : nullptr;
  return nullptr;
}

int BucketResult::count(CandidateStatus s) const {
  return int(std::count_if(candidates.begin(), candidates.end(), [&](const CandidateResult& c) { return c.status == s; }));
}

}  // namespace fusedsample
