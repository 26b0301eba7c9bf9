#include "simpler/task_interface/data_type.h"

namespace simpler {

const char* data_type_name(uint8_t raw) noexcept {
    static constexpr const char* names[DATA_TYPE_COUNT] = {
        "FLOAT32", "FLOAT16", "INT32",  "INT16", "INT8",      "UINT8",   "BFLOAT16", "INT64",
        "UINT64",  "UINT16",  "UINT32", "BOOL",  "FP8E4M3FN", "FP8E8M0", "FP4E2M1",  "FLOAT64",
    };
    return raw < DATA_TYPE_COUNT ? names[raw] : "UNKNOWN";
}

}  // namespace simpler
