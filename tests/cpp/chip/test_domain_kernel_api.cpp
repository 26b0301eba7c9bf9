// domain_kernel_api.h: DomainContext read from a kernel's scalars and
// peer_address, and window_notify / window_add / window_wait between two
// threads, and between two processes, over MAP_SHARED memory (as the window
// heaps are). A rendezvous, never a timing, proves the waits.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "simpler/chip/domain_kernel_api.h"

using namespace simpler::chip;

namespace {

struct Args {
    std::vector<uint64_t> scalars;
    char error[KERNEL_ERROR_CAPACITY] = {};
    KernelArgs k{};
    explicit Args(std::vector<uint64_t> s) : scalars(std::move(s)) {
        k.scalars = scalars.data();
        k.scalar_count = static_cast<uint32_t>(scalars.size());
        k.error = error;
        k.error_capacity = KERNEL_ERROR_CAPACITY;
    }
};

// One shared anonymous page, as the window heaps are mapped (shared across fork).
struct SharedPage {
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ~SharedPage() { munmap(p, 4096); }
    uint32_t* word(size_t i) const { return static_cast<uint32_t*>(p) + i; }
};

}  // namespace

TEST(DomainContext, ReadsRankSizeAndBasesAndMapsPeerAddresses) {
    Args a({7, 1, 3, 0x1000, 0x9000, 0x5000});  // one unrelated scalar, then the context
    DomainContext ctx;
    ASSERT_EQ(read_domain_context(&a.k, 1, &ctx), CHIP_OK) << a.error;
    EXPECT_EQ(ctx.rank, 1u);
    EXPECT_EQ(ctx.size, 3u);
    EXPECT_EQ(peer_address(ctx, 0x9040, 0), 0x1040u);
    EXPECT_EQ(peer_address(ctx, 0x9040, 1), 0x9040u);
    EXPECT_EQ(peer_address(ctx, 0x9040, 2), 0x5040u);
    EXPECT_EQ(peer_address(ctx, 0x9040, 3), 0u);  // not a rank
}

TEST(DomainContext, RefusesMalformedScalarsNamingWhatIsWrong) {
    DomainContext ctx;
    Args few({0});
    EXPECT_EQ(read_domain_context(&few.k, 0, &ctx), CHIP_ERR_KERNEL);
    EXPECT_NE(std::string(few.error).find("the task has 1 scalars"), std::string::npos) << few.error;
    Args rank({2, 2, 0x1000, 0x2000});
    EXPECT_EQ(read_domain_context(&rank.k, 0, &ctx), CHIP_ERR_KERNEL);
    EXPECT_NE(std::string(rank.error).find("rank 2 is not below the size 2"), std::string::npos) << rank.error;
    Args zero({0, 0});
    EXPECT_EQ(read_domain_context(&zero.k, 0, &ctx), CHIP_ERR_KERNEL);
    EXPECT_NE(std::string(zero.error).find("size 0 is not a domain size"), std::string::npos) << zero.error;
    Args bases({0, 3, 0x1000, 0x2000});
    EXPECT_EQ(read_domain_context(&bases.k, 0, &ctx), CHIP_ERR_KERNEL);
    EXPECT_NE(std::string(bases.error).find("size 3 needs 3 window bases from scalar 2"), std::string::npos)
        << bases.error;
}

// Ping-pong between two threads: each waits for the other's value before
// notifying the next, 1000 rounds; a lost wake-up would stall a round until its
// (long) deadline and fail it.
TEST(WindowSync, TwoThreadsPingPongThroughNotifyAndWait) {
    SharedPage page;
    uint32_t* ping = page.word(0);
    uint32_t* pong = page.word(16);
    constexpr uint32_t ROUNDS = 1000;
    std::atomic<bool> ok{true};
    std::thread peer([&] {
        for (uint32_t i = 1; i <= ROUNDS; ++i) {
            if (!window_wait(ping, i, 10000)) {
                ok = false;
                return;
            }
            window_notify(pong, i);
        }
    });
    for (uint32_t i = 1; i <= ROUNDS; ++i) {
        window_notify(ping, i);
        uint32_t seen = 0;
        ASSERT_TRUE(window_wait(pong, i, 10000, &seen)) << "round " << i << " saw " << seen;
    }
    peer.join();
    EXPECT_TRUE(ok);
}

TEST(WindowSync, AWaitWhoseNotifierNeverComesEndsAtItsDeadline) {
    SharedPage page;
    uint32_t seen = 99;
    *page.word(0) = 3;
    EXPECT_FALSE(window_wait(page.word(0), 4, 20, &seen));
    EXPECT_EQ(seen, 3u);
    EXPECT_TRUE(window_wait(page.word(0), 3, 0));  // already reached: no wait at all
}

TEST(WindowSync, ABarrierOfFourThreadsOnOneCounter) {
    SharedPage page;
    uint32_t* counter = page.word(0);
    std::atomic<int> passed{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&] {
            window_add(counter, 1);
            if (window_wait(counter, 4, 10000)) ++passed;
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(passed.load(), 4);
    EXPECT_EQ(*counter, 4u);
}

// The futex is the shared kind: a forked process's notify wakes a wait here.
TEST(WindowSync, NotifyFromAnotherProcessWakesTheWait) {
    SharedPage page;
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Wait until the parent is in (or about to be in) its wait, then notify.
        const bool ready = window_wait(page.word(1), 1, 10000);
        window_notify(page.word(0), 42);
        _exit(ready ? 0 : 1);
    }
    window_notify(page.word(1), 1);
    uint32_t seen = 0;
    EXPECT_TRUE(window_wait(page.word(0), 42, 10000, &seen)) << seen;
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
