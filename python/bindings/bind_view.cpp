// Binds the overlap question (src/simpler/view/): TensorOverlap, OverlapReason
// and overlap(probe, entry) -> (TensorOverlap, OverlapReason). Same names as in
// C++; the enum values are the frozen C++ values.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>

#include <utility>

#include "checked_args.h"
#include "simpler/view/wire_overlap.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::OverlapReason;
using simpler::Tensor;
using simpler::TensorOverlap;
using simpler::bindings::bool_of;
using simpler::bindings::BoolArg;
using simpler::bindings::IntArg;
using simpler::bindings::obj_of;
using simpler::bindings::ObjArg;

void bind_view(nb::module_& m) {
    nb::enum_<TensorOverlap>(m, "TensorOverlap", "Do two views of one backing share bytes? Only NONE drops an edge")
        .value("NONE", TensorOverlap::NONE)
        .value("PARTIAL", TensorOverlap::PARTIAL)
        .value("COVERED", TensorOverlap::COVERED);
    nb::enum_<OverlapReason>(m, "OverlapReason",
                             "Why an overlap answer is PARTIAL: SHARED_BYTES (proven) or the fallback that applied")
        .value("NONE", OverlapReason::NONE)
        .value("SHARED_BYTES", OverlapReason::SHARED_BYTES)
        .value("DIFFERENT_DTYPE", OverlapReason::DIFFERENT_DTYPE)
        .value("DIFFERENT_RANK", OverlapReason::DIFFERENT_RANK)
        .value("DIFFERENT_STRIDES", OverlapReason::DIFFERENT_STRIDES)
        .value("NOT_ROW_MAJOR", OverlapReason::NOT_ROW_MAJOR)
        .value("OFF_LATTICE", OverlapReason::OFF_LATTICE)
        .value("WRAPS_ROW", OverlapReason::WRAPS_ROW)
        .value("WORK_CAP", OverlapReason::WORK_CAP);
    m.attr("OVERLAP_DEFAULT_WORK_CAP") = simpler::OVERLAP_DEFAULT_WORK_CAP;
    m.def(
        "overlap",
        [](ObjArg<Tensor> probe, ObjArg<Tensor> entry, BoolArg exact_strides, IntArg work_cap) {
            // One argument at a time, in order: the first bad one is the one named.
            const Tensor& p = obj_of(probe, "overlap.probe");
            const Tensor& e = obj_of(entry, "overlap.entry");
            const bool exact = bool_of(exact_strides, "overlap.exact_strides");
            const uint64_t cap = simpler::bindings::u64_of(work_cap, "overlap.work_cap");
            const simpler::OverlapAnswer a = simpler::overlap(p, e, simpler::OverlapOptions{exact, cap});
            return std::make_pair(a.overlap, a.reason);
        },
        "probe"_a, "entry"_a, "exact_strides"_a = true, "work_cap"_a = simpler::OVERLAP_DEFAULT_WORK_CAP,
        nb::sig("def overlap(probe: Tensor, entry: Tensor, exact_strides: bool = True, work_cap: int = 4096) -> "
                "tuple[TensorOverlap, OverlapReason]"),
        "Overlap of two views: (NONE | PARTIAL | COVERED, reason). COVERED: the probe contains every byte of the "
        "entry. Views of different backings are NONE. exact_strides=False stops at the row-major model.");
}
