// Fuzzes a chip child's reading of an install payload: whatever bytes the
// install message carries, decode_chip_install() either refuses them with
// std::invalid_argument or returns a ChipInstall with a non-empty name whose
// encoding is exactly those bytes (every length was checked against them).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "simpler/engine/chip_install.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    simpler::ChipInstall decoded;
    try {
        decoded = simpler::decode_chip_install(bytes);
    } catch (const std::invalid_argument&) {
        return 0;
    }
    if (decoded.orchestration.empty()) std::abort();
    const std::vector<std::byte> again = simpler::encode_chip_install(decoded);
    if (again.size() != size || (size > 0 && std::memcmp(again.data(), data, size) != 0)) std::abort();
    return 0;
}
