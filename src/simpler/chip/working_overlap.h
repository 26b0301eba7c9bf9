// overlap() for two of the chip runtime's working tensors: the question the
// runtime's ordering asks (live_views.h), answered by the exact model of view/overlap.h on
// the tensors' geometry (byte offset = start_offset elements times the element
// size, the backing's size in bytes, dtype, shapes, strides). Two tensors over
// different backings (different addr) are NONE. Only NONE drops an edge.
//
// Owns nothing. Total over any field values (a working tensor's geometry was
// validated at adoption; nothing here relies on it), noexcept, no allocation.
#pragma once

#include "simpler/chip/tensor.h"
#include "simpler/view/overlap.h"

namespace simpler::chip {

// The box of a working tensor's view (view/view_box.h), for comparing it
// repeatedly or filing it in a ViewIndex.
[[nodiscard]] ViewBox view_box_of(const Tensor& t) noexcept;

[[nodiscard]] OverlapAnswer overlap(const Tensor& probe, const Tensor& entry) noexcept;

}  // namespace simpler::chip
