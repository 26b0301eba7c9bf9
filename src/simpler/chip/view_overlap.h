// views_may_overlap: the chip overlap map's test for two working tensors over
// one backing (same addr). Answers false only on proof of disjointness:
//   1. bounding ranges [start, start + extent) in bytes do not intersect; or
//   2. both views share one row-major lattice (same dtype, rank and strides,
//      innermost stride 1, each stride a multiple of the one inside it and at
//      least the inner dim's span, origins decomposing without wrapping a row),
//      and their per-dimension index ranges are disjoint on some axis.
// Anything else (transposed pairs, different ranks or dtypes) answers true: an
// extra edge is possible, a dropped real dependency is not.
//
// Trusts the geometry (the runtime validated each view at submit); arithmetic
// on it stays within the backing's size, so nothing overflows.
#pragma once

#include "simpler/chip/tensor.h"

namespace simpler::chip {

[[nodiscard]] bool views_may_overlap(const Tensor& a, const Tensor& b) noexcept;

}  // namespace simpler::chip
