// Sha256: the content hash that keys the kernel-library build cache (FIPS
// 180-4 SHA-256). Incremental: update() any number of times, then hex().
// Pure computation over the bytes it is given; no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace simpler::chip {

class Sha256 {
public:
    Sha256() noexcept;
    void update(std::string_view bytes) noexcept;
    // update() of "<length>:" then `field`, so that two sequences of fields
    // hash alike only when their fields are equal one by one.
    void update_field(std::string_view field);
    // Finishes the hash; the object must not be updated afterwards.
    [[nodiscard]] std::array<uint8_t, 32> digest() noexcept;
    // digest() as 64 lower-case hex characters.
    [[nodiscard]] std::string hex();

private:
    void block(const uint8_t* p) noexcept;
    uint32_t h_[8];
    uint8_t buf_[64];
    uint64_t len_ = 0;   // bytes hashed so far
    size_t fill_ = 0;    // bytes in buf_
};

std::string sha256_hex(std::string_view bytes);

}  // namespace simpler::chip
