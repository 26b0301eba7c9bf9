// Views over one test backing, built the way a user slices a matrix.
#pragma once

#include <cstring>
#include <initializer_list>
#include <vector>

#include "simpler/task_interface/buffer.h"

namespace view_test {

using namespace simpler;

inline BufferDescriptor backing(uint64_t nbytes, uint64_t buffer_id = 7) {
    CanonicalIdentity id{};
    const uint8_t owner[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    std::memcpy(id.owner_instance_id, owner, sizeof owner);
    id.buffer_id = buffer_id;
    id.generation = 1;
    const char name[] = "view-test";
    return make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, nbytes,
                                  {reinterpret_cast<const uint8_t*>(name), sizeof name - 1});
}

// A validated view: shapes and element strides, byte offset.
inline Tensor view(const BufferDescriptor& b, std::initializer_list<uint32_t> shapes,
                   std::initializer_list<uint32_t> strides, uint64_t byte_offset = 0,
                   DataType dtype = DataType::UINT8) {
    const std::vector<uint32_t> sh(shapes), st(strides);
    return make_tensor(b, sh, dtype, st, byte_offset);
}

// The same view without validation (for the spec's examples whose second view
// runs past a short backing).
inline Tensor raw_view(const BufferDescriptor& b, std::initializer_list<uint32_t> shapes,
                       std::initializer_list<uint32_t> strides, uint64_t byte_offset = 0,
                       DataType dtype = DataType::UINT8) {
    Tensor t{};
    t.buffer = b;
    t.byte_offset = byte_offset;
    t.ndims = static_cast<uint32_t>(shapes.size());
    t.dtype = static_cast<uint8_t>(dtype);
    uint32_t i = 0;
    for (uint32_t s : shapes) t.shapes[i++] = s;
    i = 0;
    for (uint32_t s : strides) t.strides[i++] = s;
    return t;
}

}  // namespace view_test
