// tuning_fixtures.hpp: GPU identities and measurements for the tuning
// database tests (tuning_db_test.cpp, tuning_twin_test.cpp, builtin_tables_test.cpp, ...).
#pragma once
#include <string>

#include "fusedsample/tuning_db.hpp"

namespace fusedsample::testing {

inline const DeviceIdentity kH200{"NVIDIA H200", 132, 9, 0};
inline const DeviceIdentity kH100{"NVIDIA H100 80GB HBM3", 132, 9, 0};
inline const DeviceIdentity kA100{"NVIDIA A100-SXM4-80GB", 108, 8, 0};

inline Measurement measurement(const std::string& spec, double median, double floor = 0,
                               TimingMethod method = TimingMethod::flushed) {
  return Measurement{spec, median, floor, "2026-11-22T00:00:00Z", method};
}

}  // namespace fusedsample::testing
