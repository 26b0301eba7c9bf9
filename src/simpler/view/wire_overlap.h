// overlap() and make_view_box() for the wire simpler::Tensor: the bridge from
// the argument a task carries to the geometry-only view model (view_box.h,
// overlap.h). A Tensor's box is its byte offset, its backing's nbytes, dtype,
// shapes and strides; two Tensors over different identities are NONE.
//
// Owns nothing; trusts nothing (total over any field values, as overlap()).
#pragma once

#include "simpler/task_interface/buffer.h"
#include "simpler/view/overlap.h"
#include "simpler/view/view_box.h"

namespace simpler {

inline ViewBox make_view_box(const Tensor& t) noexcept {
    return make_view_box(t.byte_offset, t.buffer.nbytes, t.dtype, t.shapes, t.strides, t.ndims);
}

inline OverlapAnswer overlap(const Tensor& probe, const Tensor& entry, const OverlapOptions& options = {}) noexcept {
    if (!(probe.buffer.identity == entry.buffer.identity)) return {TensorOverlap::NONE, OverlapReason::NONE};
    return overlap(make_view_box(probe), make_view_box(entry), options);
}

}  // namespace simpler
