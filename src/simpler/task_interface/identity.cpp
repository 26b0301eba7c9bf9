#include "simpler/task_interface/identity.h"

#include <cstdio>

namespace simpler {

std::string CanonicalIdentity::to_string() const {
    char buf[64];
    int n = 0;
    for (size_t i = 0; i < OWNER_INSTANCE_ID_BYTES; ++i)
        n += std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), "%02x", owner_instance_id[i]);
    std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), ":%llu@g%u", static_cast<unsigned long long>(buffer_id),
                  generation);
    return buf;
}

}  // namespace simpler
