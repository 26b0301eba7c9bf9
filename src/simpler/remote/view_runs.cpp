#include "simpler/remote/view_runs.h"

#include <cstring>

#include "simpler/task_interface/view_geometry.h"

namespace simpler {

uint64_t view_payload_bytes(const Tensor& t) noexcept {
    uint64_t elements = 1;
    for (uint32_t d = 0; d < t.ndims && d < MAX_TENSOR_DIMS; ++d) elements = saturating_mul(elements, t.shapes[d]);
    return saturating_mul(elements, data_type_element_size(t.dtype));
}

void pack_view(const uint8_t* base, const Tensor& t, uint8_t* out) noexcept {
    for_each_run(t, [&](uint64_t offset, uint64_t length) {
        std::memcpy(out, base + offset, length);
        out += length;
    });
}

void unpack_view(uint8_t* base, const Tensor& t, const uint8_t* in) noexcept {
    for_each_run(t, [&](uint64_t offset, uint64_t length) {
        std::memcpy(base + offset, in, length);
        in += length;
    });
}

bool view_is_one_run(const Tensor& t) noexcept {
    uint64_t run = 1;
    for (uint32_t d = t.ndims; d > 0; --d) {
        if (t.shapes[d - 1] > 1 && t.strides[d - 1] != run) return false;
        run *= t.shapes[d - 1];
    }
    return true;
}

}  // namespace simpler
