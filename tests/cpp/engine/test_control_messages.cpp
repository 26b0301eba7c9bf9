// ControlMessages alone (internal/control_messages.h), no process: the order of a lane's
// forgets, installs and held tasks, the forget batches a blob holds, the install tickets'
// answers, and a lost lane. The Worker's own forget and install tests run them through children.
#include "simpler/engine/internal/control_messages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace simpler {
namespace {

using Next = ControlMessages::Next;

CanonicalIdentity ident(uint64_t id) {
    CanonicalIdentity c{};
    c.buffer_id = id;
    c.generation = 1;
    return c;
}

std::vector<uint64_t> ids_of(std::span<const std::byte> message) {
    std::vector<uint64_t> out;
    for (size_t at = 0; at < message.size(); at += sizeof(CanonicalIdentity)) {
        CanonicalIdentity c{};
        std::memcpy(&c, message.data() + at, sizeof c);
        out.push_back(c.buffer_id);
    }
    return out;
}

Dispatch task(TaskId id) {
    Dispatch d{};
    d.task = TaskHandle{id, 0};
    return d;
}

std::shared_ptr<const std::vector<std::byte>> blob(uint8_t tag) {
    return std::make_shared<const std::vector<std::byte>>(3, std::byte{tag});
}

ChildRef chip(uint32_t i) { return ChildRef{ChildKind::CHIP, i}; }

std::unique_ptr<ControlMessages> lanes(size_t n, size_t identities_per_message = 64) {
    auto c = std::make_unique<ControlMessages>(identities_per_message * sizeof(CanonicalIdentity));
    for (size_t i = 0; i < n; ++i) c->add_lane();
    return c;
}

TEST(ControlMessagesTest, ForgetsGoFirstThenInstallsThenTheTasksHeldBehindThemInOrder) {
    const auto made = lanes(2);
    ControlMessages& c = *made;
    const uint64_t ticket = c.open_install();
    c.queue_install(0, ticket, blob(7));
    const CanonicalIdentity freed[] = {ident(1), ident(2)};
    c.post_forgets(freed);
    EXPECT_EQ(c.next(0), Next::INSTALL);  // posted, not yet queued
    c.queue_posted_forgets([](size_t) { return true; });
    ASSERT_TRUE(c.any_queued());
    EXPECT_FALSE(c.takes_tasks(0));
    EXPECT_FALSE(c.takes_tasks(1));

    ASSERT_EQ(c.next(0), Next::FORGET);
    EXPECT_EQ(ids_of(c.forget_message(0)), (std::vector<uint64_t>{1, 2}));
    c.sent(0);
    EXPECT_TRUE(c.on_child(0));
    EXPECT_FALSE(c.install_on_child(0));
    EXPECT_TRUE(c.must_hold(0));
    c.hold(0, task(10));
    c.hold(0, task(11));
    c.answered(0, chip(0), {});
    EXPECT_FALSE(c.on_child(0));
    EXPECT_TRUE(c.must_hold(0)) << "a task behind held ones waits its turn";

    ASSERT_EQ(c.next(0), Next::INSTALL);
    EXPECT_EQ(c.install_message(0).size(), 3U);
    c.sent(0);
    EXPECT_TRUE(c.install_on_child(0));
    EXPECT_TRUE(c.install_pending(ticket, "test"));
    c.answered(0, chip(0), {});
    EXPECT_FALSE(c.install_pending(ticket, "test"));
    EXPECT_TRUE(c.take_refusals(ticket).empty());

    EXPECT_EQ(c.next(0), Next::NONE);
    ASSERT_EQ(c.held(0).size(), 2U);
    EXPECT_EQ(c.held(0).front().task.id, 10U);
    c.held(0).clear();
    EXPECT_TRUE(c.takes_tasks(0));

    ASSERT_EQ(c.next(1), Next::FORGET);  // the other lane has its own copy of the forgets
    (void)c.forget_message(1);
    c.sent(1);
    c.answered(1, chip(1), {});
    EXPECT_FALSE(c.any_queued());
    EXPECT_TRUE(c.takes_tasks(1));
}

TEST(ControlMessagesTest, AForgetMessageHoldsWhatABlobHoldsAndTheRestFollows) {
    const auto made = lanes(1, 2);
    ControlMessages& c = *made;
    const CanonicalIdentity freed[] = {ident(1), ident(2), ident(3), ident(4), ident(5)};
    c.post_forgets(freed);
    c.queue_posted_forgets([](size_t) { return true; });
    std::vector<std::vector<uint64_t>> messages;
    while (c.next(0) == Next::FORGET) {
        messages.push_back(ids_of(c.forget_message(0)));
        c.sent(0);
        c.answered(0, chip(0), {});
    }
    EXPECT_EQ(messages, (std::vector<std::vector<uint64_t>>{{1, 2}, {3, 4}, {5}}));
    EXPECT_FALSE(c.any_queued());
}

TEST(ControlMessagesTest, ForgetsAreQueuedOnlyOnTheLanesTheWorkerStillUses) {
    const auto made = lanes(3);
    ControlMessages& c = *made;
    const CanonicalIdentity freed[] = {ident(9)};
    c.post_forgets(freed);
    c.queue_posted_forgets([](size_t lane) { return lane != 1; });
    EXPECT_EQ(c.next(0), Next::FORGET);
    EXPECT_EQ(c.next(1), Next::NONE);
    EXPECT_EQ(c.next(2), Next::FORGET);
    // Taken once: a second pass queues nothing more.
    c.queue_posted_forgets([](size_t) { return true; });
    EXPECT_EQ(c.next(1), Next::NONE);
    EXPECT_EQ(ids_of(c.forget_message(0)), (std::vector<uint64_t>{9}));
}

TEST(ControlMessagesTest, AnInstallCollectsEachLanesRefusalByChildAndIsThenClosed) {
    const auto made = lanes(3);
    ControlMessages& c = *made;
    const uint64_t ticket = c.open_install();
    for (size_t i = 0; i < 3; ++i) c.queue_install(i, ticket, blob(1));
    for (size_t i : {2U, 0U, 1U}) {
        EXPECT_TRUE(c.install_pending(ticket, "test"));
        c.sent(i);
        c.answered(i, chip(static_cast<uint32_t>(i)), i == 1 ? "" : "no such symbol " + std::to_string(i));
    }
    EXPECT_FALSE(c.install_pending(ticket, "test"));
    const std::vector<InstallRefusal> refused = c.take_refusals(ticket);
    ASSERT_EQ(refused.size(), 2U);
    EXPECT_EQ(refused[0].child.index, 0U);
    EXPECT_EQ(refused[0].why, "no such symbol 0");
    EXPECT_EQ(refused[1].child.index, 2U);
    try {
        (void)c.install_pending(ticket, "Worker.wait_install");
        FAIL() << "a closed ticket is not pending";
    } catch (const std::logic_error& e) {
        EXPECT_STREQ(e.what(), ("Worker.wait_install: no install " + std::to_string(ticket) + " is pending").c_str());
    }
}

TEST(ControlMessagesTest, AnAbandonedInstallDropsItsLaterAnswers) {
    const auto made = lanes(1);
    ControlMessages& c = *made;
    const uint64_t ticket = c.open_install();
    c.queue_install(0, ticket, blob(1));
    c.sent(0);
    c.drop_install(ticket);
    c.answered(0, chip(0), "refused after its waiter left");
    EXPECT_FALSE(c.on_child(0));
    EXPECT_THROW((void)c.install_pending(ticket, "test"), std::logic_error);
    EXPECT_EQ(c.open_install(), ticket + 1);
}

TEST(ControlMessagesTest, ALostLaneDropsItsMessagesRefusesTheInstallOnItsChildAndGivesBackItsHeldTasks) {
    const auto made = lanes(2);
    ControlMessages& c = *made;
    const uint64_t on_child = c.open_install();
    const uint64_t queued = c.open_install();
    for (size_t i = 0; i < 2; ++i) {
        c.queue_install(i, on_child, blob(1));
        c.queue_install(i, queued, blob(2));
    }
    const CanonicalIdentity freed[] = {ident(4)};
    c.post_forgets(freed);
    c.sent(0);  // lane 0's first install is on its child
    c.queue_posted_forgets([](size_t) { return true; });
    c.hold(0, task(20));
    c.hold(0, task(21));

    const std::deque<Dispatch> held = c.lose(0, chip(0), "CHILD_DIED: child killed by signal 9");
    ASSERT_EQ(held.size(), 2U);
    EXPECT_EQ(held.back().task.id, 21U);
    EXPECT_TRUE(c.held(0).empty());
    EXPECT_FALSE(c.on_child(0));
    EXPECT_EQ(c.next(0), Next::NONE);

    // Lane 1 still owes both installs; once it answers, the lost lane's part is in the refusals.
    for (uint64_t ticket : {on_child, queued}) EXPECT_TRUE(c.install_pending(ticket, "test"));
    ASSERT_EQ(c.next(1), Next::FORGET);
    (void)c.forget_message(1);
    c.sent(1);
    c.answered(1, chip(1), {});
    for (int k = 0; k < 2; ++k) {
        ASSERT_EQ(c.next(1), Next::INSTALL);
        c.sent(1);
        c.answered(1, chip(1), {});
    }
    EXPECT_FALSE(c.any_queued());
    const std::vector<InstallRefusal> refused = c.take_refusals(on_child);
    ASSERT_EQ(refused.size(), 1U);
    EXPECT_EQ(refused[0].child, chip(0));
    EXPECT_EQ(refused[0].why, "the child was lost with the install on it (CHILD_DIED: child killed by signal 9)");
    EXPECT_TRUE(c.take_refusals(queued).empty()) << "a lane lost before an install reached it is not listed";
}

TEST(ControlMessagesTest, ForgetsPostedFromManyThreadsAreEachQueuedOnce) {
    const auto made = lanes(1, 1 << 16);
    ControlMessages& c = *made;
    constexpr size_t THREADS = 4;
    constexpr size_t EACH = 500;
    std::vector<std::thread> posters;
    for (size_t t = 0; t < THREADS; ++t)
        posters.emplace_back([&c, t] {
            for (size_t k = 0; k < EACH; ++k) {
                const CanonicalIdentity one[] = {ident(t * EACH + k + 1)};
                c.post_forgets(one);
            }
        });
    std::vector<uint64_t> seen;
    const auto drain = [&] {
        c.queue_posted_forgets([](size_t) { return true; });
        while (c.next(0) == Next::FORGET) {
            for (uint64_t id : ids_of(c.forget_message(0))) seen.push_back(id);
            c.sent(0);
            c.answered(0, chip(0), {});
        }
    };
    // Drained while they post (every post ends, so this loop does).
    while (seen.size() < THREADS * EACH) {
        drain();
        std::this_thread::yield();
    }
    for (std::thread& p : posters) p.join();
    drain();
    std::ranges::sort(seen);
    ASSERT_EQ(seen.size(), THREADS * EACH);
    for (size_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], k + 1);
}

}  // namespace
}  // namespace simpler
