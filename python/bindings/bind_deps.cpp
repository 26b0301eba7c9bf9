// Binds the dependency tracker (src/simpler/deps/) for tests and diagnostics:
// DependencyTracker with submit / submit_group / complete / explain /
// edges_into, EdgeExplanation (read-only fields), EdgeKind, HOST_SCOPE, WINDOW_SCOPE. A
// refused submit raises ValueError naming the task, arguments, buffer and rule.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>
#include <vector>

#include "simpler/deps/dependency_tracker.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::DependencyTracker;
using simpler::EdgeExplanation;
using simpler::TaskId;
using simpler::Tensor;
using simpler::TensorArgType;

namespace {

using MemberSpec = std::tuple<std::vector<Tensor>, std::vector<TensorArgType>, int32_t>;

std::vector<TaskId> submit_group(DependencyTracker& t, TaskId task, const std::vector<MemberSpec>& specs) {
    std::vector<simpler::TaskMember> members;
    members.reserve(specs.size());
    for (const MemberSpec& s : specs) members.push_back({std::get<0>(s), std::get<1>(s), std::get<2>(s)});
    const auto preds = t.submit(task, members);
    return {preds.begin(), preds.end()};
}

}  // namespace

void bind_deps(nb::module_& m) {
    m.attr("HOST_SCOPE") = simpler::HOST_SCOPE;
    m.attr("WINDOW_SCOPE") = simpler::WINDOW_SCOPE;
    nb::enum_<simpler::EdgeKind>(m, "EdgeKind", "The rule that made an edge")
        .value("READ_AFTER_WRITE", simpler::EdgeKind::READ_AFTER_WRITE)
        .value("WRITE_AFTER_WRITE", simpler::EdgeKind::WRITE_AFTER_WRITE)
        .value("WRITE_AFTER_READ", simpler::EdgeKind::WRITE_AFTER_READ);

    nb::class_<EdgeExplanation>(m, "EdgeExplanation", "Why one edge exists: which arguments, which overlap answer")
        .def_ro("predecessor", &EdgeExplanation::predecessor, "The task that must finish first.")
        .def_ro("successor", &EdgeExplanation::successor, "The task that waits for it.")
        .def_ro("kind", &EdgeExplanation::kind, "The rule: READ_AFTER_WRITE, WRITE_AFTER_WRITE or WRITE_AFTER_READ.")
        .def_ro("successor_member", &EdgeExplanation::successor_member,
                "The successor's member (of a group) whose argument made the edge.")
        .def_ro("successor_arg", &EdgeExplanation::successor_arg,
                "The index of that argument among the member's tensors.")
        .def_ro("predecessor_member", &EdgeExplanation::predecessor_member,
                "The predecessor's member whose argument made the edge.")
        .def_ro("predecessor_arg", &EdgeExplanation::predecessor_arg,
                "The index of that argument among the member's tensors.")
        .def_ro("successor_tag", &EdgeExplanation::successor_tag, "The successor argument's tag.")
        .def_ro("predecessor_tag", &EdgeExplanation::predecessor_tag, "The predecessor argument's tag.")
        .def_ro("identity", &EdgeExplanation::identity, "The backing both arguments view.")
        .def_ro("scope", &EdgeExplanation::scope,
                "Where the backing lives: HOST_SCOPE, WINDOW_SCOPE, or a chip's index (its device memory).")
        .def_prop_ro(
            "overlap", [](const EdgeExplanation& x) { return x.answer.overlap; },
            "What overlap() answered for the two views: PARTIAL or COVERED (never NONE).")
        .def_prop_ro(
            "reason", [](const EdgeExplanation& x) { return x.answer.reason; },
            "Why a PARTIAL answer is PARTIAL (OverlapReason); NONE otherwise.")
        .def_prop_ro("proven", &EdgeExplanation::proven,
                     "True when the edge rests on a proven shared byte; False for a fallback PARTIAL")
        .def("__repr__", [](const EdgeExplanation& x) { return "EdgeExplanation(" + x.to_string() + ")"; });

    nb::class_<DependencyTracker>(m, "DependencyTracker",
                                  "Infers a task's predecessors from its tensor arguments and tags")
        .def(
            "__init__",
            [](DependencyTracker* self, bool exact_strides, uint64_t work_cap, bool record_explanations) {
                new (self) DependencyTracker(
                    simpler::TrackerConfig{simpler::OverlapOptions{exact_strides, work_cap}, record_explanations});
            },
            "exact_strides"_a = true, "work_cap"_a = simpler::OVERLAP_DEFAULT_WORK_CAP, "record_explanations"_a = true)
        .def(
            "submit",
            [](DependencyTracker& t, TaskId task, const std::vector<Tensor>& tensors,
               const std::vector<TensorArgType>& tags, int32_t target_chip) {
                const auto preds = t.submit(task, tensors, tags, target_chip);
                return std::vector<TaskId>(preds.begin(), preds.end());
            },
            "task"_a, "tensors"_a, "tags"_a, "target_chip"_a = simpler::HOST_SCOPE,
            "Submits a one-member task; returns its predecessors. ValueError (nothing recorded) on refusal.")
        .def("submit_group", &submit_group, "task"_a, "members"_a,
             "Submits one node of several members, each (tensors, tags, target_chip); returns its predecessors.")
        .def("complete", &DependencyTracker::complete, "task"_a,
             "Retires a task: its entries leave the tracker. IndexError when it is not live.")
        .def("explain", &DependencyTracker::explain, "pred"_a, "succ"_a,
             "Why pred -> succ exists, or None when there is no such edge")
        .def(
            "edges_into",
            [](const DependencyTracker& t, TaskId succ) {
                const auto e = t.edges_into(succ);
                return std::vector<EdgeExplanation>(e.begin(), e.end());
            },
            "succ"_a, "Every recorded edge into task `succ`, with its explanation.")
        .def("is_live", &DependencyTracker::is_live, "task"_a, "Whether `task` was submitted and not yet completed.")
        .def_prop_ro("live_tasks", &DependencyTracker::live_tasks, "How many tasks are submitted and not completed.")
        .def_prop_ro("live_entries", &DependencyTracker::live_entries,
                     "How many argument entries the live tasks hold in the index.")
        .def_prop_ro("live_keys", &DependencyTracker::live_keys,
                     "How many backings (by identity and scope) the index holds entries of.");
}
