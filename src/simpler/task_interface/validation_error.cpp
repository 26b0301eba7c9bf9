#include "simpler/task_interface/validation_error.h"

#include <cstdio>
#include <stdexcept>

namespace simpler {

std::string ValidationError::message() const {
    if (ok()) return {};
    std::string out;
    char index[24];
    if (element >= 0) {
        std::snprintf(index, sizeof index, "tensor[%d]: ", element);
        out.append(index);
    }
    out.append(type).append(".").append(field);
    if (slot >= 0) {
        std::snprintf(index, sizeof index, "[%d]", slot);
        out.append(index);
    }
    out.append(": ");
    out.append(rule);
    if (has_got) {
        char buf[40];
        if (got_hex)
            std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(got));
        else if (got_signed)
            std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(got));
        else
            std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(got));
        out.append(" (got ").append(buf);
        if (has_max) {
            std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(max));
            out.append(", max ").append(buf);
        }
        out.append(")");
    }
    return out;
}

void throw_if_invalid(const ValidationError& e) {
    if (!e.ok()) throw std::invalid_argument(e.message());
}

}  // namespace simpler
