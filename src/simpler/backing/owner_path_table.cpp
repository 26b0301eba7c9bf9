#include "simpler/backing/owner_path_table.h"

#include <stdexcept>

#include "simpler/backing/identity_minter.h"

namespace simpler {

uint32_t OwnerPathTable::intern(const std::string& path) {
    std::lock_guard lock(mu_);
    const auto it = ids_.find(path);
    if (it != ids_.end()) return it->second;
    if (paths_.size() >= UINT32_MAX - 1) throw std::length_error("OwnerPathTable: path ids exhausted");
    paths_.push_back(path);
    const auto id = static_cast<uint32_t>(paths_.size());
    ids_.emplace(path, id);
    return id;
}

std::string OwnerPathTable::render(uint32_t id) const {
    std::lock_guard lock(mu_);
    if (id == 0 || id > paths_.size()) return "<path#" + std::to_string(id) + ">";
    return paths_[id - 1];
}

std::string OwnerPathTable::render(const BufferDescriptor& d, IdentityMinter& minter) const {
    if (!minter.minted_here(d.identity)) return "<path#" + std::to_string(d.owner_worker_path_id) + ">";
    return render(d.owner_worker_path_id);
}

OwnerPathTable& process_owner_paths() {
    static OwnerPathTable table;
    return table;
}

std::string owner_path_of(const BufferDescriptor& d) {
    return process_owner_paths().render(d, process_identity_minter());
}

}  // namespace simpler
