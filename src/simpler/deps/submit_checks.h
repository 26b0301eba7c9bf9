// The checks every submit runs before it records anything (docs/explanation/dependencies.md,
// "Submit checks"), per member:
//   - one tag per tensor, every tag known, every tensor valid (validate_tensor);
//   - access within grant: the tag needs no more than the buffer grants (checked
//     at TaskArgs::add_tensor too; the tag stays mutable in between);
//   - a DEVICE tensor goes only to a member that targets a chip;
//   - no overlapping writes within one member: two arguments over one backing
//     whose views are not proven disjoint (overlap != NONE), when at least one
//     of them writes, whatever their order. NO_DEP arguments take no part.
// Members of one group are not compared with each other.
//
// Does not check what only the engine knows: that a DEVICE tensor's chip is the
// one that owns it, that a Python sub-worker takes HOST tensors only, or that
// an identity is not stale. Trusts nothing in the member; failures are data
// (SubmitRefusal) until format_refusal turns them into a message.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "simpler/deps/task_member.h"
#include "simpler/view/view_box.h"
#include "simpler/view/wire_overlap.h"

namespace simpler {

struct SubmitRefusal {
    const char* rule = nullptr;  // null when the member passes
    uint32_t member = 0;
    uint32_t arg = 0;
    int32_t other_arg = -1;      // the second argument of a pairwise rule, else -1
    std::string detail;          // the offending values

    [[nodiscard]] bool ok() const noexcept { return rule == nullptr; }
};

inline constexpr const char* RULE_ONE_TAG_PER_TENSOR = "one tag per tensor";
inline constexpr const char* RULE_KNOWN_TAG = "every tag is a known TensorArgType";
inline constexpr const char* RULE_VALID_TENSOR = "every tensor is valid";
inline constexpr const char* RULE_ACCESS_WITHIN_GRANT = "access within grant";
// (or, a VMM_WINDOW one, to a next-level Worker: TaskMember::next_level)
inline constexpr const char* RULE_DEVICE_TO_CHIP = "a DEVICE tensor goes only to a chip";
inline constexpr const char* RULE_NO_OVERLAPPING_WRITES = "no overlapping writes within one task";

// Checks member `member_index`; on success, with fill_boxes, fills boxes[i]
// for every argument that is not NO_DEP (boxes.size() must be >= the tensor
// count). Without fill_boxes (a check whose boxes are not kept: a batch is
// checked whole, then each task's boxes are computed at its submit) only the
// boxes the pairwise rule compares are computed, and the others are left as
// they were. With validate_tensors false the validate_tensor rule is skipped
// (for callers whose tensors were validated when they were built, as
// TaskArgs::add_tensor does); overlap() stays total, so an invalid view then
// costs edges, never soundness.
SubmitRefusal check_member(uint32_t member_index, const TaskMember& member, std::span<ViewBox> boxes,
                           const OverlapOptions& options, bool validate_tensors = true, bool fill_boxes = true);

// "submit of task 12 refused: member 0, arguments 1 and 3, buffer <identity>:
//  no overlapping writes within one task (OUTPUT and INPUT views: PARTIAL,
//  SHARED_BYTES)". `member` is the member the refusal names.
std::string format_refusal(TaskId task, const SubmitRefusal& refusal, const TaskMember& member);

}  // namespace simpler
