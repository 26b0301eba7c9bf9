// Checked staging (StagingMode::CHECKED): a write outside the views a task may
// write — past a view's end, before its start, into a strided view's gaps, into
// a view it only reads — fails the run naming the orchestration and the tensor,
// and the host bytes (inside and outside the views) stay as they were; a clean
// run copies back exactly what STAGE copies back. The same out-of-bounds kernel
// under STAGE leaves the host intact without notice and under ZERO_COPY
// overwrites the host bytes past the view.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/chip.h"
#include "simpler/chip/simulated_device.h"
#include "simpler/chip/staging.h"

using namespace simpler::chip;
using chip_test::view;

namespace {
constexpr TensorArgType IN = TensorArgType::INPUT;
constexpr TensorArgType OUT = TensorArgType::OUTPUT;
constexpr TensorArgType OUT_EX = TensorArgType::OUTPUT_EXISTING;
constexpr TensorArgType INOUT = TensorArgType::INOUT;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

unsigned char* device_byte(const ChipTensor& d, int64_t offset_from_view) {
    return reinterpret_cast<unsigned char*>(d.buffer.addr) + d.start_offset * data_type_element_size(d.dtype) +
           offset_from_view;
}

// test.poke: fills every element of tensor 1 (a 1-D FLOAT32 view) with 7, then
// stores the u32 0xA1B2C3D4 at byte `scalar 0` (signed) from the first byte of
// tensor `scalar 1`'s view.
int32_t poke(const KernelArgs* a) {
    const Tensor& out = a->tensors[1];
    float* o = base_ptr<float>(out);
    for (uint32_t i = 0; i < out.shapes[0]; ++i) o[out.start_offset + uint64_t{i} * out.strides[0]] = 7.0f;
    const Tensor& t = a->tensors[a->scalars[1]];
    unsigned char* at = reinterpret_cast<unsigned char*>(t.addr) + t.start_offset * data_type_element_size(t.dtype) +
                        static_cast<int64_t>(a->scalars[0]);
    const uint32_t v = 0xA1B2C3D4u;
    std::memcpy(at, &v, sizeof v);
    return CHIP_OK;
}

int32_t poke_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("test.poke", &k); rc != CHIP_OK) return rc;
    return o.submit(k, {{o.arg(0), TensorArgType::INPUT}, {o.arg(1), TensorArgType::OUTPUT_EXISTING}},
                    {o.scalar(0), o.scalar(1)});
}

struct PokeRun {
    Chip chip{ChipConfig{.arena_bytes = 1 << 22, .runtime = {.core_threads = 2}}};
    std::vector<float> in = std::vector<float>(64, 1.0f);
    std::vector<float> out = std::vector<float>(64, -1.0f);  // the view is elements [8, 40)

    PokeRun() {
        chip.registry().add_kernel("test.poke", poke);
        chip.registry().add_orchestration("test.poke", poke_orch);
    }
    RunResult run(StagingMode mode, int64_t offset, uint64_t tensor = 1) {
        ChipStorageTaskArgs args{};
        args.add_tensor(view(in.data(), 256, 0, {16}, {1}));
        args.add_tensor(view(out.data(), 256, 8, {32}, {1}));
        args.add_scalar(static_cast<uint64_t>(offset));
        args.add_scalar(tensor);
        const TensorArgType tags[2] = {IN, OUT_EX};
        return chip.run(chip.registry().orchestration("test.poke"), args, tags, mode, 0);
    }
};

}  // namespace

TEST(CheckedStaging, AWritePastTheViewFailsTheRunNamingTheOrchestrationAndTensorAndLeavesTheHostIntact) {
    PokeRun p;
    const std::vector<float> before = p.out;
    const RunResult r = p.run(StagingMode::CHECKED, 32 * 4 + 4);  // bytes 4..8 past the view's last byte
    ASSERT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error, "checked run of 'test.poke': tensor 1 (host bytes at 0x")) << r.error;
    EXPECT_TRUE(contains(r.error,
                         "wrote past the end of its view: 4 bytes changed outside the views the task may "
                         "write, as far as 8 bytes past the view's last byte; nothing was copied back"))
        << r.error;
    EXPECT_EQ(p.out, before) << "a failed checked run copies nothing back";
    EXPECT_EQ(p.chip.device().memory_stats().live_allocations, 0u);
    // The chip stays usable, and a clean checked run copies the view back and nothing else.
    const RunResult ok = p.run(StagingMode::CHECKED, 0);  // pokes the view's own first element
    ASSERT_TRUE(ok.ok) << ok.error;
    for (int i = 0; i < 64; ++i) {
        if (i < 8 || i >= 40) {
            ASSERT_EQ(p.out[i], -1.0f) << i;
        } else if (i > 8) {
            ASSERT_EQ(p.out[i], 7.0f) << i;
        }
    }
    uint32_t poked = 0;
    std::memcpy(&poked, &p.out[8], 4);
    EXPECT_EQ(poked, 0xA1B2C3D4u);
}

TEST(CheckedStaging, StagedModeHidesTheWriteAndZeroCopyLetsItReachTheHost) {
    PokeRun staged;
    ASSERT_TRUE(staged.run(StagingMode::STAGE, 32 * 4).ok);
    EXPECT_EQ(staged.out[40], -1.0f) << "staging keeps the host bytes past the view";
    PokeRun zero;
    ASSERT_TRUE(zero.run(StagingMode::ZERO_COPY, 32 * 4).ok) << "zero-copy trusts the kernel";
    uint32_t past = 0;
    std::memcpy(&past, &zero.out[40], 4);
    EXPECT_EQ(past, 0xA1B2C3D4u) << "zero-copy let the kernel overwrite the host byte past its view";
}

TEST(CheckedStaging, AWriteBeforeTheViewOrIntoAnInputIsNamedToo) {
    PokeRun p;
    RunResult r = p.run(StagingMode::CHECKED, -8);
    ASSERT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error, "tensor 1 (host bytes at")) << r.error;
    EXPECT_TRUE(contains(r.error,
                         "wrote before the start of its view: 4 bytes changed outside the views the task "
                         "may write, as far as 8 bytes before the view's first byte"))
        << r.error;
    r = p.run(StagingMode::CHECKED, 12, /*tensor=*/0);
    ASSERT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error, "tensor 0 (host bytes at")) << r.error;
    EXPECT_TRUE(contains(r.error, "wrote into its view, which the task only reads (INPUT): 4 bytes changed"))
        << r.error;
    EXPECT_EQ(p.in, std::vector<float>(64, 1.0f));
    EXPECT_EQ(p.out, std::vector<float>(64, -1.0f));
}

TEST(CheckedStaging, AWriteIntoAStridedViewsGapsIsCaughtAndItsElementsAreNot) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
    std::vector<float> out(64, -1.0f);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(out.data(), 256, 1, {4, 4}, {16, 2}));  // rows of 4 every 16, every other element
    const TensorArgType tags[1] = {OUT};
    StagedArgs staged = stage_in(args, tags, device, StagingMode::CHECKED);
    const ChipTensor& d = staged.device_args().tensors[0];
    *device_byte(d, 0) = 1;           // element (0, 0)
    *device_byte(d, (16 + 2) * 4) = 1;  // element (1, 1)
    EXPECT_EQ(staged.violation(), "");
    *device_byte(d, (16 + 1) * 4 + 2) = 0;  // between elements (1, 0) and (1, 1)
    const std::string v = staged.violation();
    EXPECT_TRUE(contains(v, "tensor 0 (host bytes at")) << v;
    EXPECT_TRUE(contains(v,
                         "wrote between the elements of its strided view: 1 byte changed outside the views the "
                         "task may write, the first 70 bytes after the view's first byte"))
        << v;
}

TEST(CheckedStaging, AWriteBetweenTwoViewsOfOneBufferNamesTheViewItFollows) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
    std::vector<float> buf(128, 0.0f);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(buf.data(), 512, 10, {20}, {1}));
    args.add_tensor(view(buf.data(), 512, 40, {30}, {1}));
    const TensorArgType tags[2] = {INOUT, OUT};
    StagedArgs staged = stage_in(args, tags, device, StagingMode::CHECKED);
    EXPECT_EQ(staged.staged_backings(), 1u);
    const ChipTensor& d0 = staged.device_args().tensors[0];
    *device_byte(d0, 20 * 4 + 5) = 0x42;  // 6 bytes past tensor 0, 40 before tensor 1
    const std::string v = staged.violation([](int32_t i) { return "tensor " + std::to_string(i) + " (buffer X)"; });
    EXPECT_EQ(v,
              "tensor 0 (buffer X): wrote past the end of its view: 1 byte changed outside the views the task may "
              "write, as far as 6 bytes past the view's last byte");
}

TEST(CheckedStaging, ACleanRunCopiesBackWhatStagingDoes) {
    for (StagingMode mode : {StagingMode::STAGE, StagingMode::CHECKED}) {
        KernelRegistry kernels;
        SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
        std::vector<float> in(64), io(64);
        for (int i = 0; i < 64; ++i) in[i] = static_cast<float>(i), io[i] = static_cast<float>(100 + i);
        ChipStorageTaskArgs args{};
        args.add_tensor(view(in.data(), 256, 1, {4, 4}, {16, 2}));
        args.add_tensor(view(io.data(), 256, 8, {8}, {3}));
        const TensorArgType tags[2] = {IN, INOUT};
        {
            StagedArgs staged = stage_in(args, tags, device, mode);
            const ChipTensor& d = staged.device_args().tensors[1];
            auto* p = reinterpret_cast<float*>(d.buffer.addr);
            for (uint32_t i = 0; i < 8; ++i) p[d.start_offset + i * 3] += 0.5f;
            ASSERT_EQ(staged.violation(), "");
            staged.copy_back();
        }
        EXPECT_EQ(device.memory_stats().live_allocations, 0u);
        for (int i = 0; i < 64; ++i) {
            const bool in_view = i >= 8 && i < 8 + 8 * 3 && (i - 8) % 3 == 0;
            ASSERT_FLOAT_EQ(io[i], static_cast<float>(100 + i) + (in_view ? 0.5f : 0.0f)) << i;
            ASSERT_FLOAT_EQ(in[i], static_cast<float>(i)) << i;
        }
    }
}

TEST(CheckedStaging, GuardsSitOnBothSidesOfEveryStagedRange) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
    std::vector<float> buf(16);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(buf.data(), 64, 0, {16}, {1}));
    const TensorArgType tags[1] = {OUT};
    StagedArgs staged = stage_in(args, tags, device, StagingMode::CHECKED);
    const ChipTensor& d = staged.device_args().tensors[0];
    EXPECT_EQ(d.buffer.size, 64u) << "a view may not name the guards";
    EXPECT_TRUE(device.contains(d.buffer.addr - CHECKED_GUARD_BYTES, 64 + 2 * CHECKED_GUARD_BYTES));
    *device_byte(d, 64 + CHECKED_GUARD_BYTES - 1) ^= 0xFF;  // the guard's last byte
    EXPECT_TRUE(contains(staged.violation(), "as far as 4096 bytes past the view's last byte")) << staged.violation();
}

TEST(CheckedStaging, AnArenaTooSmallForTheGuardsOrTheSnapshotIsARuntimeErrorAndLeaksNothing) {
    std::vector<float> a(4096), b(4096);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(a.data(), a.size() * 4, 0, {4096}, {1}));
    args.add_tensor(view(b.data(), b.size() * 4, 0, {4096}, {1}));
    const TensorArgType tags[2] = {IN, OUT};
    // Staged: 2 x 16 KiB fit; checked: 2 x (16 + 8) KiB of blocks fit, the input's 16 KiB snapshot does not.
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 56 << 10}};
    { StagedArgs staged = stage_in(args, tags, device, StagingMode::STAGE); }
    EXPECT_THROW(stage_in(args, tags, device, StagingMode::CHECKED), std::runtime_error);
    EXPECT_EQ(device.memory_stats().live_allocations, 0u);
}
