// ChipLane with window heaps: a window buffer of any domain the chip is a
// member of resolves in place (a peer's window too: the bytes land there); a
// chip outside the domain refuses it (WINDOW_NOT_MEMBER), a range in no window
// too (WINDOW_OUTSIDE), each as BAD_ARGUMENTS naming the chip; the lane keeps
// serving.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "simpler/backing/fork_owner.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/engine/chip_lane.h"
#include "simpler/engine/device_memory.h"
#include "simpler/engine/task_config.h"
#include "simpler/engine/window_memory.h"
#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

namespace {

constexpr uint32_t N = 64;

struct WindowLane {
    explicit WindowLane(uint32_t index) : device(3, 1 << 20), windows(3, 1 << 20) {
        ChipLaneConfig c;
        c.chip.arena_bytes = 1 << 22;
        c.chip.orchestrations = {"std.copy", "std.noop"};
        c.device_memory = &device;
        c.window_memory = &windows;
        lane = std::make_unique<ChipLane>(index, c);
    }
    ipc::TaskOutcome copy(const Tensor& src, const Tensor& dst) {
        TaskArgs args;
        args.add_tensor(src, TensorArgType::INPUT);
        args.add_tensor(dst, TensorArgType::OUTPUT_EXISTING);
        CallConfig config{};
        set_write_mask(config, args.tags());
        blob = encode_blob(args);
        ipc::TaskView task;
        task.callable_id = 0;
        std::memcpy(task.config.bytes, &config, sizeof config);
        task.blob = blob;
        return lane->run(task);
    }
    ipc::TaskOutcome noop() {
        blob = encode_blob(TaskArgs{});
        ipc::TaskView task;
        task.callable_id = 1;
        task.blob = blob;
        return lane->run(task);
    }
    DeviceMemory device;
    WindowMemory windows;
    std::unique_ptr<ChipLane> lane;
    std::vector<std::byte> blob;
};

Tensor vector_of(const BufferDescriptor& d) {
    const uint32_t shapes[] = {N};
    return make_tensor(d, shapes, DataType::FLOAT32);
}

}  // namespace

TEST(ChipLaneWindows, AMemberResolvesAPeersWindowInPlaceAndAnOutsiderIsRefused) {
    WindowLane on0(0);
    auto host = ForkOwner::create_shared(N * sizeof(float));
    float* h = reinterpret_cast<float*>(host->data());
    std::fill(h, h + N, 4.5f);
    const WindowDomain tp = on0.windows.allocate("tp", {0, 1}, 4096, {{"x", N * sizeof(float)}});
    const BufferDescriptor& x1 = tp.buffers[1][0].descriptor;  // chip 1's window: a peer's
    ipc::TaskOutcome r = on0.copy(vector_of(host->descriptor()), vector_of(x1));
    ASSERT_EQ(r.error, ipc::TaskError::NONE) << r.message;
    EXPECT_EQ(reinterpret_cast<const float*>(descriptor_address(x1))[N - 1], 4.5f);

    const WindowDomain other = on0.windows.allocate("dp", {1, 2}, 4096, {{"y", N * sizeof(float)}});
    r = on0.copy(vector_of(host->descriptor()), vector_of(other.buffers[0][0].descriptor));
    EXPECT_EQ(r.error, ipc::TaskError::BAD_ARGUMENTS);
    EXPECT_NE(r.message.find("argument refused on chip 0"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("lies in a window of a domain chip 0 is not a member of"), std::string::npos) << r.message;

    const BufferDescriptor nowhere = make_address_descriptor(process_identity_minter().mint(), BackendKind::VMM_WINDOW,
                                                             AccessMode::READWRITE, N * sizeof(float), 0x10000);
    r = on0.copy(vector_of(host->descriptor()), vector_of(nowhere));
    EXPECT_EQ(r.error, ipc::TaskError::BAD_ARGUMENTS);
    EXPECT_NE(r.message.find("lies outside every window chip 0 can see"), std::string::npos) << r.message;

    EXPECT_EQ(on0.noop().error, ipc::TaskError::NONE);
    on0.windows.release_all();
}
