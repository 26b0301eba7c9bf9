// ChildProcess: exit statuses, the child never returning into the test, the
// destructor reaping, and a parent's death taking its child with it.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "ipc_fixtures.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/shared_region.h"

using namespace simpler::ipc;
using namespace ipc_test;

TEST(ChildProcess, ReturnValueOfTheBodyIsTheExitStatus) {
    ChildProcess child = ChildProcess::spawn([] { return 42; });
    const auto st = child.wait_exit(after(10'000ms));
    ASSERT_TRUE(st.has_value());
    EXPECT_TRUE(WIFEXITED(*st));
    EXPECT_EQ(WEXITSTATUS(*st), 42);
    EXPECT_TRUE(child.reaped());
    EXPECT_EQ(describe_wait_status(*st), "exited with status 42");
}

TEST(ChildProcess, ThrowingBodyExitsWithTheExceptionStatus) {
    ChildProcess child = ChildProcess::spawn([]() -> int { throw std::runtime_error("boom in child"); });
    const auto st = child.wait_exit(after(10'000ms));
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(WEXITSTATUS(*st), CHILD_EXCEPTION_STATUS);
}

TEST(ChildProcess, WaitExitHonoursItsDeadlineAndStopKills) {
    ChildProcess child = ChildProcess::spawn([] {
        for (;;) ::pause();
        return 0;
    });
    const auto start = Clock::now();
    EXPECT_EQ(child.wait_exit(start + 50ms), std::nullopt);
    EXPECT_GE(Clock::now() - start, 50ms);
    EXPECT_FALSE(child.reaped());
    const int st = child.stop(after(10ms));
    EXPECT_TRUE(WIFSIGNALED(st));
    EXPECT_EQ(WTERMSIG(st), SIGKILL);
    EXPECT_EQ(describe_wait_status(st).rfind("killed by signal 9", 0), 0u);
    EXPECT_FALSE(child.signal(SIGTERM));  // reaped: nothing left to signal
}

TEST(ChildProcess, DestructorKillsAndReapsALiveChild) {
    pid_t pid = -1;
    {
        ChildProcess child = ChildProcess::spawn([] {
            for (;;) ::pause();
            return 0;
        });
        pid = child.pid();
        ASSERT_GT(pid, 0);
    }
    // Reaped: the pid is no child of ours any more.
    EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

TEST(ChildProcess, MoveTransfersOwnership) {
    ChildProcess a = ChildProcess::spawn([] { return 3; });
    const pid_t pid = a.pid();
    ChildProcess b = std::move(a);
    EXPECT_EQ(a.pid(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is what is checked
    EXPECT_EQ(b.pid(), pid);
    const auto st = b.wait_exit(after(10'000ms));
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(WEXITSTATUS(*st), 3);
}

namespace {

// The grandchild's pid and whether it reached its body.
struct Handoff {
    pid_t grandchild;
    uint32_t running;
};

// The state letter of /proc/PID/stat ('T': stopped), or '?' when it cannot be read.
char process_state(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

// Forks a middle process that forks a grandchild and dies without reaping it,
// after the grandchild reached its body when `wait_for_grandchild`. Returns
// the grandchild's wait status (it is reparented here: the test process is a
// child subreaper for the duration), or nullopt when it outlived 10 s.
std::optional<int> orphan_a_grandchild(bool wait_for_grandchild, bool stop_grandchild = false) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    SharedRegion region(64);
    auto* h = new (region.data()) Handoff{0, 0};
    ChildProcess middle = ChildProcess::spawn([h, wait_for_grandchild, stop_grandchild] {
        ChildProcess grandchild = ChildProcess::spawn([h, stop_grandchild] {
            std::atomic_ref<uint32_t>(h->running).store(1);
            if (stop_grandchild) raise(SIGSTOP);
            for (;;) ::pause();
            return 0;
        });
        std::atomic_ref<pid_t>(h->grandchild).store(grandchild.pid());
        const auto deadline = after(10'000ms);
        while (wait_for_grandchild && std::atomic_ref<uint32_t>(h->running).load() == 0 && Clock::now() < deadline) {
            std::this_thread::sleep_for(1ms);
        }
        while (stop_grandchild && process_state(grandchild.pid()) != 'T' && Clock::now() < deadline)
            std::this_thread::sleep_for(1ms);
        _exit(0);  // dies without running the grandchild's destructor
        return 0;
    });
    middle.wait_exit(after(10'000ms));
    const pid_t gc = std::atomic_ref<pid_t>(h->grandchild).load();
    std::optional<int> result;
    const auto deadline = after(10'000ms);
    while (gc > 0 && Clock::now() < deadline) {
        int status = 0;
        if (waitpid(gc, &status, WNOHANG) == gc) {
            result = status;
            break;
        }
        std::this_thread::sleep_for(2ms);
    }
    if (!result && gc > 0) {
        kill(gc, SIGKILL);
        waitpid(gc, nullptr, 0);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    return result;
}

}  // namespace

TEST(ChildProcess, ParentDeathKillsTheChild) {
    const auto st = orphan_a_grandchild(true);
    ASSERT_TRUE(st.has_value()) << "grandchild outlived its parent by 10 s";
    EXPECT_TRUE(WIFSIGNALED(*st)) << describe_wait_status(*st);
    EXPECT_EQ(WTERMSIG(*st), SIGKILL);
}

// A stopped child runs no thread, so its owner watch cannot kill it: it was
// left stopped (parented to init) for as long as nobody continued it.
TEST(ChildProcess, ParentDeathKillsAStoppedChild) {
    const auto st = orphan_a_grandchild(true, true);
    ASSERT_TRUE(st.has_value()) << "the stopped grandchild outlived its parent by 10 s";
    EXPECT_TRUE(WIFSIGNALED(*st)) << describe_wait_status(*st);
    EXPECT_EQ(WTERMSIG(*st), SIGKILL);
}

// The owner dies before the child even started: the child still dies (it
// watches a pidfd of its owner that the owner opened before the fork).
TEST(ChildProcess, ChildWhoseOwnerDiedBeforeItStartedDiesAnyway) {
    for (int i = 0; i < 20; ++i) {
        const auto st = orphan_a_grandchild(false);
        ASSERT_TRUE(st.has_value()) << "grandchild outlived its parent by 10 s";
        EXPECT_TRUE(WIFSIGNALED(*st) && WTERMSIG(*st) == SIGKILL) << describe_wait_status(*st);
    }
}

namespace {

bool task_present(pid_t tid) { return access(("/proc/self/task/" + std::to_string(tid)).c_str(), F_OK) == 0; }

}  // namespace

// A child forked by a thread that then exits lives on: it dies with its owner
// process, not with the thread that forked it.
TEST(ChildProcess, ChildOutlivesTheThreadThatForkedIt) {
    SharedRegion region(64);
    auto* go = new (region.data()) uint32_t[2]{0, 0};  // [0] the child runs its body, [1] the forker is gone
    ChildProcess child;
    pid_t forker = -1;
    std::thread t([&] {
        forker = gettid();
        child = ChildProcess::spawn([go] {
            std::atomic_ref<uint32_t>(go[0]).store(1);
            const auto deadline = after(10'000ms);
            while (std::atomic_ref<uint32_t>(go[1]).load() == 0 && Clock::now() < deadline)
                std::this_thread::sleep_for(1ms);
            return std::atomic_ref<uint32_t>(go[1]).load() == 1 ? 7 : 8;
        });
        // The thread exits only once the child is fully set up.
        const auto deadline = after(10'000ms);
        while (std::atomic_ref<uint32_t>(go[0]).load() == 0 && Clock::now() < deadline)
            std::this_thread::sleep_for(1ms);
    });
    t.join();
    // The forking thread is gone from the kernel's view (its exit is complete).
    const auto deadline = after(10'000ms);
    while (task_present(forker) && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
    ASSERT_FALSE(task_present(forker));
    std::atomic_ref<uint32_t>(go[1]).store(1);
    const auto st = child.wait_exit(after(10'000ms));
    ASSERT_TRUE(st.has_value());
    EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 7) << describe_wait_status(*st);
}
