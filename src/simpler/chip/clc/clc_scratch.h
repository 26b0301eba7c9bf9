// Scratch: a block of a chip's device memory for the run of one
// standard kernel (std.sum_n's accumulator, std.potrf's info word), returned
// when the kernel's launcher leaves. Host layer: the constructor throws
// std::runtime_error naming the kernel when the device memory cannot fit it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "simpler/chip/device.h"

namespace simpler::chip::clc {

class Scratch {
public:
    Scratch(Device& device, uint64_t nbytes, const char* kernel, const char* what)
        : device_(device), addr_(device.try_alloc(nbytes)) {
        if (addr_ == 0)
            throw std::runtime_error(std::string(kernel) + ": device memory cannot fit its " + std::to_string(nbytes) +
                                     "-byte " + what);
    }
    ~Scratch() { device_.try_free(addr_); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    [[nodiscard]] uint64_t addr() const noexcept { return addr_; }

private:
    Device& device_;
    uint64_t addr_;
};

}  // namespace simpler::chip::clc
