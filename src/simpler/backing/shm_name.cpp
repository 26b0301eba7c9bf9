#include "simpler/backing/shm_name.h"

#include <cstdio>

namespace simpler {

std::string shm_name_prefix_for(const uint8_t (&owner_instance_id)[OWNER_INSTANCE_ID_BYTES]) {
    std::string s = SHM_NAME_PREFIX;
    char hex[3];
    for (uint8_t b : owner_instance_id) {
        std::snprintf(hex, sizeof hex, "%02x", b);
        s += hex;
    }
    return s;
}

std::optional<std::string> shm_name_for(const CanonicalIdentity& id) {
    if (id.buffer_id == 0 || id.buffer_id > 0xFFFFFFFFull || id.generation == 0 || id.generation > 0xFFFFu)
        return std::nullopt;
    char tail[32];
    std::snprintf(tail, sizeof tail, "-%llxg%x", static_cast<unsigned long long>(id.buffer_id), id.generation);
    std::string s = shm_name_prefix_for(id.owner_instance_id) + tail;
    if (s.size() > SHM_NAME_MAX_BYTES) return std::nullopt;
    return s;
}

std::string shm_syscall_path(const std::string& body) { return "/" + body; }

}  // namespace simpler
