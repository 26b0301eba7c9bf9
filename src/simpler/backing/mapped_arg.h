// MappedArg / MappedArgs: what a Python sub-worker's callable receives for
// each tensor argument — a host address at the view's first byte, the view's
// byte span, whether it is read-only (a READ grant, or a view the task does
// not write; the bytes are then mapped read-only, see import_registry.h), and
// the view geometry. No ChipTensor and no descriptor body.
//
// A MappedArg does not own the mapping: it stays valid until the
// ImportRegistry that produced it unregisters the identity or closes.
#pragma once

#include <cstdint>
#include <vector>

#include "simpler/task_interface/identity.h"
#include "simpler/task_interface/view_geometry.h"

namespace simpler {

struct MappedArg {
    uint8_t* data = nullptr;         // backing base + byte_offset, in this process
    uint64_t view_nbytes = 0;        // extent of the view in bytes: [data, data + view_nbytes)
    bool read_only = true;           // READ grant or a view the task does not write: data is in a read-only mapping
    uint64_t byte_offset = 0;        // bytes from the backing base
    uint64_t backing_nbytes = 0;
    uint32_t ndims = 0;
    uint32_t shapes[MAX_TENSOR_DIMS] = {};
    uint32_t strides[MAX_TENSOR_DIMS] = {};  // elements
    uint8_t dtype = 0;                       // raw DataType
    CanonicalIdentity identity{};
};

struct MappedArgs {
    std::vector<MappedArg> tensors;
    std::vector<uint64_t> scalars;
};

}  // namespace simpler
