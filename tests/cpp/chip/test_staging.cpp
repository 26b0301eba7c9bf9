// Staging: host-space views are copied into device memory (one block per
// backing, so aliasing views still alias), rewritten to DEVICE addresses, and
// only written views' elements come back — never a strided view's gaps, never
// an INPUT — whether the chip process reaches device memory or the bytes move
// only by device copies. DEVICE tensors pass through; zero-copy stages nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/simulated_device.h"
#include "simpler/chip/staging.h"

using namespace simpler::chip;
using chip_test::view;

namespace {
constexpr TensorArgType IN = TensorArgType::INPUT;
constexpr TensorArgType OUT = TensorArgType::OUTPUT;
constexpr TensorArgType INOUT = TensorArgType::INOUT;
}  // namespace

// The parameter: whether the chip process reaches the device's memory.
class StagingOnDevices : public ::testing::TestWithParam<bool> {};

TEST_P(StagingOnDevices, CopiesStridedViewsInAndOnlyWrittenElementsBack) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20, .host_addressable = GetParam()}};
    ASSERT_EQ(device.host_address(device.alloc(64)) != nullptr, GetParam());
    std::vector<float> in(64), out(64, -1.0f), io(64);
    for (int i = 0; i < 64; ++i) in[i] = static_cast<float>(i), io[i] = static_cast<float>(100 + i);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(in.data(), 256, 1, {4, 4}, {16, 2}));   // rows of 4 every 16, every other element
    args.add_tensor(view(out.data(), 256, 0, {4, 4}, {16, 2}));
    args.add_tensor(view(io.data(), 256, 8, {8}, {3}));
    const TensorArgType tags[3] = {IN, OUT, INOUT};
    {
        StagedArgs staged = stage_in(args, tags, device, StagingMode::STAGE);
        const ChipStorageTaskArgs& d = staged.device_args();
        EXPECT_EQ(staged.staged_backings(), 3u);
        for (int i = 0; i < 3; ++i) {
            EXPECT_TRUE(device.contains(d.tensors[i].buffer.addr, d.tensors[i].buffer.size)) << i;
            EXPECT_EQ(d.tensors[i].address_space, 1u);
            EXPECT_TRUE(validate_chip_tensor(d.tensors[i]).ok()) << validate_chip_tensor(d.tensors[i]).message();
        }
        // The input's elements arrived.
        const auto* din = reinterpret_cast<const float*>(d.tensors[0].buffer.addr);
        const uint32_t idx[2] = {2, 3};
        EXPECT_FLOAT_EQ(din[d.tensors[0].start_offset + 2 * 16 + 3 * 2], in[1 + 2 * 16 + 3 * 2]);
        EXPECT_EQ(d.tensors[0].element_address(idx) - d.tensors[0].buffer.addr,
                  (d.tensors[0].start_offset + 2 * 16 + 3 * 2) * 4);
        // "Kernels" write every element of every device view, the input included.
        for (int t = 0; t < 3; ++t) {
            const ChipTensor& v = d.tensors[t];
            auto* p = reinterpret_cast<float*>(v.buffer.addr);
            if (v.ndims == 2) {
                for (uint32_t i = 0; i < 4; ++i)
                    for (uint32_t j = 0; j < 4; ++j) p[v.start_offset + i * 16 + j * 2] = 1000.0f + t;
            } else {
                for (uint32_t i = 0; i < 8; ++i) p[v.start_offset + i * 3] += 0.5f;
            }
        }
        staged.copy_back();
    }
    EXPECT_EQ(device.memory_stats().live_allocations, 1u);  // the probe block above
    for (int i = 0; i < 64; ++i) ASSERT_FLOAT_EQ(in[i], static_cast<float>(i)) << "INPUT came back at " << i;
    for (int i = 0; i < 64; ++i) {
        const bool in_view = (i % 16) < 8 && (i % 2) == 0;
        ASSERT_FLOAT_EQ(out[i], in_view ? 1001.0f : -1.0f) << i;
    }
    for (int i = 0; i < 64; ++i) {
        const bool in_view = i >= 8 && i < 8 + 8 * 3 && (i - 8) % 3 == 0;
        ASSERT_FLOAT_EQ(io[i], static_cast<float>(100 + i) + (in_view ? 0.5f : 0.0f)) << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Staging, StagingOnDevices, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "InReach" : "CopiesOnly"; });

// A device the chip process cannot reach: one copy in per backing a view reads,
// none for a backing only written, and a written view's elements come back
// without the bytes around them, even when another view of the backing was
// only read.
TEST(Staging, ADiscreteDeviceCopiesWholeRangesAndReturnsOnlyWrittenElements) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20, .host_addressable = false}};
    std::vector<float> buf(64);
    for (int i = 0; i < 64; ++i) buf[i] = static_cast<float>(i);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(buf.data(), 256, 0, {8}, {1}));    // read: elements 0..7
    args.add_tensor(view(buf.data(), 256, 16, {4}, {4}));   // written: 16, 20, 24, 28
    const TensorArgType tags[2] = {IN, OUT};
    {
        StagedArgs staged = stage_in(args, tags, device, StagingMode::STAGE);
        const ChipStorageTaskArgs& d = staged.device_args();
        ASSERT_EQ(d.tensors[0].buffer.addr, d.tensors[1].buffer.addr);
        auto* p = reinterpret_cast<float*>(d.tensors[0].buffer.addr);
        EXPECT_FLOAT_EQ(p[d.tensors[0].start_offset + 7], 7.0f);
        // A kernel that scribbles over the whole staged range: only the written view's elements may come back.
        for (uint64_t e = 0; e < d.tensors[0].buffer.size / 4; ++e) p[e] = -1.0f;
        staged.copy_back();
    }
    for (int i = 0; i < 64; ++i) {
        const bool written = i >= 16 && i < 32 && i % 4 == 0;
        ASSERT_FLOAT_EQ(buf[i], written ? -1.0f : static_cast<float>(i)) << i;
    }
    EXPECT_EQ(device.memory_stats().live_allocations, 0u);
}

TEST(Staging, ADiscreteDeviceRefusesZeroCopyAndCheckedRunsSayingWhy) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20, .host_addressable = false}};
    std::vector<float> buf(16);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(buf.data(), 64, 0, {16}, {1}));
    const TensorArgType tags[1] = {INOUT};
    try {
        stage_in(args, tags, device, StagingMode::ZERO_COPY);
        FAIL() << "expected a refusal";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("zero-copy run needs a device that shares host memory"), std::string::npos)
            << e.what();
    }
    try {
        stage_in(args, tags, device, StagingMode::CHECKED);
        FAIL() << "expected a refusal";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("checked run needs device memory the chip process can read"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(device.memory_stats().live_allocations, 0u);
}

TEST(Staging, ViewsOfOneBackingShareOneDeviceBlock) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
    std::vector<float> buf(128, 3.0f);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(buf.data(), 512, 10, {20}, {1}));
    args.add_tensor(view(buf.data(), 512, 40, {30}, {1}));
    const TensorArgType tags[2] = {IN, OUT};
    StagedArgs staged = stage_in(args, tags, device, StagingMode::STAGE);
    const ChipStorageTaskArgs& d = staged.device_args();
    EXPECT_EQ(staged.staged_backings(), 1u);
    EXPECT_EQ(d.tensors[0].buffer.addr, d.tensors[1].buffer.addr);
    EXPECT_EQ(d.tensors[1].start_offset - d.tensors[0].start_offset, 30u);
    EXPECT_LE(staged.staged_bytes(), 512u);
}

TEST(Staging, DeviceTensorsPassThroughUntouched) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
    void* dev = reinterpret_cast<void*>(device.alloc(256));
    ChipStorageTaskArgs args{};
    args.add_tensor(view(dev, 256, 0, {64}, {1}, DataType::FLOAT32, 1));
    const TensorArgType tags[1] = {INOUT};
    StagedArgs staged = stage_in(args, tags, device, StagingMode::STAGE);
    EXPECT_EQ(std::memcmp(&staged.device_args().tensors[0], &args.tensors[0], sizeof(ChipTensor)), 0);
    EXPECT_EQ(staged.staged_backings(), 0u);
}

TEST(Staging, ZeroCopyLeavesHostAddressesInPlace) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
    std::vector<float> buf(16);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(buf.data(), 64, 0, {16}, {1}));
    const TensorArgType tags[1] = {OUT};
    StagedArgs staged = stage_in(args, tags, device, StagingMode::ZERO_COPY);
    EXPECT_EQ(staged.device_args().tensors[0].buffer.addr, reinterpret_cast<uint64_t>(buf.data()));
    EXPECT_EQ(device.memory_stats().total_allocations, 0u);
}

TEST(Staging, RefusesMismatchedTagsAndInvalidTensorsNamingTheIndex) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
    std::vector<float> buf(16);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(buf.data(), 64, 0, {16}, {1}));
    args.add_tensor(view(buf.data(), 64, 8, {16}, {1}));  // ends past the backing
    const TensorArgType one[1] = {IN};
    EXPECT_THROW(stage_in(args, one, device, StagingMode::STAGE), std::invalid_argument);
    const TensorArgType two[2] = {IN, IN};
    try {
        stage_in(args, two, device, StagingMode::STAGE);
        FAIL() << "expected a refusal";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("tensor[1]"), std::string::npos) << e.what();
    }
    EXPECT_EQ(device.memory_stats().live_allocations, 0u);
}

TEST(Staging, AnExhaustedArenaIsARuntimeErrorAndLeaksNothing) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 16}};
    std::vector<float> a(12000), b(12000);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(a.data(), a.size() * 4, 0, {12000}, {1}));
    args.add_tensor(view(b.data(), b.size() * 4, 0, {12000}, {1}));
    const TensorArgType tags[2] = {IN, OUT};
    EXPECT_THROW(stage_in(args, tags, device, StagingMode::STAGE), std::runtime_error);
    EXPECT_EQ(device.memory_stats().live_allocations, 0u);
}
