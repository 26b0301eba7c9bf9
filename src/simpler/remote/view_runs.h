// The bytes of a strided view as runs of contiguous backing bytes: what
// crosses a host boundary for a view is exactly these bytes, never the
// bounding range between them.
//
// A run is (byte offset from byte 0 of the backing, length). for_each_run
// visits the view's elements in row-major order, merging each run of
// consecutive elements that are also consecutive in memory: a contiguous view
// is one run, a column block of a row-major matrix one run per row. The
// packed form of a view is its runs' bytes back to back in that order
// (view_payload_bytes of them); pack_view and unpack_view convert between it
// and the backing. A view whose elements overlap itself packs each element as
// often as it appears; unpacking writes the last copy.
//
// Every function requires a tensor that passed validate_tensor (its extent
// fits the backing); they allocate nothing and never throw.
#pragma once

#include <cstdint>

#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/data_type.h"

namespace simpler {

// Bytes of the view's elements (element count x element size), saturating.
[[nodiscard]] uint64_t view_payload_bytes(const Tensor& t) noexcept;

// Calls fn(offset, length) for each run, in element order.
template <class Fn>
void for_each_run(const Tensor& t, Fn&& fn) {
    const uint64_t elem = data_type_element_size(t.dtype);
    const uint32_t n = t.ndims;
    // The innermost dimensions that are contiguous in memory form one run.
    uint64_t run = 1;  // elements
    uint32_t outer = n;  // dimensions [0, outer) are iterated; [outer, n) are inside the run
    while (outer > 0 && (t.strides[outer - 1] == run || t.shapes[outer - 1] == 1)) {
        run *= t.shapes[outer - 1];
        --outer;
    }
    uint32_t index[MAX_TENSOR_DIMS] = {};
    for (;;) {
        uint64_t offset = 0;
        for (uint32_t d = 0; d < outer; ++d) offset += uint64_t{index[d]} * t.strides[d];
        fn(t.byte_offset + offset * elem, run * elem);
        uint32_t d = outer;
        while (d > 0) {
            --d;
            if (++index[d] < t.shapes[d]) break;
            index[d] = 0;
            if (d == 0) return;
        }
        if (outer == 0) return;
    }
}

// Copies the view's runs from the backing at `base` into `out` (view_payload_bytes of it).
void pack_view(const uint8_t* base, const Tensor& t, uint8_t* out) noexcept;
// Copies `in` (view_payload_bytes of it) into the view's runs of the backing at `base`.
void unpack_view(uint8_t* base, const Tensor& t, const uint8_t* in) noexcept;
// Whether the view is one run (its payload can move straight from the backing).
[[nodiscard]] bool view_is_one_run(const Tensor& t) noexcept;

}  // namespace simpler
