// DeviceMemory: one heap per chip at disjoint addresses; alloc wraps a block in
// a DEVICE_MALLOC descriptor owned by that chip; a release refuses the identity
// at once and frees only at finish; exhaustion names the chip; the parent
// cannot touch device bytes once sealed.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <stdexcept>

#include "simpler/backing/identity_minter.h"
#include "simpler/engine/device_memory.h"

using namespace simpler;

TEST(DeviceMemory, AllocReturnsADeviceDescriptorOwnedByItsChipInsideThatChipsHeap) {
    DeviceMemory m(2, 1 << 20);
    const DeviceBacking b = m.alloc(1, 4096);
    EXPECT_EQ(b.descriptor.backend_kind, static_cast<uint8_t>(BackendKind::DEVICE_MALLOC));
    EXPECT_EQ(b.descriptor.address_space, static_cast<uint8_t>(AddressSpace::DEVICE));
    EXPECT_EQ(b.descriptor.nbytes, 4096u);
    EXPECT_EQ(m.owner_of(b.descriptor.identity), 1u);
    EXPECT_EQ(m.chip_of_range(descriptor_address(b.descriptor), 4096), 1u);
    EXPECT_FALSE(m.chip_of_range(descriptor_address(b.descriptor), 2u << 20).has_value());
    EXPECT_FALSE(m.chip_of_range(0x1000, 16).has_value());
    EXPECT_EQ(m.live_blocks(), 1u);
}

TEST(DeviceMemory, ABadChipOrSizeIsRefusedAndChangesNothing) {
    DeviceMemory m(2, 1 << 20);
    EXPECT_THROW(m.alloc(2, 64), std::invalid_argument);
    EXPECT_THROW(m.alloc(0, 0), std::invalid_argument);
    EXPECT_EQ(m.live_blocks(), 0u);
}

TEST(DeviceMemory, ExhaustionNamesTheChipAndItsUse) {
    DeviceMemory m(1, 1 << 16);
    (void)m.alloc(0, 1 << 15);
    try {
        (void)m.alloc(0, 1 << 16);
        FAIL() << "expected exhaustion";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("chip 0 has no free block of 65536 bytes"), std::string::npos) << e.what();
    }
}

TEST(DeviceMemory, AReleaseRefusesTheIdentityAtOnceAndFreesOnlyAtFinish) {
    DeviceMemory m(1, 1 << 20);
    const DeviceBacking b = m.alloc(0, 1 << 19);
    const CanonicalIdentity id = b.descriptor.identity;
    EXPECT_TRUE(m.identity_problem(id).empty());
    m.begin_release(id);
    EXPECT_NE(m.identity_problem(id).find("was released"), std::string::npos);
    EXPECT_EQ(m.stats(0).live_allocations, 1u);  // a running task may still use it
    EXPECT_THROW(m.begin_release(id), std::invalid_argument);
    m.finish_release(id);
    EXPECT_EQ(m.stats(0).live_allocations, 0u);
    EXPECT_FALSE(m.owner_of(id).has_value());
    EXPECT_FALSE(process_identity_minter().check_live(id).live());
    EXPECT_THROW(m.begin_release(id), std::invalid_argument);
}

TEST(DeviceMemory, ReleaseAllFreesEveryBlockAndIdentity) {
    DeviceMemory m(2, 1 << 20);
    const DeviceBacking a = m.alloc(0, 64), b = m.alloc(1, 64);
    m.release_all();
    EXPECT_EQ(m.live_blocks(), 0u);
    EXPECT_FALSE(process_identity_minter().check_live(a.descriptor.identity).live());
    EXPECT_FALSE(process_identity_minter().check_live(b.descriptor.identity).live());
}

namespace {
constexpr int FAULTED = 42;
void on_fault(int) { _exit(FAULTED); }
}  // namespace

TEST(DeviceMemory, ASealedParentCannotTouchDeviceBytesButTheOwningChipCan) {
    DeviceMemory m(2, 1 << 20);
    const DeviceBacking b = m.alloc(0, 64);
    auto* p = reinterpret_cast<volatile uint8_t*>(descriptor_address(b.descriptor));
    auto touch_in_child = [&](auto prepare) {
        const pid_t pid = fork();
        if (pid == 0) {
            struct sigaction sa{};
            sa.sa_handler = on_fault;
            sigaction(SIGSEGV, &sa, nullptr);
            prepare();
            p[0] = 7;
            _exit(p[0] == 7 ? 0 : 1);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        return status;
    };
    const int chip0 = touch_in_child([&] { m.enter_chip(0); });
    EXPECT_TRUE(WIFEXITED(chip0) && WEXITSTATUS(chip0) == 0);
    const int chip1 = touch_in_child([&] { m.enter_chip(1); });
    EXPECT_TRUE(WIFEXITED(chip1) && WEXITSTATUS(chip1) == FAULTED);
    const int parent = touch_in_child([&] { m.seal_in_parent(); });
    EXPECT_TRUE(WIFEXITED(parent) && WEXITSTATUS(parent) == FAULTED);
    m.release_all();
}
