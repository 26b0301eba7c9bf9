// ChipLane, in process: a task's blob is decoded, materialized on this chip's
// endpoint and run by name id; the write mask decides what a staged run copies
// back; zero-copy runs in place; a checked run (which wins over zero-copy)
// fails on a write the mask does not allow, naming the buffer; DEVICE memory resolves only on its own chip;
// every refusal is data (BAD_ARGUMENTS / UNKNOWN_CALLABLE / TASK_FAILED) and the
// lane keeps serving.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "simpler/backing/fork_owner.h"
#include "simpler/backing/grant_fault.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/engine/chip_lane.h"
#include "simpler/engine/device_memory.h"
#include "simpler/engine/task_config.h"
#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

namespace {

constexpr uint32_t N = 64;

struct Lane {
    explicit Lane(uint32_t index = 0, std::vector<std::string> names = {"std.vector_add", "std.copy", "std.noop"})
        : memory(2, 1 << 20) {
        ChipLaneConfig c;
        c.chip.arena_bytes = 1 << 22;
        c.chip.orchestrations = std::move(names);
        c.device_memory = &memory;
        lane = std::make_unique<ChipLane>(index, c);
    }
    ipc::TaskOutcome run(uint64_t callable, const TaskArgs& args, bool zero_copy = false, bool checked = false) {
        CallConfig config{};
        config.zero_copy = zero_copy ? 1 : 0;
        config.checked = checked ? 1 : 0;
        set_write_mask(config, args.tags());
        blob = encode_blob(args);
        ipc::TaskView task;
        task.callable_id = callable;
        std::memcpy(task.config.bytes, &config, sizeof config);
        task.blob = blob;
        return lane->run(task);
    }
    DeviceMemory memory;
    std::unique_ptr<ChipLane> lane;
    std::vector<std::byte> blob;
};

struct HostVector {
    HostVector() : owner(ForkOwner::create_shared(N * sizeof(float))) {}
    float* data() const { return reinterpret_cast<float*>(owner->data()); }
    Tensor tensor() const {
        const uint32_t shapes[] = {N};
        return make_tensor(owner->descriptor(), shapes, DataType::FLOAT32);
    }
    std::unique_ptr<ForkOwner> owner;
};

TaskArgs args_of(std::initializer_list<std::pair<Tensor, TensorArgType>> l) {
    TaskArgs a;
    for (const auto& [t, tag] : l) a.add_tensor(t, tag);
    return a;
}

Tensor device_vector(const DeviceBacking& b) {
    const uint32_t shapes[] = {N};
    return make_tensor(b.descriptor, shapes, DataType::FLOAT32);
}

}  // namespace

TEST(ChipLane, RunsTheNamedOrchestrationOnMaterializedHostViews) {
    Lane lane;
    HostVector a, b, c;
    for (uint32_t i = 0; i < N; ++i) a.data()[i] = float(i), b.data()[i] = 2.0f, c.data()[i] = -1.0f;
    for (bool zero_copy : {false, true}) {
        const ipc::TaskOutcome r = lane.run(0,
                                            args_of({{a.tensor(), TensorArgType::INPUT},
                                                     {b.tensor(), TensorArgType::INPUT},
                                                     {c.tensor(), TensorArgType::OUTPUT_EXISTING}}),
                                            zero_copy);
        ASSERT_EQ(r.error, ipc::TaskError::NONE) << r.message;
        for (uint32_t i = 0; i < N; ++i) ASSERT_EQ(c.data()[i], float(i) + 2.0f) << i;
        std::fill(c.data(), c.data() + N, -1.0f);
    }
    EXPECT_EQ(lane.lane->registry().size(), 3u);  // each backing imported once
}

TEST(ChipLane, AStagedRunCopiesBackOnlyWhatTheMaskSaysIsWritten) {
    Lane lane;
    HostVector src, dst;
    std::fill(src.data(), src.data() + N, 5.0f);
    std::fill(dst.data(), dst.data() + N, 0.0f);
    // std.copy writes its second argument; tagged INPUT here, the mask says "not written".
    TaskArgs mislabelled = args_of({{src.tensor(), TensorArgType::INPUT}, {dst.tensor(), TensorArgType::INPUT}});
    ASSERT_EQ(lane.run(1, mislabelled).error, ipc::TaskError::NONE);
    EXPECT_EQ(dst.data()[0], 0.0f);  // staged: the device copy was written, the host view was not
}

void report_to_stderr(const char* message, size_t length) noexcept { (void)!write(2, message, length); }

TEST(ChipLaneDeathTest, AZeroCopyKernelWritingAnInputViewFaultsNamingTheBufferAndLandsNothing) {
    HostVector src, dst;
    std::fill(src.data(), src.data() + N, 5.0f);
    std::fill(dst.data(), dst.data() + N, 0.0f);
    // std.copy writes its second argument; tagged INPUT, the chip maps it read-only.
    TaskArgs mislabelled = args_of({{src.tensor(), TensorArgType::INPUT}, {dst.tensor(), TensorArgType::INPUT}});
    const std::string who = "write to read-only bytes of buffer " + dst.owner->identity().to_string() +
                            " \\(FORK_SHM, grants READWRITE; an INPUT argument is mapped read-only\\)";
    EXPECT_EXIT(
        {
            install_grant_fault_handler(&report_to_stderr, "chip 0");
            Lane child;  // its core threads must live in the dying process
            (void)child.run(1, mislabelled, /*zero_copy=*/true);
        },
        ::testing::ExitedWithCode(GRANT_FAULT_EXIT_STATUS), who + " at byte offset [0-9]+; chip 0 was ended");
    EXPECT_EQ(dst.data()[0], 0.0f);  // the region is shared with the dead child: nothing landed
    // OUTPUT_EXISTING: the same run writes in place.
    Lane lane;
    TaskArgs labelled = args_of({{src.tensor(), TensorArgType::INPUT}, {dst.tensor(), TensorArgType::OUTPUT_EXISTING}});
    ASSERT_EQ(lane.run(1, labelled, /*zero_copy=*/true).error, ipc::TaskError::NONE);
    EXPECT_EQ(dst.data()[0], 5.0f);
}

TEST(ChipLane, ACheckedRunFailsOnAWriteTheMaskDoesNotAllowNamingTheBuffer) {
    Lane lane;
    HostVector src, dst;
    std::fill(src.data(), src.data() + N, 5.0f);
    std::fill(dst.data(), dst.data() + N, 0.0f);
    TaskArgs mislabelled = args_of({{src.tensor(), TensorArgType::INPUT}, {dst.tensor(), TensorArgType::INPUT}});
    const ipc::TaskOutcome r = lane.run(1, mislabelled, /*zero_copy=*/true, /*checked=*/true);
    ASSERT_EQ(r.error, ipc::TaskError::TASK_FAILED);
    const std::string expected = "checked run of 'std.copy': tensor 1 (buffer " +
                                 dst.owner->descriptor().identity.to_string() +
                                 "): wrote into its view, which the task only reads (INPUT)";
    EXPECT_NE(r.message.find(expected), std::string::npos) << r.message;
    EXPECT_EQ(dst.data()[0], 0.0f);  // checked wins over zero-copy: the host view was not written

    // Tagged as written, the same run succeeds and copies the view back.
    TaskArgs labelled = args_of({{src.tensor(), TensorArgType::INPUT}, {dst.tensor(), TensorArgType::OUTPUT_EXISTING}});
    ASSERT_EQ(lane.run(1, labelled, false, /*checked=*/true).error, ipc::TaskError::NONE);
    EXPECT_EQ(dst.data()[N - 1], 5.0f);
}

TEST(ChipLane, DeviceMemoryResolvesOnItsOwnChipOnly) {
    Lane lane(0);
    HostVector host;
    std::fill(host.data(), host.data() + N, 3.0f);
    const DeviceBacking mine = lane.memory.alloc(0, N * sizeof(float));
    const DeviceBacking theirs = lane.memory.alloc(1, N * sizeof(float));
    ipc::TaskOutcome r = lane.run(
        1, args_of({{host.tensor(), TensorArgType::INPUT}, {device_vector(mine), TensorArgType::OUTPUT_EXISTING}}));
    ASSERT_EQ(r.error, ipc::TaskError::NONE) << r.message;
    EXPECT_EQ(reinterpret_cast<const float*>(descriptor_address(mine.descriptor))[N - 1], 3.0f);

    r = lane.run(
        1, args_of({{host.tensor(), TensorArgType::INPUT}, {device_vector(theirs), TensorArgType::OUTPUT_EXISTING}}));
    EXPECT_EQ(r.error, ipc::TaskError::BAD_ARGUMENTS);
    EXPECT_NE(r.message.find("chip 1"), std::string::npos) << r.message;

    const BufferDescriptor nowhere =
        make_address_descriptor(process_identity_minter().mint(), BackendKind::DEVICE_MALLOC, AccessMode::READWRITE,
                                N * sizeof(float), 0x10000);
    const uint32_t shapes[] = {N};
    r = lane.run(1, args_of({{host.tensor(), TensorArgType::INPUT},
                             {make_tensor(nowhere, shapes, DataType::FLOAT32), TensorArgType::OUTPUT_EXISTING}}));
    EXPECT_EQ(r.error, ipc::TaskError::BAD_ARGUMENTS);
    EXPECT_NE(r.message.find("DEVICE"), std::string::npos) << r.message;

    // The lane still serves after every refusal.
    EXPECT_EQ(lane.run(2, TaskArgs{}).error, ipc::TaskError::NONE);
    lane.memory.release_all();
}

TEST(ChipLane, RefusalsAreDataAndTheLaneKeepsServing) {
    Lane lane;
    EXPECT_EQ(lane.run(9, TaskArgs{}).error, ipc::TaskError::UNKNOWN_CALLABLE);

    ipc::TaskView truncated;
    truncated.callable_id = 2;
    const std::byte short_blob[4] = {};
    truncated.blob = short_blob;
    EXPECT_EQ(lane.lane->run(truncated).error, ipc::TaskError::BAD_ARGUMENTS);

    HostVector a;
    const ipc::TaskOutcome wrong_count = lane.run(0, args_of({{a.tensor(), TensorArgType::INPUT}}));
    EXPECT_EQ(wrong_count.error, ipc::TaskError::TASK_FAILED);
    EXPECT_NE(wrong_count.message.find("std.vector_add"), std::string::npos) << wrong_count.message;

    EXPECT_EQ(lane.run(2, TaskArgs{}).error, ipc::TaskError::NONE);
}

TEST(ChipLane, AChipThatCannotStartFailsEveryTaskWithTheReason) {
    DeviceMemory memory(1, 1 << 20);
    ChipLaneConfig c;
    c.chip.arena_bytes = 1 << 20;
    c.chip.orchestrations = {"no.such"};
    c.device_memory = &memory;
    ipc::TaskHandler h = make_chip_lane_handler(0, c);
    const std::vector<std::byte> blob = encode_blob(TaskArgs{});
    ipc::TaskView task;
    task.blob = blob;
    const ipc::TaskOutcome r = h(task);
    EXPECT_EQ(r.error, ipc::TaskError::TASK_FAILED);
    EXPECT_NE(r.message.find("chip 0 could not start"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("no.such"), std::string::npos) << r.message;
}
