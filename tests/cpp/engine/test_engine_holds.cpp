// EngineCore's exact holds for a released backing (hold_users): the count is
// the unfinished tasks naming it — a task naming it twice, or in two members,
// once; a finished or refused one not at all — and each holder queues one
// release as it finishes, succeeded, failed or poisoned; drop_all_holds hands
// back what is still held.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "engine_core_harness.h"
#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"

using namespace simpler;
using engine_test::children;
using engine_test::host_buffer;
using engine_test::tile;

namespace {

size_t count(const std::vector<CanonicalIdentity>& ids, const CanonicalIdentity& id) {
    return static_cast<size_t>(std::count(ids.begin(), ids.end(), id));
}

// Takes what is ready and finishes it (`why` empty: succeeded); returns the ids finished.
std::vector<TaskId> finish_ready(EngineCore& core, const std::string& why = "") {
    std::vector<Dispatch> d;
    core.take(d);
    std::vector<TaskId> done;
    for (const Dispatch& x : d) {
        core.member_finished(x, why.empty() ? MemberFault{} : MemberFault{FailureCode::TASK_FAILED, why, nullptr});
        done.push_back(x.task.id);
    }
    return done;
}

}  // namespace

TEST(EngineHolds, CountTheUnfinishedTasksNamingABackingOnceEachAndReleaseEachAsItFinishes) {
    EngineCore core(children(0, 2));
    const BufferDescriptor x = host_buffer(1);
    const BufferDescriptor y = host_buffer(2);
    TaskArgs twice;  // names x twice: one holder
    twice.add_tensor(tile(x, 0), TensorArgType::INPUT);
    twice.add_tensor(tile(x, 1), TensorArgType::INPUT);
    TaskArgs both;
    both.add_tensor(tile(x, 2), TensorArgType::INPUT);
    both.add_tensor(tile(y, 0), TensorArgType::INPUT);
    TaskArgs only_y;
    only_y.add_tensor(tile(y, 1), TensorArgType::INPUT);
    const MemberSubmit a{&twice, std::nullopt};
    const MemberSubmit b{&both, std::nullopt};
    const MemberSubmit c{&only_y, std::nullopt};
    core.submit(TaskKind::SUB, 1, {&a, 1}, TaskConfig{});
    core.submit(TaskKind::SUB, 1, {&b, 1}, TaskConfig{});
    core.submit(TaskKind::SUB, 1, {&c, 1}, TaskConfig{});
    EXPECT_EQ(core.hold_users(host_buffer(3).identity), 0u);  // named by none

    EXPECT_EQ(core.hold_users(x.identity), 2u);
    EXPECT_FALSE(core.has_unheld());
    EXPECT_EQ(finish_ready(core).size(), 2u);  // two sub-workers: tasks 1 and 2
    std::vector<CanonicalIdentity> unheld;
    core.take_unheld(unheld);
    EXPECT_EQ(count(unheld, x.identity), 2u);  // one release per holder
    EXPECT_EQ(count(unheld, y.identity), 0u);  // y was never held
    EXPECT_EQ(core.hold_users(x.identity), 0u);  // nothing unfinished names x now
    EXPECT_EQ(core.hold_users(y.identity), 1u);  // task 3

    std::vector<CanonicalIdentity> dropped;
    core.drop_all_holds(dropped);  // closing: task 3 never finishes
    EXPECT_EQ(dropped, std::vector<CanonicalIdentity>{y.identity});
    EXPECT_EQ(finish_ready(core).size(), 1u);
    unheld.clear();
    core.take_unheld(unheld);
    EXPECT_TRUE(unheld.empty());  // its hold was dropped already
}

TEST(EngineHolds, AGroupNamingABackingInTwoMembersIsOneHolderAndAFailedOrPoisonedTaskReleasesToo) {
    EngineCore core(children(0, 2));
    const BufferDescriptor x = host_buffer(1);
    TaskArgs writes;
    writes.add_tensor(tile(x, 0), TensorArgType::OUTPUT_EXISTING);
    const MemberSubmit group[2] = {{&writes, std::nullopt}, {&writes, std::nullopt}};
    core.submit(TaskKind::SUB, 1, group, TaskConfig{});
    const MemberSubmit one{&writes, std::nullopt};
    core.submit(TaskKind::SUB, 1, {&one, 1}, TaskConfig{});  // after the group: poisoned when it fails
    EXPECT_EQ(core.hold_users(x.identity), 2u);
    std::vector<Dispatch> d;
    core.take(d);
    ASSERT_EQ(d.size(), 2u);  // the group's two members
    core.member_finished(d[0], MemberFault{FailureCode::TASK_FAILED, "boom", nullptr});
    core.member_finished(d[1], {});
    EXPECT_EQ(core.unfinished(), 0u);  // the second task was poisoned
    std::vector<CanonicalIdentity> unheld;
    core.take_unheld(unheld);
    EXPECT_EQ(count(unheld, x.identity), 2u);
}

TEST(EngineHolds, ARefusedSubmitCountsNothing) {
    EngineCore core(children(0, 1));
    const BufferDescriptor x = host_buffer(1);
    TaskArgs bad;
    bad.add_tensor(tile(x, 0), TensorArgType::INPUT);
    bad.add_tensor(tile(x, 0), TensorArgType::OUTPUT_EXISTING);  // reads and writes the same bytes: refused
    const MemberSubmit m{&bad, std::nullopt};
    EXPECT_THROW(core.submit(TaskKind::SUB, 1, {&m, 1}, TaskConfig{}), std::invalid_argument);
    EXPECT_EQ(core.hold_users(x.identity), 0u);
}
