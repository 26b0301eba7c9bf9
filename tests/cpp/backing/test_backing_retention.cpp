// BackingRetention: a free runs at once when the use scan finds no unfinished
// task naming the identity, else at the last release of what it found (and
// never at a release of another identity); wait_freed() sleeps until then;
// the freed hook hears each identity once; a task that finishes while the scan
// runs, before the free is parked, still lets the free run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "simpler/backing/backing_retention.h"

namespace simpler {
namespace {

using namespace std::chrono_literals;

CanonicalIdentity ident(uint64_t id) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x44, sizeof c.owner_instance_id);
    c.buffer_id = id;
    c.generation = 1;
    return c;
}

struct Recorder {
    std::vector<CanonicalIdentity> freed;  // by the hook
    size_t users = 0;                      // what the scan finds
};

void install(BackingRetention& r, Recorder& rec) {
    r.set_hooks([&r, &rec](const CanonicalIdentity& id) { r.retain(id, rec.users); },
                [&rec](const CanonicalIdentity& id) { rec.freed.push_back(id); });
}

TEST(BackingRetention, UnusedIdentityIsFreedAtOnce) {
    BackingRetention r;
    Recorder rec;
    install(r, rec);
    int frees = 0;
    EXPECT_TRUE(r.free_when_unused(ident(1), [&] { ++frees; }));
    EXPECT_EQ(frees, 1);
    EXPECT_FALSE(r.pending(ident(1)));
    ASSERT_EQ(rec.freed.size(), 1u);
    EXPECT_EQ(rec.freed[0], ident(1));
    r.wait_freed(ident(1));  // returns at once
}

TEST(BackingRetention, NoHooksMeansNothingIsInUse) {
    BackingRetention r;
    int frees = 0;
    EXPECT_TRUE(r.free_when_unused(ident(1), [&] { ++frees; }));
    EXPECT_EQ(frees, 1);
}

TEST(BackingRetention, TheFreeWaitsForTheLastUserFoundAndNoOther) {
    BackingRetention r;
    Recorder rec;
    install(r, rec);
    rec.users = 2;
    int frees = 0;
    EXPECT_FALSE(r.free_when_unused(ident(1), [&] { ++frees; }));
    EXPECT_TRUE(r.pending(ident(1)));
    EXPECT_EQ(r.pending_count(), 1u);
    r.release(ident(2));  // another identity's task: nothing
    r.release(ident(1));
    EXPECT_EQ(frees, 0);
    EXPECT_TRUE(r.pending(ident(1)));
    EXPECT_TRUE(rec.freed.empty());
    r.release(ident(1));
    EXPECT_EQ(frees, 1);
    EXPECT_FALSE(r.pending(ident(1)));
    EXPECT_EQ(r.pending_count(), 0u);
    ASSERT_EQ(rec.freed.size(), 1u);
    r.release(ident(1));  // a stray release after the free: nothing
    EXPECT_EQ(frees, 1);
}

TEST(BackingRetention, AUserThatFinishesDuringTheScanStillLetsTheFreeRun) {
    BackingRetention r;
    int frees = 0;
    // The scan finds one user, which finishes before the free is parked.
    r.set_hooks(
        [&r](const CanonicalIdentity& id) {
            r.retain(id, 1);
            r.release(id);
        },
        {});
    EXPECT_TRUE(r.free_when_unused(ident(1), [&] { ++frees; }));
    EXPECT_EQ(frees, 1);
    EXPECT_FALSE(r.pending(ident(1)));
}

TEST(BackingRetention, WaitFreedSleepsUntilTheFreeHasRun) {
    BackingRetention r;
    Recorder rec;
    install(r, rec);
    rec.users = 1;
    std::atomic<bool> freed{false};
    ASSERT_FALSE(r.free_when_unused(ident(1), [&] { freed = true; }));
    std::atomic<bool> returned{false};
    std::atomic<bool> freed_at_return{false};
    std::thread waiter([&] {
        r.wait_freed(ident(1));
        freed_at_return = freed.load();
        returned = true;
    });
    std::this_thread::sleep_for(20ms);  // gives a wrong wait_freed the chance to return early
    EXPECT_FALSE(returned.load());
    r.release(ident(1));
    waiter.join();
    EXPECT_TRUE(returned.load());
    EXPECT_TRUE(freed_at_return.load());
}

}  // namespace
}  // namespace simpler
