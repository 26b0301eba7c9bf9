// EdgeExplanation: why the dependency tracker added one edge — which argument
// of the successor met which recorded argument of the predecessor, the rule
// (read after write, write after write, write after read), and the overlap
// answer with its reason code. A PARTIAL whose reason is not SHARED_BYTES is a
// fallback: the edge may be false, and this is how a user finds lost
// concurrency and how the benchmarks count false edges.
//
// A value type; it owns nothing and trusts nothing beyond its own fields.
#pragma once

#include <cstdint>
#include <string>

#include "simpler/deps/task_id.h"
#include "simpler/task_interface/identity.h"
#include "simpler/task_interface/tensor_arg_type.h"
#include "simpler/view/wire_overlap.h"

namespace simpler {

// The scope of a HOST backing; a DEVICE backing is scoped by its owner chip (>= 0).
inline constexpr int32_t HOST_SCOPE = -1;
// The scope of a VMM_WINDOW backing: one for all chips (its identity names one window).
inline constexpr int32_t WINDOW_SCOPE = -2;

enum class EdgeKind : uint8_t {
    READ_AFTER_WRITE = 0,   // the successor reads bytes the predecessor writes
    WRITE_AFTER_WRITE = 1,  // both write
    WRITE_AFTER_READ = 2,   // the successor writes bytes the predecessor reads
};

const char* edge_kind_name(EdgeKind k) noexcept;

struct EdgeExplanation {
    TaskId predecessor = 0;
    TaskId successor = 0;
    EdgeKind kind = EdgeKind::READ_AFTER_WRITE;
    uint32_t successor_member = 0;    // member index within the successor's submit
    uint32_t successor_arg = 0;       // argument index within that member
    uint32_t predecessor_member = 0;
    uint32_t predecessor_arg = 0;
    TensorArgType successor_tag = TensorArgType::INPUT;
    TensorArgType predecessor_tag = TensorArgType::INPUT;
    CanonicalIdentity identity{};     // the backing both views are over
    int32_t scope = HOST_SCOPE;       // HOST_SCOPE, WINDOW_SCOPE, or the owner chip of a DEVICE backing
    OverlapAnswer answer;             // overlap(successor's view, predecessor's view)

    // True when the edge rests on a proven shared byte (COVERED or SHARED_BYTES);
    // false when it rests on a fallback PARTIAL.
    [[nodiscard]] bool proven() const noexcept { return !is_fallback(answer); }

    // "task 3 -> task 5: WRITE_AFTER_READ, task 5 member 0 argument 1 (OUTPUT) vs
    //  task 3 member 0 argument 0 (INPUT) on <identity>: PARTIAL (DIFFERENT_STRIDES)"
    [[nodiscard]] std::string to_string() const;
};

}  // namespace simpler
