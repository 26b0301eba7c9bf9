#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler {

const char* tensor_arg_type_name(TensorArgType t) noexcept {
    switch (t) {
        case TensorArgType::INPUT: return "INPUT";
        case TensorArgType::OUTPUT: return "OUTPUT";
        case TensorArgType::INOUT: return "INOUT";
        case TensorArgType::OUTPUT_EXISTING: return "OUTPUT_EXISTING";
        case TensorArgType::NO_DEP: return "NO_DEP";
    }
    return "UNKNOWN";
}

}  // namespace simpler
