// ChipTensor: a task argument as the chip runtime receives it — a resolved
// address in the chip's address space plus a strided view, and nothing else.
// Built only by materialization at the L2 boundary; never crosses a process.
//
// This header is what kernels and chip orchestrations see (with the runtime's
// own working tensor, simpler::chip::Tensor); it does not include buffer.h,
// which a kernel has no use for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "simpler/task_interface/data_type.h"
#include "simpler/task_interface/validation_error.h"
#include "simpler/task_interface/view_geometry.h"

namespace simpler {

struct ChipBuffer {
    uint64_t addr;  // resolved base address of the backing in the chip's address space
    uint64_t size;  // bytes of the backing (the descriptor's nbytes)
};

struct ChipTensor {
    ChipBuffer buffer;
    uint64_t start_offset;               // ELEMENTS = byte_offset / element size
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint32_t strides[MAX_TENSOR_DIMS];   // elements
    uint32_t ndims;
    uint8_t dtype;                       // raw DataType
    uint8_t address_space;               // raw AddressSpace (0 HOST, 1 DEVICE)
    uint8_t _pad[2];

    // Address of element `idx` (one index per active dim).
    [[nodiscard]] uint64_t element_address(const uint32_t* idx) const noexcept {
        uint64_t e = start_offset;
        for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) e += uint64_t{idx[i]} * strides[i];
        return buffer.addr + e * data_type_element_size(dtype);
    }
    [[nodiscard]] uint64_t extent_elements() const noexcept { return view_extent_elements(shapes, strides, ndims); }
};

static_assert(std::is_trivially_copyable_v<ChipBuffer> && sizeof(ChipBuffer) == 16);
static_assert(std::is_trivially_copyable_v<ChipTensor>);
static_assert(std::is_standard_layout_v<ChipTensor>);
static_assert(sizeof(ChipTensor) == 72);
static_assert(alignof(ChipTensor) == 8);
static_assert(offsetof(ChipTensor, buffer) == 0);
static_assert(offsetof(ChipTensor, buffer) + offsetof(ChipBuffer, addr) == 0);
static_assert(offsetof(ChipTensor, buffer) + offsetof(ChipBuffer, size) == 8);
static_assert(offsetof(ChipTensor, start_offset) == 16);
static_assert(offsetof(ChipTensor, shapes) == 24);
static_assert(offsetof(ChipTensor, strides) == 44);
static_assert(offsetof(ChipTensor, ndims) == 64);
static_assert(offsetof(ChipTensor, dtype) == 68);
static_assert(offsetof(ChipTensor, address_space) == 69);
static_assert(offsetof(ChipTensor, _pad) == 70);

// In order: buffer.addr != 0; address_space <= 1; the view shape checks of
// view_geometry.h; the view ends within buffer.size
// ((start_offset * elem + extent) <= size, saturating).
ValidationError validate_chip_tensor(const ChipTensor& t) noexcept;

}  // namespace simpler
