// ChipLane::forget, in process: a backing a task materialized is in the chip's
// import cache; after a forget it is not, a later task naming that generation
// is refused (BAD_ARGUMENTS naming the release) and the lane keeps serving; the
// forget handler of make_chip_lane_child does the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "simpler/backing/posix_shm_owner.h"
#include "simpler/engine/chip_lane.h"
#include "simpler/engine/device_memory.h"
#include "simpler/engine/task_config.h"
#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

namespace {

constexpr uint32_t N = 16;

ChipLaneConfig lane_config(DeviceMemory& memory) {
    ChipLaneConfig c;
    c.chip.arena_bytes = 1 << 22;
    c.chip.orchestrations = {"std.copy"};
    c.device_memory = &memory;
    return c;
}

ipc::TaskView copy_task(const Tensor& src, const Tensor& dst, std::vector<std::byte>& blob) {
    TaskArgs a;
    a.add_tensor(src, TensorArgType::INPUT);
    a.add_tensor(dst, TensorArgType::OUTPUT_EXISTING);
    CallConfig config{};
    set_write_mask(config, a.tags());
    blob = encode_blob(a);
    ipc::TaskView task;
    task.callable_id = 0;
    std::memcpy(task.config.bytes, &config, sizeof config);
    task.blob = blob;
    return task;
}

Tensor vec(const PosixShmOwner& o) {
    const uint32_t shapes[] = {N};
    return make_tensor(o.descriptor(), shapes, DataType::FLOAT32);
}

bool holds(const ChipLane& lane, const CanonicalIdentity& id) {
    const std::vector<CanonicalIdentity> ids = lane.registry().identities();
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

TEST(ChipLaneForget, AForgottenBackingLeavesTheCacheAndALateDescriptorIsRefused) {
    DeviceMemory memory(1, 1 << 20);
    ChipLane lane(0, lane_config(memory));
    auto a = PosixShmOwner::create(N * sizeof(float));
    auto b = PosixShmOwner::create(N * sizeof(float));
    auto c = PosixShmOwner::create(N * sizeof(float));
    std::vector<std::byte> blob;
    ASSERT_EQ(lane.run(copy_task(vec(*a), vec(*b), blob)).error, ipc::TaskError::NONE);
    ASSERT_TRUE(holds(lane, a->identity()));
    ASSERT_TRUE(holds(lane, b->identity()));

    const CanonicalIdentity gone = a->identity();
    lane.forget({&gone, 1});
    EXPECT_FALSE(holds(lane, gone));
    EXPECT_TRUE(holds(lane, b->identity()));

    const ipc::TaskOutcome late = lane.run(copy_task(vec(*a), vec(*b), blob));
    EXPECT_EQ(late.error, ipc::TaskError::BAD_ARGUMENTS);
    EXPECT_NE(late.message.find("was released"), std::string::npos) << late.message;
    EXPECT_EQ(lane.run(copy_task(vec(*c), vec(*b), blob)).error, ipc::TaskError::NONE);  // still serving
}

TEST(ChipLaneForget, TheChildHandlersForgetInTheLanesCache) {
    DeviceMemory memory(1, 1 << 20);
    const ChildHandlers h = make_chip_lane_child(0, lane_config(memory));
    ASSERT_TRUE(static_cast<bool>(h.forget));
    auto a = PosixShmOwner::create(N * sizeof(float));
    auto b = PosixShmOwner::create(N * sizeof(float));
    std::vector<std::byte> blob;
    ASSERT_EQ(h.run(copy_task(vec(*a), vec(*b), blob)).error, ipc::TaskError::NONE);
    const CanonicalIdentity gone = a->identity();
    h.forget({&gone, 1});
    const ipc::TaskOutcome late = h.run(copy_task(vec(*a), vec(*b), blob));
    EXPECT_EQ(late.error, ipc::TaskError::BAD_ARGUMENTS);
    EXPECT_NE(late.message.find("was released"), std::string::npos) << late.message;
}
