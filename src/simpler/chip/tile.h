// make_tile: a sub-view (tile) of a working tensor — same backing, same
// strides, a new origin and smaller shapes. Every view of one backing keeps the
// backing's addr, so a tile is ordered with its parent (live_views.h).
//
// Header-only and noexcept so kernels and orchestrations built outside the
// project can use it. Checks every offset/shape against the parent's shapes
// (overflow-free); a refusal returns false and leaves `out` untouched.
#pragma once

#include <cstdint>

#include "simpler/chip/tensor.h"

namespace simpler::chip {

// Tile of `parent` starting at `offsets[i]` with `shapes[i]` elements per dim
// (parent.ndims entries each). Requires shapes[i] > 0 and
// offsets[i] + shapes[i] <= parent.shapes[i]. The producer / version fields are
// reset: the runtime fills them at submit.
inline bool make_tile(const Tensor& parent, const uint32_t* offsets, const uint32_t* shapes, Tensor& out) noexcept {
    Tensor t = parent;
    uint64_t origin = parent.start_offset;
    for (uint32_t i = 0; i < parent.ndims && i < MAX_TENSOR_DIMS; ++i) {
        if (shapes[i] == 0 || offsets[i] > parent.shapes[i] || shapes[i] > parent.shapes[i] - offsets[i]) return false;
        origin += uint64_t{offsets[i]} * parent.strides[i];
        t.shapes[i] = shapes[i];
    }
    t.start_offset = origin;
    t.producer_task = NO_PRODUCER;
    t.overlap_version = 0;
    refresh_derived(t);
    out = t;
    return true;
}

// Rows [row_begin, row_end) of dim 0, every other dim whole.
inline bool make_row_tile(const Tensor& parent, uint32_t row_begin, uint32_t row_end, Tensor& out) noexcept {
    if (parent.ndims == 0 || row_end <= row_begin) return false;
    uint32_t offsets[MAX_TENSOR_DIMS] = {};
    uint32_t shapes[MAX_TENSOR_DIMS] = {};
    for (uint32_t i = 0; i < parent.ndims && i < MAX_TENSOR_DIMS; ++i) shapes[i] = parent.shapes[i];
    offsets[0] = row_begin;
    shapes[0] = row_end - row_begin;
    return make_tile(parent, offsets, shapes, out);
}

// The view with dims `a` and `b` swapped (shapes and strides): a transpose
// without moving bytes.
inline bool make_transposed(const Tensor& parent, uint32_t a, uint32_t b, Tensor& out) noexcept {
    if (a >= parent.ndims || b >= parent.ndims) return false;
    Tensor t = parent;
    t.shapes[a] = parent.shapes[b];
    t.shapes[b] = parent.shapes[a];
    t.strides[a] = parent.strides[b];
    t.strides[b] = parent.strides[a];
    refresh_derived(t);
    out = t;
    return true;
}

}  // namespace simpler::chip
