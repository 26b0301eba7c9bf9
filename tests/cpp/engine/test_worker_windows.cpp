// Worker's domains (worker_windows.cpp): a level-4 Worker refuses a global
// domain a member on a next-level child whose chips drive a device other than
// the simulated one, naming the member, the child and the device — in C++, so
// a host program gets the refusal Python's Worker gives — and carves one whose
// members are all on simulated children.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "simpler/engine/worker.h"

namespace simpler {
namespace {

using namespace std::chrono_literals;

// A level-4 Worker over two next-level children of one chip each (children that
// answer every task OK), L3[1]'s chips driving `second`.
WorkerConfig two_children(chip::DeviceKind second) {
    WorkerConfig c;
    c.level = 4;
    c.num_workers = 2;
    c.worker_callable_names = {"orch"};
    c.close_grace = 2s;
    c.global_window_chips = {1, 1};
    c.global_window_child_names = {"L3[0]", "L3[1]"};
    c.global_window_devices = {chip::DeviceKind::SIMULATED, second};
    c.worker_handler = [](uint32_t) -> ChildHandlers {
        return [](const ipc::TaskView&) { return ipc::TaskOutcome{}; };
    };
    return c;
}

TEST(WorkerWindows, AGlobalDomainIsRefusedAMemberOnAChildWhoseChipsDriveADevice) {
    Worker w(two_children(chip::DeviceKind::OPENCL));
    w.init();
    try {
        (void)w.allocate_global_domain("tp", {0, 1}, 4096, {});
        ADD_FAILURE() << "a member on L3[1] was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(),
                     "allocate_global_domain 'tp': members[1]: L3[1]'s chips drive opencl devices, whose kernels reach "
                     "only their own device memory, and a domain's windows are host shared memory; communication "
                     "domains need simulated chips (device=\"simulated\")");
    }
    // Members on the simulated child alone are carved.
    EXPECT_EQ(w.allocate_global_domain("dp", {0}, 4096, {}).bases.size(), 1U);
    w.close();
}

TEST(WorkerWindows, ADeviceKindPerChildOrNoneIsRequired) {
    WorkerConfig c = two_children(chip::DeviceKind::SIMULATED);
    c.global_window_devices = {chip::DeviceKind::SIMULATED};
    EXPECT_THROW(Worker{c}, std::invalid_argument);
    c.global_window_devices.clear();  // none: every child simulated
    Worker w(c);
    w.init();
    EXPECT_EQ(w.allocate_global_domain("tp", {0, 1}, 4096, {}).bases.size(), 2U);
    w.close();
}

}  // namespace
}  // namespace simpler
