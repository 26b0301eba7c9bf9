// Helpers for the chip tests: ChipTensor views over test-owned memory, and a
// bounded wait so a hang fails a test instead of stalling ctest.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "simpler/chip/tensor.h"
#include "simpler/task_interface/task_args.h"

namespace chip_test {

// What `f` threw, or "(nothing was thrown)".
inline std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(nothing was thrown)";
}

using namespace simpler::chip;

inline ChipTensor view(const void* base, uint64_t nbytes, uint64_t start_elems, std::initializer_list<uint32_t> shapes,
                       std::initializer_list<uint32_t> strides, DataType dtype = DataType::FLOAT32,
                       uint8_t address_space = 0) {
    ChipTensor t{};
    t.buffer.addr = reinterpret_cast<uint64_t>(base);
    t.buffer.size = nbytes;
    t.start_offset = start_elems;
    uint32_t i = 0;
    for (uint32_t s : shapes) t.shapes[i++] = s;
    t.ndims = i;
    i = 0;
    for (uint32_t s : strides) t.strides[i++] = s;
    t.dtype = static_cast<uint8_t>(dtype);
    t.address_space = address_space;
    return t;
}

// Row-major contiguous view of a whole vector<float> as shape `shapes`.
inline ChipTensor dense(const std::vector<float>& v, std::initializer_list<uint32_t> shapes, uint8_t space = 0) {
    std::vector<uint32_t> sh(shapes);
    std::vector<uint32_t> st(sh.size());
    uint32_t s = 1;
    for (size_t i = sh.size(); i-- > 0;) {
        st[i] = s;
        s *= sh[i];
    }
    ChipTensor t = view(v.data(), v.size() * sizeof(float), 0, {}, {}, DataType::FLOAT32, space);
    for (size_t i = 0; i < sh.size(); ++i) {
        t.shapes[i] = sh[i];
        t.strides[i] = st[i];
    }
    t.ndims = static_cast<uint32_t>(sh.size());
    return t;
}

inline simpler::chip::Tensor adopt(const ChipTensor& c) {
    simpler::chip::Tensor t{};
    if (!simpler::chip::adopt_chip_tensor(c, t).ok()) throw std::invalid_argument("test view invalid");
    return t;
}

// Runs f() on another thread; false when it does not finish within `limit`.
template <typename F>
bool finishes_within(std::chrono::milliseconds limit, F&& f) {
    auto fut = std::async(std::launch::async, std::forward<F>(f));
    if (fut.wait_for(limit) != std::future_status::ready) {
        fut.get();  // a hang cannot be cancelled; fail loudly after waiting it out
        return false;
    }
    fut.get();
    return true;
}

}  // namespace chip_test
