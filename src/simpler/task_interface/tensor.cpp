#include "simpler/task_interface/tensor.h"

namespace simpler {

ValidationError validate_chip_tensor(const ChipTensor& t) noexcept {
    constexpr const char* kType = "ChipTensor";
    if (t.buffer.addr == 0) return ValidationError::fail(kType, "buffer.addr", "must be non-zero");
    if (t.address_space > 1)
        return ValidationError::fail(kType, "address_space", "must be HOST(0) or DEVICE(1)", t.address_space);
    if (ValidationError e = check_view_shape(kType, t.ndims, t.shapes, t.strides, t.dtype); !e.ok()) return e;
    const uint32_t elem = data_type_element_size(t.dtype);
    const uint64_t extent = view_extent_bytes(t.shapes, t.strides, t.ndims, elem);
    const uint64_t end = saturating_add(saturating_mul(t.start_offset, elem), extent);
    if (extent == TENSOR_EXTENT_UNREPRESENTABLE || end > t.buffer.size)
        return ValidationError::fail(kType, "start_offset", "view must end within buffer.size", end);
    return {};
}

}  // namespace simpler
