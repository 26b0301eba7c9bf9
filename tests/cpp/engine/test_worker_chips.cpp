// Worker with simulated chips (no custom handler): forked chip children run the
// standard set on host views and on their own device memory; a device block is
// refused at submit once released and freed only after its last user; the
// parent cannot read device bytes; close() leaves no child.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>

#include "simpler/backing/fork_owner.h"
#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t N = 256;

Tensor vec(const BufferDescriptor& b) {
    const uint32_t shapes[] = {N};
    return make_tensor(b, shapes, DataType::FLOAT32);
}

TaskArgs args_of(std::initializer_list<std::pair<Tensor, TensorArgType>> l) {
    TaskArgs a;
    for (const auto& [t, tag] : l) a.add_tensor(t, tag);
    return a;
}

WorkerConfig chips(uint32_t n) {
    WorkerConfig c;
    c.num_chips = n;
    c.chip_lane.chip.arena_bytes = 1 << 22;
    c.chip_lane.chip.orchestrations = {"std.copy", "std.vector_add"};
    c.device_memory_bytes = 1 << 20;
    c.close_grace = 500ms;
    return c;
}

TaskId chip_task(Worker& w, uint64_t callable, const TaskArgs& a, uint32_t chip) {
    MemberSubmit m{&a, chip};
    return w.submit(TaskKind::NEXT_LEVEL, callable, {&m, 1}, TaskConfig{}).id;
}

}  // namespace

TEST(WorkerChips, HostAndDeviceArgumentsRoundTripThroughTheirChip) {
    auto a = ForkOwner::create_shared(N * 4), b = ForkOwner::create_shared(N * 4),
         out = ForkOwner::create_shared(N * 4);
    auto* fa = reinterpret_cast<float*>(a->data());
    auto* fb = reinterpret_cast<float*>(b->data());
    auto* fo = reinterpret_cast<float*>(out->data());
    for (uint32_t i = 0; i < N; ++i) fa[i] = float(i), fb[i] = 1.0f, fo[i] = 0.0f;
    Worker w(chips(2));
    w.init();
    const DeviceBacking d = w.alloc_device(1, N * 4);
    const DeviceBacking e = w.alloc_device(1, N * 4);
    chip_task(
        w, 0,
        args_of({{vec(a->descriptor()), TensorArgType::INPUT}, {vec(d.descriptor), TensorArgType::OUTPUT_EXISTING}}),
        1);
    chip_task(w, 1,
              args_of({{vec(d.descriptor), TensorArgType::INPUT},
                       {vec(b->descriptor()), TensorArgType::INPUT},
                       {vec(e.descriptor), TensorArgType::OUTPUT_EXISTING}}),
              1);
    chip_task(
        w, 0,
        args_of({{vec(e.descriptor), TensorArgType::INPUT}, {vec(out->descriptor()), TensorArgType::OUTPUT_EXISTING}}),
        1);
    w.release_device(d.descriptor.identity);
    w.release_device(e.descriptor.identity);
    w.wait();
    for (uint32_t i = 0; i < N; ++i) ASSERT_EQ(fo[i], float(i) + 1.0f) << i;
    EXPECT_EQ(w.device_memory().live_blocks(), 0u);
    // A released block is refused at submit, naming why.
    TaskArgs stale =
        args_of({{vec(a->descriptor()), TensorArgType::INPUT}, {vec(d.descriptor), TensorArgType::OUTPUT_EXISTING}});
    try {
        chip_task(w, 0, stale, 1);
        FAIL() << "a released device block must be refused";
    } catch (const std::invalid_argument& ex) {
        EXPECT_NE(std::string(ex.what()).find("buffer"), std::string::npos) << ex.what();
    }
    // Device memory of chip 1 does not go to chip 0.
    const DeviceBacking f = w.alloc_device(1, N * 4);
    TaskArgs wrong =
        args_of({{vec(a->descriptor()), TensorArgType::INPUT}, {vec(f.descriptor), TensorArgType::OUTPUT_EXISTING}});
    EXPECT_THROW(chip_task(w, 0, wrong, 0), std::invalid_argument);
    const auto pids = w.child_pids();
    w.close();
    for (pid_t p : pids) EXPECT_NE(kill(p, 0), 0) << "chip child " << p << " outlived close()";
}
