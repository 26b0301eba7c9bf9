#include "simpler/view/tensor_overlap.h"

namespace simpler {

const char* tensor_overlap_name(TensorOverlap o) noexcept {
    switch (o) {
        case TensorOverlap::NONE: return "NONE";
        case TensorOverlap::PARTIAL: return "PARTIAL";
        case TensorOverlap::COVERED: return "COVERED";
    }
    return "UNKNOWN";
}

const char* overlap_reason_name(OverlapReason r) noexcept {
    switch (r) {
        case OverlapReason::NONE: return "NONE";
        case OverlapReason::SHARED_BYTES: return "SHARED_BYTES";
        case OverlapReason::DIFFERENT_DTYPE: return "DIFFERENT_DTYPE";
        case OverlapReason::DIFFERENT_RANK: return "DIFFERENT_RANK";
        case OverlapReason::DIFFERENT_STRIDES: return "DIFFERENT_STRIDES";
        case OverlapReason::NOT_ROW_MAJOR: return "NOT_ROW_MAJOR";
        case OverlapReason::OFF_LATTICE: return "OFF_LATTICE";
        case OverlapReason::WRAPS_ROW: return "WRAPS_ROW";
        case OverlapReason::WORK_CAP: return "WORK_CAP";
    }
    return "UNKNOWN";
}

}  // namespace simpler
