// OwnerPathTable: interns a worker's tree path ("l4/l3[0]/chip[1]") to the
// diagnostic u32 owner_worker_path_id a descriptor carries. Ids start at 1
// (0 means "no path"). The table lives only in the process that interned the
// path; nothing routes, gates or keys on these ids. render() turns an id back
// into its path when this process interned it for a descriptor this
// incarnation owns, and into "<path#N>" otherwise. Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "simpler/task_interface/buffer.h"

namespace simpler {

class IdentityMinter;

class OwnerPathTable {
public:
    // The id of path, interning it on first use. Throws std::length_error when
    // ids are exhausted.
    uint32_t intern(const std::string& path);
    // The path of an id interned here, or "<path#N>".
    [[nodiscard]] std::string render(uint32_t id) const;
    // The path when d's identity was minted by `minter`'s incarnation and its
    // id was interned here; "<path#N>" otherwise (0 renders as "<path#0>").
    [[nodiscard]] std::string render(const BufferDescriptor& d, IdentityMinter& minter) const;

private:
    mutable std::mutex mu_;
    std::unordered_map<std::string, uint32_t> ids_;
    std::vector<std::string> paths_;  // paths_[id - 1]
};

// This process's table: the owners (create_buffer, device memory) stamp its ids
// on the descriptors they make, and repr and errors render them. A forked child
// keeps the copy it inherited (ids interned before the fork render alike).
OwnerPathTable& process_owner_paths();
// "<path>" for a descriptor minted by this incarnation with an id interned
// here, "<path#N>" otherwise: process_owner_paths().render(d, process minter).
[[nodiscard]] std::string owner_path_of(const BufferDescriptor& d);

}  // namespace simpler
