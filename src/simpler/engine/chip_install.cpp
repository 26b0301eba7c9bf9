#include "simpler/engine/chip_install.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace simpler {

namespace {

constexpr size_t HEADER_BYTES = 2 * sizeof(uint32_t);

uint32_t length_of(const std::string& field, const char* what) {
    if (field.size() > std::numeric_limits<uint32_t>::max())
        throw std::invalid_argument(std::string("chip install: the ") + what + " is longer than 2^32 - 1 bytes");
    return static_cast<uint32_t>(field.size());
}

}  // namespace

std::vector<std::byte> encode_chip_install(const ChipInstall& install) {
    if (install.orchestration.empty()) throw std::invalid_argument("chip install: the orchestration name is empty");
    const uint32_t name = length_of(install.orchestration, "orchestration name");
    const uint32_t library = length_of(install.library, "library path");
    std::vector<std::byte> out(HEADER_BYTES + size_t{name} + size_t{library});
    std::memcpy(out.data(), &name, sizeof name);
    std::memcpy(out.data() + sizeof name, &library, sizeof library);
    std::memcpy(out.data() + HEADER_BYTES, install.orchestration.data(), name);
    if (library > 0) std::memcpy(out.data() + HEADER_BYTES + name, install.library.data(), library);
    return out;
}

ChipInstall decode_chip_install(std::span<const std::byte> bytes) {
    if (bytes.size() < HEADER_BYTES)
        throw std::invalid_argument("chip install: " + std::to_string(bytes.size()) +
                                    " bytes is shorter than its 8-byte header");
    uint32_t name = 0;
    uint32_t library = 0;
    std::memcpy(&name, bytes.data(), sizeof name);
    std::memcpy(&library, bytes.data() + sizeof name, sizeof library);
    // Both lengths are u32, so their sum plus the header cannot overflow a 64-bit size_t.
    if (bytes.size() != HEADER_BYTES + size_t{name} + size_t{library})
        throw std::invalid_argument("chip install: a " + std::to_string(name) + "-byte name and a " +
                                    std::to_string(library) + "-byte library path do not fill " +
                                    std::to_string(bytes.size()) + " bytes");
    if (name == 0) throw std::invalid_argument("chip install: the orchestration name is empty");
    const auto* text = reinterpret_cast<const char*>(bytes.data()) + HEADER_BYTES;
    return ChipInstall{std::string(text, name), std::string(text + name, library)};
}

}  // namespace simpler
