// Backings and views for the dependency tracker's tests.
#pragma once

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "simpler/deps/dependency_tracker.h"
#include "simpler/task_interface/buffer.h"

namespace deps_test {

using namespace simpler;

inline CanonicalIdentity identity(uint64_t buffer_id, uint32_t generation = 1) {
    CanonicalIdentity id{};
    const uint8_t owner[8] = {0xd0, 0xe1, 0xf2, 0x03, 0x14, 0x25, 0x36, 0x47};
    std::memcpy(id.owner_instance_id, owner, sizeof owner);
    id.buffer_id = buffer_id;
    id.generation = generation;
    return id;
}

inline BufferDescriptor host_backing(uint64_t nbytes, uint64_t buffer_id = 1, AccessMode access = AccessMode::READWRITE,
                                     uint32_t generation = 1) {
    const char name[] = "deps-test";
    return make_buffer_descriptor(identity(buffer_id, generation), BackendKind::POSIX_SHM, AddressSpace::HOST, access,
                                  nbytes, {reinterpret_cast<const uint8_t*>(name), sizeof name - 1});
}

inline BufferDescriptor device_backing(uint64_t nbytes, uint64_t buffer_id) {
    return make_address_descriptor(identity(buffer_id), BackendKind::DEVICE_MALLOC, AccessMode::READWRITE, nbytes,
                                   0x10000);
}

inline Tensor view(const BufferDescriptor& b, std::initializer_list<uint32_t> shapes,
                   std::initializer_list<uint32_t> strides, uint64_t byte_offset = 0,
                   DataType dtype = DataType::UINT8) {
    const std::vector<uint32_t> sh(shapes), st(strides);
    return make_tensor(b, sh, dtype, st, byte_offset);
}

// x[r0:r1, c0:c1] of a 16x16 UINT8 matrix (strides (16, 1)).
inline Tensor block(const BufferDescriptor& b, uint32_t r0, uint32_t r1, uint32_t c0, uint32_t c1) {
    return view(b, {r1 - r0, c1 - c0}, {16, 1}, uint64_t{r0} * 16 + c0);
}

inline Tensor whole(const BufferDescriptor& b) { return view(b, {16, 16}, {16, 1}); }

// One-member submit from parallel initializer lists; the predecessors sorted.
inline std::vector<simpler::TaskId> submit(simpler::DependencyTracker& t, simpler::TaskId id,
                                           std::initializer_list<Tensor> tensors,
                                           std::initializer_list<TensorArgType> tags,
                                           int32_t target_chip = simpler::HOST_SCOPE) {
    const std::vector<Tensor> ts(tensors);
    const std::vector<TensorArgType> gs(tags);
    const auto preds = t.submit(id, ts, gs, target_chip);
    std::vector<simpler::TaskId> sorted(preds.begin(), preds.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted;
}

using Preds = std::vector<simpler::TaskId>;

}  // namespace deps_test
