#include "simpler/deps/submit_checks.h"

namespace simpler {

namespace {

SubmitRefusal refuse(const char* rule, uint32_t member, uint32_t arg, std::string detail, int32_t other = -1) {
    SubmitRefusal r;
    r.rule = rule;
    r.member = member;
    r.arg = arg;
    r.other_arg = other;
    r.detail = std::move(detail);
    return r;
}

AccessMode needed_access(TensorArgType t) noexcept {
    switch (t) {
        case TensorArgType::INPUT: return AccessMode::READ;
        case TensorArgType::OUTPUT:
        case TensorArgType::OUTPUT_EXISTING: return AccessMode::WRITE;
        default: return AccessMode::READWRITE;
    }
}

}  // namespace

SubmitRefusal check_member(uint32_t m, const TaskMember& member, std::span<ViewBox> boxes,
                           const OverlapOptions& options, bool validate_tensors, bool fill_boxes) {
    const size_t n = member.tensors.size();
    // Past 64 arguments (the mask below) every box is computed up front.
    fill_boxes = fill_boxes || n > 64;
    uint64_t boxed = 0;  // without fill_boxes: bit i set once boxes[i] is computed
    if (member.tags.size() != n)
        return refuse(RULE_ONE_TAG_PER_TENSOR, m, 0,
                      std::to_string(n) + " tensors, " + std::to_string(member.tags.size()) + " tags");
    for (size_t i = 0; i < n; ++i) {
        const auto a = static_cast<uint32_t>(i);
        const TensorArgType tag = member.tags[i];
        if (!is_known_tag(tag))
            return refuse(RULE_KNOWN_TAG, m, a, "tag value " + std::to_string(static_cast<int32_t>(tag)));
        const Tensor& t = member.tensors[i];
        if (validate_tensors)
            if (ValidationError e = validate_tensor(t); !e.ok()) return refuse(RULE_VALID_TENSOR, m, a, e.message());
        if (!tag_allowed(static_cast<AccessMode>(t.buffer.access), tag))
            return refuse(RULE_ACCESS_WITHIN_GRANT, m, a,
                          std::string(tensor_arg_type_name(tag)) + " needs " +
                              access_mode_name(static_cast<uint8_t>(needed_access(tag))) + ", the buffer grants " +
                              access_mode_name(t.buffer.access));
        if (t.buffer.address_space == static_cast<uint8_t>(AddressSpace::DEVICE) && member.target_chip < 0 &&
            !(member.next_level && t.buffer.backend_kind == static_cast<uint8_t>(BackendKind::VMM_WINDOW)))
            return refuse(RULE_DEVICE_TO_CHIP, m, a, "the member targets the host");
        if (fill_boxes && tag != TensorArgType::NO_DEP) boxes[i] = make_view_box(t);
    }
    const auto box = [&](size_t i) -> const ViewBox& {
        if (!fill_boxes && (boxed >> i & 1) == 0) {
            boxes[i] = make_view_box(member.tensors[i]);
            boxed |= uint64_t{1} << i;
        }
        return boxes[i];
    };
    for (size_t i = 0; i < n; ++i) {
        const TensorArgType ti = member.tags[i];
        if (ti == TensorArgType::NO_DEP) continue;
        const Tensor& a = member.tensors[i];
        for (size_t j = i + 1; j < n; ++j) {
            const TensorArgType tj = member.tags[j];
            if (tj == TensorArgType::NO_DEP || !(tag_writes(ti) || tag_writes(tj))) continue;
            if (!(a.buffer.identity == member.tensors[j].buffer.identity)) continue;
            const OverlapAnswer ov = overlap(box(i), box(j), options);
            if (ov.overlap == TensorOverlap::NONE) continue;
            std::string detail = std::string(tensor_arg_type_name(ti)) + " and " + tensor_arg_type_name(tj) +
                                 " views: " + tensor_overlap_name(ov.overlap);
            if (ov.overlap == TensorOverlap::PARTIAL) detail += std::string(", ") + overlap_reason_name(ov.reason);
            return refuse(RULE_NO_OVERLAPPING_WRITES, m, static_cast<uint32_t>(i), std::move(detail),
                          static_cast<int32_t>(j));
        }
    }
    return {};
}

std::string format_refusal(TaskId task, const SubmitRefusal& r, const TaskMember& member) {
    std::string s = "submit of task " + std::to_string(task) + " refused: member " + std::to_string(r.member) + ", ";
    if (r.other_arg >= 0)
        s += "arguments " + std::to_string(r.arg) + " and " + std::to_string(r.other_arg);
    else
        s += "argument " + std::to_string(r.arg);
    if (r.arg < member.tensors.size()) s += ", buffer " + member.tensors[r.arg].buffer.identity.to_string();
    s += std::string(": ") + r.rule;
    if (!r.detail.empty()) s += " (" + r.detail + ")";
    return s;
}

}  // namespace simpler
