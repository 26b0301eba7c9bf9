#include "simpler/engine/child_ref.h"

namespace simpler {

const char* child_kind_name(ChildKind kind) noexcept {
    switch (kind) {
        case ChildKind::CHIP: return "chip";
        case ChildKind::SUB_WORKER: return "sub-worker";
        case ChildKind::WORKER: return "worker";
    }
    return "child";
}

std::string ChildRef::name() const { return std::string(child_kind_name(kind)) + " " + std::to_string(index); }

std::string MemberTarget::name() const {
    return named_ ? ChildRef{kind, index_}.name() : std::string("any ") + child_kind_name(kind);
}

}  // namespace simpler
