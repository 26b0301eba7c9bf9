// futex_wait / futex_wake on a word in MAP_SHARED memory: the value check, the
// absolute deadline, and a wake that crosses a fork.
#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <new>
#include <thread>

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
    EXPECT_GE(Clock::now() - start, 50ms);  // not before it (how long after is the scheduler's)
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

TEST(Futex, SignalDuringTheWaitDoesNotEndItEarly) {
    struct sigaction sa{};
    struct sigaction old{};
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the futex returns EINTR
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    SharedRegion region(64);
    auto* word = new (region.data()) uint32_t(0);
    FutexWaitResult result = FutexWaitResult::WOKEN;
    Clock::duration took{};
    std::thread waiter([&] {
        const auto start = Clock::now();
        result = futex_wait(word, 0, start + 200ms);
        took = Clock::now() - start;
    });
    std::this_thread::sleep_for(30ms);
    pthread_kill(waiter.native_handle(), SIGUSR1);
    std::this_thread::sleep_for(30ms);
    pthread_kill(waiter.native_handle(), SIGUSR1);
    waiter.join();
    sigaction(SIGUSR1, &old, nullptr);
    EXPECT_EQ(result, FutexWaitResult::TIMED_OUT);
    EXPECT_GE(took, 200ms);
}
