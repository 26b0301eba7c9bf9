#include "simpler/chip/working_overlap.h"

namespace simpler::chip {
ViewBox view_box_of(const Tensor& t) noexcept {
    return make_view_box(saturating_mul(t.start_offset, t.element_size()), t.size, t.dtype, t.shapes, t.strides,
                         t.ndims);
}

OverlapAnswer overlap(const Tensor& probe, const Tensor& entry) noexcept {
    if (probe.addr != entry.addr) return {TensorOverlap::NONE, OverlapReason::NONE};
    return simpler::overlap(view_box_of(probe), view_box_of(entry));
}

}  // namespace simpler::chip
