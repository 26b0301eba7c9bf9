// simpler::chip::Tensor: the chip runtime's working tensor — a ChipTensor's
// geometry plus what this runtime decided about it (producing task, overlap
// version, dependency treatment) and the derived caches its hot path reads per
// task (is_contiguous, extent_elem_cache). 128 B, 64-aligned: two cache lines,
// embedded by value in every task payload at TASKPAYLOAD_TENSOR_STRIDE.
//
// Does not own the bytes it names, and never crosses a process: it is built by
// adopt_chip_tensor() (Runtime::set_orch_args) or by make_tile() from another
// working tensor. It trusts its geometry once adopted; adopt_chip_tensor()
// validates the ChipTensor first. It is a different type from the wire
// simpler::Tensor of task_interface/buffer.h; a kernel that says
// `using namespace simpler::chip;` spells it `Tensor` (kernel_api.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/tensor.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler::chip {

// The task_interface names chip-side code spells (kernels, orchestrations, the
// runtime), so that `using namespace simpler::chip;` is all a kernel source
// says. The wire simpler::Tensor is deliberately not among them.
using simpler::AddressSpace;
using simpler::ChipBuffer;
using simpler::ChipStorageTaskArgs;
using simpler::ChipTensor;
using simpler::CORE_MAX_SCALAR_ARGS;
using simpler::CORE_MAX_TENSOR_ARGS;
using simpler::data_type_element_size;
using simpler::DataType;
using simpler::element_size;
using simpler::MAX_TENSOR_DIMS;
using simpler::TensorArgType;
using simpler::ValidationError;

inline constexpr uint64_t NO_PRODUCER = UINT64_MAX;
inline constexpr size_t RUNTIME_TENSOR_RESERVED_BYTES = 32;

struct alignas(64) Tensor {
    // Geometry: identical meaning to ChipTensor's.
    uint64_t addr;                       // resolved base address of the backing (the overlap-map key)
    uint64_t size;                       // bytes of the backing
    uint64_t start_offset;               // ELEMENTS
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint32_t strides[MAX_TENSOR_DIMS];   // elements
    uint32_t ndims;
    uint8_t dtype;                       // raw DataType
    uint8_t address_space;               // raw AddressSpace
    // Runtime decisions.
    uint8_t dep_creator_only;            // 1: readers depend on producer_task only (no overlap-map scan)
    uint8_t is_contiguous;  // 1: row-major dense (innermost stride 1, each stride = product of inner shapes)
    uint64_t producer_task;  // id of the last task writing overlapping bytes; NO_PRODUCER when none
    uint64_t extent_elem_cache;  // 1 + sum((shape_i - 1) * stride_i), saturating
    int32_t overlap_version;  // writes recorded on this backing when the view was last bound
    uint32_t _pad0;
    uint8_t _reserved[RUNTIME_TENSOR_RESERVED_BYTES];  // room for a 32-byte identity key

    [[nodiscard]] uint32_t element_size() const noexcept { return data_type_element_size(dtype); }
    // Element count of the view (product of active shapes).
    [[nodiscard]] uint64_t numel() const noexcept {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) n *= shapes[i];
        return n;
    }
    // The view's first element (start_offset applied), typed.
    template <typename T>
    [[nodiscard]] T* data() const noexcept {
        return reinterpret_cast<T*>(addr + start_offset * element_size());
    }
};

static_assert(std::is_trivially_copyable_v<Tensor>);
static_assert(std::is_standard_layout_v<Tensor>);
static_assert(sizeof(Tensor) == 128);
static_assert(alignof(Tensor) == 64);
static_assert(offsetof(Tensor, addr) == 0);
static_assert(offsetof(Tensor, size) == 8);
static_assert(offsetof(Tensor, start_offset) == 16);
static_assert(offsetof(Tensor, shapes) == 24);
static_assert(offsetof(Tensor, strides) == 44);
static_assert(offsetof(Tensor, ndims) == 64);
static_assert(offsetof(Tensor, dtype) == 68);
static_assert(offsetof(Tensor, address_space) == 69);
static_assert(offsetof(Tensor, dep_creator_only) == 70);
static_assert(offsetof(Tensor, is_contiguous) == 71);
static_assert(offsetof(Tensor, producer_task) == 72);
static_assert(offsetof(Tensor, extent_elem_cache) == 80);
static_assert(offsetof(Tensor, overlap_version) == 88);
static_assert(offsetof(Tensor, _reserved) == 96);
static_assert(sizeof(Tensor) - offsetof(Tensor, _reserved) >= RUNTIME_TENSOR_RESERVED_BYTES);

// True when the view is row-major dense: strides[n-1] == 1 and each stride is
// the product of the shapes inside it. Singleton dims are not normalized away.
constexpr bool view_is_contiguous(const uint32_t* shapes, const uint32_t* strides, uint32_t ndims) noexcept {
    uint64_t expect = 1;
    for (uint32_t i = ndims; i-- > 0;) {
        if (i >= MAX_TENSOR_DIMS || strides[i] != expect) return false;
        expect *= shapes[i];
    }
    return true;
}

// Recomputes is_contiguous and extent_elem_cache from the geometry.
inline void refresh_derived(Tensor& t) noexcept {
    t.is_contiguous = view_is_contiguous(t.shapes, t.strides, t.ndims) ? 1 : 0;
    t.extent_elem_cache = view_extent_elements(t.shapes, t.strides, t.ndims);
}

// Adopts a ChipTensor into a working tensor: geometry copied, no producer,
// version 0, full dependency tracking, caches computed. The ChipTensor is
// validated first; a refusal leaves `out` untouched.
inline ValidationError adopt_chip_tensor(const ChipTensor& c, Tensor& out) noexcept {
    if (ValidationError e = validate_chip_tensor(c); !e.ok()) return e;
    Tensor t{};
    t.addr = c.buffer.addr;
    t.size = c.buffer.size;
    t.start_offset = c.start_offset;
    for (uint32_t i = 0; i < MAX_TENSOR_DIMS; ++i) {
        t.shapes[i] = c.shapes[i];
        t.strides[i] = c.strides[i];
    }
    t.ndims = c.ndims;
    t.dtype = c.dtype;
    t.address_space = c.address_space;
    t.producer_task = NO_PRODUCER;
    refresh_derived(t);
    out = t;
    return {};
}

// The ChipTensor a working tensor was adopted from (geometry only).
inline ChipTensor chip_tensor_of(const Tensor& t) noexcept {
    ChipTensor c{};
    c.buffer.addr = t.addr;
    c.buffer.size = t.size;
    c.start_offset = t.start_offset;
    for (uint32_t i = 0; i < MAX_TENSOR_DIMS; ++i) {
        c.shapes[i] = t.shapes[i];
        c.strides[i] = t.strides[i];
    }
    c.ndims = t.ndims;
    c.dtype = t.dtype;
    c.address_space = t.address_space;
    return c;
}

}  // namespace simpler::chip
