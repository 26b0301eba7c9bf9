// futex_wait / futex_wake on a word in MAP_SHARED memory: the value check, the
// absolute deadline, and a wake that crosses a fork.
#include <gtest/gtest.h>

#include <atomic>
#include <new>

#include "ipc_fixtures.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/futex.h"
#include "simpler/ipc/shared_region.h"

using namespace simpler::ipc;
using namespace ipc_test;

TEST(Futex, WaitReturnsAtOnceWhenTheValueDiffers) {
    SharedRegion region(64);
    auto* word = new (region.data()) uint32_t(5);
    EXPECT_EQ(futex_wait(word, 4, after(1000ms)), FutexWaitResult::VALUE_CHANGED);
}

TEST(Futex, WaitEndsAtItsDeadline) {
    SharedRegion region(64);
    auto* word = new (region.data()) uint32_t(0);
    const auto start = Clock::now();
    EXPECT_EQ(futex_wait(word, 0, start + 50ms), FutexWaitResult::TIMED_OUT);
    const auto took = Clock::now() - start;
    EXPECT_GE(took, 50ms);
    EXPECT_LT(took, 2000ms);
}

TEST(Futex, PastDeadlineDoesNotSleep) {
    SharedRegion region(64);
    auto* word = new (region.data()) uint32_t(0);
    EXPECT_EQ(futex_wait(word, 0, Clock::now() - 1ms), FutexWaitResult::TIMED_OUT);
}

TEST(Futex, WakeReachesASleeperInAnotherProcess) {
    SharedRegion region(64);
    auto* word = new (region.data()) uint32_t(0);
    ChildProcess child = ChildProcess::spawn([word] {
        const auto deadline = after(10'000ms);
        while (std::atomic_ref<uint32_t>(*word).load() == 0) {
            if (futex_wait(word, 0, deadline) == FutexWaitResult::TIMED_OUT) return 1;
        }
        return 0;
    });
    std::this_thread::sleep_for(20ms);
    std::atomic_ref<uint32_t>(*word).store(1);
    futex_wake(word, INT32_MAX);
    const auto status = child.wait_exit(after(10'000ms));
    ASSERT_TRUE(status.has_value());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describe_wait_status(*status);
}
