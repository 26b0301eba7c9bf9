// ChipInstall: what a chip child needs to install a chip callable registered
// after it started — the chip orchestration's name and the shared library
// that carries it (empty: the standard set) — and its bytes, the payload of
// the Worker's install message to a chip (child_handlers.h).
//
// Layout: u32 name length, u32 library length (both little-endian), then the
// name's bytes, then the library path's. Owns nothing; the decoder trusts
// nothing in the bytes and throws std::invalid_argument naming what is wrong.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace simpler {

struct ChipInstall {
    std::string orchestration;  // non-empty
    std::string library;        // a shared library's path; empty: the standard set

    bool operator==(const ChipInstall&) const = default;
};

// std::invalid_argument for an empty name or a field longer than a u32 counts.
std::vector<std::byte> encode_chip_install(const ChipInstall& install);
// std::invalid_argument when the lengths disagree with the bytes or the name is empty.
ChipInstall decode_chip_install(std::span<const std::byte> bytes);

}  // namespace simpler
