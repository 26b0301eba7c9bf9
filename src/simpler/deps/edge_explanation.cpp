#include "simpler/deps/edge_explanation.h"

namespace simpler {

const char* edge_kind_name(EdgeKind k) noexcept {
    switch (k) {
        case EdgeKind::READ_AFTER_WRITE: return "READ_AFTER_WRITE";
        case EdgeKind::WRITE_AFTER_WRITE: return "WRITE_AFTER_WRITE";
        case EdgeKind::WRITE_AFTER_READ: return "WRITE_AFTER_READ";
    }
    return "UNKNOWN";
}

std::string EdgeExplanation::to_string() const {
    std::string s = "task " + std::to_string(predecessor) + " -> task " + std::to_string(successor) + ": " +
                    edge_kind_name(kind) + ", task " + std::to_string(successor) + " member " +
                    std::to_string(successor_member) + " argument " + std::to_string(successor_arg) + " (" +
                    tensor_arg_type_name(successor_tag) + ") vs task " + std::to_string(predecessor) + " member " +
                    std::to_string(predecessor_member) + " argument " + std::to_string(predecessor_arg) + " (" +
                    tensor_arg_type_name(predecessor_tag) + ") on buffer " + identity.to_string();
    if (scope == WINDOW_SCOPE)
        s += " (window)";
    else if (scope != HOST_SCOPE)
        s += " (chip " + std::to_string(scope) + ")";
    s += std::string(": ") + tensor_overlap_name(answer.overlap);
    if (answer.overlap == TensorOverlap::PARTIAL) s += std::string(" (") + overlap_reason_name(answer.reason) + ")";
    return s;
}

}  // namespace simpler
