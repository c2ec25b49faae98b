// fusedsample.hpp: umbrella header.
#pragma once
#include "fusedsample/compiler.hpp"
#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/numeric.hpp"
#include "fusedsample/reference.hpp"
#include "fusedsample/sampler.hpp"
