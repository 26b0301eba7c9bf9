// ViewBox: everything overlap() needs to know about one view, computed once
// per view so that comparing two views costs no division and no sort.
//
// It holds what the overlap stages read (docs/explanation/dependencies.md):
//   stage 1: the byte range [begin, end) (end saturates), and whether the view
//            is dense in its natural axis order (its bytes are its whole range);
//   stage 2: the view's place in its row-major reference shape, per-axis origin
//            coordinates in elements, or the reason it does not fit that model;
//   the different-stride decision: shapes and strides, from which
//            nested_view_of() builds the canonical byte set on demand.
//
// Does not own the tensor or its backing, and does not say which backing it is
// over: comparing two boxes is only meaningful for views of one backing, which
// the caller establishes (the dependency tracker keys on the identity). Takes
// the geometry alone (byte offset, backing size, dtype, shapes, strides), so a
// runtime with its own tensor type (the chip's working tensor) builds boxes
// without a wire descriptor; wire_overlap.h builds one from a wire Tensor.
// Trust: built from any field values; nothing here assumes validate_tensor ran.
// An unknown dtype or an out-of-range ndims yields a box that reaches to the end
// of the address space and fits no exact model, so every answer about it is a
// conservative PARTIAL.
#pragma once

#include <cstdint>

#include "simpler/task_interface/data_type.h"
#include "simpler/task_interface/view_geometry.h"
#include "simpler/view/nested_view.h"
#include "simpler/view/tensor_overlap.h"

namespace simpler {

struct ViewBox {
    uint64_t begin = 0;  // first byte reached
    uint64_t end = 0;    // one past the last byte reached (saturating)
    uint32_t elem = 0;   // element size in bytes
    uint8_t dtype = 0;
    uint8_t ndims = 0;
    bool dense = false;  // strides chain innermost-out with no gap (shape-1 axes ignored)
    // NONE when the view fits the row-major model on its own: innermost stride 1,
    // each stride a multiple of the next, origin on the element lattice, and
    // origin + shape within the reference shape on every axis. Otherwise
    // NOT_ROW_MAJOR, OFF_LATTICE or WRAPS_ROW.
    OverlapReason layout_reason = OverlapReason::NOT_ROW_MAJOR;
    uint32_t shapes[MAX_TENSOR_DIMS] = {};
    uint32_t strides[MAX_TENSOR_DIMS] = {};  // elements
    uint64_t origin[MAX_TENSOR_DIMS] = {};   // per-axis origin, elements (valid when layout_reason is NONE)
    bool valid = false;                      // dtype known, 1 <= ndims <= 5, shapes and strides > 0
};

// The box of the view at `byte_offset` bytes into a backing of `backing_bytes`
// bytes, with ndims shapes and strides (elements) of raw dtype `dtype`. Reads
// shapes[i] and strides[i] only for i < ndims <= MAX_TENSOR_DIMS.
ViewBox make_view_box(uint64_t byte_offset, uint64_t backing_bytes, uint8_t dtype, const uint32_t* shapes,
                      const uint32_t* strides, uint32_t ndims) noexcept;

// The canonical byte set of a valid box (not nested when the box is invalid).
NestedView nested_view_of(const ViewBox& b) noexcept;

}  // namespace simpler
