#include "simpler/chip/device.h"

namespace simpler::chip {

const char* device_kind_name(DeviceKind kind) noexcept {
    switch (kind) {
        case DeviceKind::SIMULATED: return "simulated";
        case DeviceKind::OPENCL: return "opencl";
        case DeviceKind::CUDA: return "cuda";
    }
    return "unknown";
}

}  // namespace simpler::chip
