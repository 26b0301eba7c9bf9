// Valid wire values to start each test from; a test mutates one field.
#pragma once

#include <cstring>
#include <string_view>

#include "simpler/task_interface/buffer.h"

using namespace simpler;

inline CanonicalIdentity test_identity(uint64_t buffer_id = 7, uint32_t generation = 1) {
    CanonicalIdentity id{};
    const uint8_t owner[8] = {0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18};
    std::memcpy(id.owner_instance_id, owner, sizeof owner);
    id.buffer_id = buffer_id;
    id.generation = generation;
    return id;
}

inline BufferDescriptor shm_descriptor(uint64_t nbytes = 1024, AccessMode access = AccessMode::READWRITE,
                                       std::string_view name = "simpler-test") {
    return make_buffer_descriptor(test_identity(), BackendKind::POSIX_SHM, AddressSpace::HOST, access, nbytes,
                                  {reinterpret_cast<const uint8_t*>(name.data()), name.size()});
}

inline Tensor vector_tensor(uint32_t n = 16, DataType dtype = DataType::FLOAT32, uint64_t nbytes = 1024,
                            AccessMode access = AccessMode::READWRITE) {
    const uint32_t shapes[1] = {n};
    return make_tensor(shm_descriptor(nbytes, access), shapes, dtype);
}
