// NestedView: the byte set of one strided view in a canonical form that
// interval questions can be asked of exactly, in O(2^ndims) steps at most.
//
// Canonical form: axes of extent 1 dropped, the rest sorted by byte stride
// (outermost first), and the innermost axes merged into one dense run of `run`
// bytes for as long as each stride is <= the run so far. The byte set is
//   { base + sum(k_i * stride_i) + r : 0 <= k_i < count_i, 0 <= r < run }.
// The form is `nested` when every outer axis steps at least as far as the span
// of everything inside it (stride_i >= inner_span_i): then the blocks of each
// axis are disjoint and ordered, which is what makes the queries exact. A
// transposed or stepped slice of a row-major matrix is nested; a view whose
// axes interleave (shape 4x4, element strides 3 and 2) is not.
//
// Does not own: the tensor it was built from. Trust: built from any Tensor
// field values (saturating arithmetic); a view whose extent saturates is marked
// not nested, and callers must then not ask it questions.
#pragma once

#include <cstdint>

#include "simpler/task_interface/view_geometry.h"

namespace simpler {

struct NestedView {
    uint64_t base = 0;                            // byte offset of the first byte
    uint64_t run = 0;                             // bytes of the innermost dense run (>= 1)
    uint64_t span = 0;                            // bytes from the first to one past the last byte
    uint32_t naxes = 0;                           // outer axes left after merging (0: dense)
    bool nested = false;                          // every outer axis steps past its inner span
    uint64_t count[MAX_TENSOR_DIMS] = {};         // outermost first
    uint64_t stride[MAX_TENSOR_DIMS] = {};        // bytes
    uint64_t inner_span[MAX_TENSOR_DIMS] = {};    // bytes spanned by the axes inside axis i, plus run

    // Number of dense runs (product of the outer counts, saturating).
    [[nodiscard]] uint64_t run_count() const noexcept;
    // True when the byte set is the whole interval [base, base + span).
    [[nodiscard]] bool dense() const noexcept { return naxes == 0; }
};

// Canonical form of a view of `ndims` axes with u32 shapes and element strides.
// A default-constructed NestedView (span 0) stands for "no valid view".
NestedView make_nested_view(uint64_t byte_offset, const uint32_t* shapes, const uint32_t* strides, uint32_t ndims,
                            uint32_t elem_size) noexcept;

// Requires v.nested. True when the absolute byte interval [begin, end) shares a
// byte with v. `steps` is incremented once per block visited.
bool nested_intersects(const NestedView& v, uint64_t begin, uint64_t end, uint64_t& steps) noexcept;

// Requires v.nested. True when every byte of the non-empty absolute interval
// [begin, end) belongs to v.
bool nested_contains(const NestedView& v, uint64_t begin, uint64_t end, uint64_t& steps) noexcept;

}  // namespace simpler
