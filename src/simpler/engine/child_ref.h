// ChildRef: which child of a Worker a task member runs on — its kind and its
// index among the Worker's children of that kind — and MemberTarget: where a
// member asks to run (one named child, or any idle child of a kind).
//
// The one spelling of "which child" in the engine: dispatch, failures, the
// trace and every message name a child through ChildRef::name(), so adding a
// kind of child touches ChildKind, child_kind_name() and the places whose
// behaviour genuinely differs (what the child process serves), nothing else.
//
// Plain values; no allocation except name(). An index is not checked here: the
// engine checks it against the Worker's children at submit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace simpler {

enum class ChildKind : uint8_t {
    CHIP = 0,        // a next-level chip (L2) of this host
    SUB_WORKER = 1,  // a Python sub-worker process of this Worker
    WORKER = 2,      // a next-level Worker (an L3 under an L4, and so on)
};
inline constexpr size_t CHILD_KIND_COUNT = 3;

// "chip", "sub-worker", "worker".
[[nodiscard]] const char* child_kind_name(ChildKind kind) noexcept;

struct ChildRef {
    ChildKind kind = ChildKind::CHIP;
    uint32_t index = 0;  // among this Worker's children of `kind`

    // "chip 0", "sub-worker 1", "worker 2": the name every error, trace lane and
    // status line uses.
    [[nodiscard]] std::string name() const;
    friend bool operator==(const ChildRef&, const ChildRef&) = default;
};

class MemberTarget {
public:
    ChildKind kind = ChildKind::SUB_WORKER;

    constexpr MemberTarget() noexcept = default;
    [[nodiscard]] static constexpr MemberTarget child(ChildRef c) noexcept { return {c.kind, true, c.index}; }
    [[nodiscard]] static constexpr MemberTarget any(ChildKind k) noexcept { return {k, false, 0}; }
    // child({k, *index}) when `index` names one, else any(k).
    [[nodiscard]] static constexpr MemberTarget of(ChildKind k, std::optional<uint32_t> index) noexcept {
        return index ? child({k, *index}) : any(k);
    }
    [[nodiscard]] constexpr bool named() const noexcept { return named_; }
    // The named child's index among the Worker's children of `kind` (0 when not named()).
    [[nodiscard]] constexpr uint32_t index() const noexcept { return index_; }
    // ChildRef::name() of the named child, or "any sub-worker".
    [[nodiscard]] std::string name() const;
    friend bool operator==(const MemberTarget&, const MemberTarget&) = default;

private:
    constexpr MemberTarget(ChildKind k, bool named, uint32_t index) noexcept : kind(k), named_(named), index_(index) {}
    // Plain fields, not a std::optional: a target is built in registers (an
    // optional's engaged byte, stored and then read back with the index as one
    // word, stalled every submit on a failed store forward).
    bool named_ = false;
    uint32_t index_ = 0;
};

}  // namespace simpler
