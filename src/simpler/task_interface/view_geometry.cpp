#include "simpler/task_interface/view_geometry.h"

#include "simpler/task_interface/data_type.h"

namespace simpler {

ValidationError check_view_shape(const char* type, uint32_t ndims, const uint32_t* shapes, const uint32_t* strides,
                                 uint8_t dtype) noexcept {
    if (ndims >= 1 && ndims <= MAX_TENSOR_DIMS && data_type_element_size(dtype) != 0 &&
        view_dims_well_formed(ndims, shapes, strides))
        return {};
    // Slow path: name the first failing check in the documented order.
    if (ndims < 1 || ndims > MAX_TENSOR_DIMS) return ValidationError::fail(type, "ndims", "must be in 1..5", ndims);
    if (data_type_element_size(dtype) == 0)
        return ValidationError::fail(type, "dtype", "must be a known DataType (0..15)", dtype);
    for (uint32_t i = 0; i < ndims; ++i) {
        if (shapes[i] == 0)
            return ValidationError::fail(type, "shapes", "must be > 0", 0).at_slot(static_cast<int32_t>(i));
        if (strides[i] == 0)
            return ValidationError::fail(type, "strides", "must be > 0 (no broadcast)", 0)
                .at_slot(static_cast<int32_t>(i));
    }
    for (uint32_t i = ndims; i < MAX_TENSOR_DIMS; ++i) {
        if (shapes[i] != 0)
            return ValidationError::fail(type, "shapes", "must be 0 past ndims", shapes[i])
                .at_slot(static_cast<int32_t>(i));
        if (strides[i] != 0)
            return ValidationError::fail(type, "strides", "must be 0 past ndims", strides[i])
                .at_slot(static_cast<int32_t>(i));
    }
    return {};
}

}  // namespace simpler
