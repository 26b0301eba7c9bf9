#include "simpler/task_interface/validation_error.h"

#include <cstdio>
#include <stdexcept>

std::string ValidationError::message() const {
    if (ok()) return {};
    std::string out;
    if (element >= 0) out += "tensor[" + std::to_string(element) + "]: ";
    out += type;
    out += '.';
    out += field;
    if (slot >= 0) out += "[" + std::to_string(slot) + "]";
    out += ": ";
    out += rule;
    if (has_got) {
        char buf[40];
        if (got_hex)
            std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(got));
        else if (got_signed)
            std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(got));
        else
            std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(got));
        out += " (got ";
        out += buf;
        out += ')';
    }
    return out;
}

void throw_if_invalid(const ValidationError& e) {
    if (!e.ok()) throw std::invalid_argument(e.message());
}
