// EngineCore: submit infers edges and queues only ready work; completion
// releases successors; disjoint slices on two chips dispatch together; a failure
// poisons its successors and is reported once; refusals record nothing; the
// engine-only rules (DEVICE ownership, HOST-only sub-workers, stale identities)
// hold; a lost child poisons the work that needed it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine_core_harness.h"
#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"

using namespace simpler;
using engine_test::Harness;
using engine_test::ident;

namespace {

BufferDescriptor host_buffer(uint64_t id, uint64_t nbytes = 256) {
    const uint8_t name[] = "sptest";
    return make_buffer_descriptor(ident(id), BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, nbytes,
                                  {name, 6});
}

BufferDescriptor device_buffer(uint64_t id) {
    return make_address_descriptor(ident(id), BackendKind::DEVICE_MALLOC, AccessMode::READWRITE, 256, 0x10000);
}

Tensor matrix(const BufferDescriptor& b) {  // 16x16 UINT8
    const uint32_t shapes[] = {16, 16};
    return make_tensor(b, shapes, DataType::UINT8);
}

Tensor column_block(const BufferDescriptor& b, uint32_t c0) {  // x[:, c0:c0+4]
    const uint32_t shapes[] = {16, 4};
    const uint32_t strides[] = {16, 1};
    return make_tensor(b, shapes, DataType::UINT8, strides, c0);
}

TaskArgs args_of(std::initializer_list<std::pair<Tensor, TensorArgType>> l) {
    TaskArgs a;
    for (const auto& [t, tag] : l) a.add_tensor(t, tag);
    return a;
}

EngineConfig chips(uint32_t n, uint32_t subs = 0) { return engine_test::children(n, subs); }

std::vector<TaskId> tasks_of(const std::vector<Dispatch>& d) {
    std::vector<TaskId> out;
    for (const Dispatch& x : d) out.push_back(x.task.id);
    return out;
}

}  // namespace

TEST(EngineCore, AChainOnOneBufferRunsInSubmitOrder) {
    Harness h(chips(1));
    const BufferDescriptor b = host_buffer(1);
    TaskArgs w = args_of({{matrix(b), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs r = args_of({{matrix(b), TensorArgType::INPUT}});
    const TaskId t1 = h.chip_task(w, 0);
    const TaskId t2 = h.chip_task(r, 0);
    const TaskId t3 = h.chip_task(w, 0);
    EXPECT_EQ(h.core.unfinished(), 3u);
    for (TaskId expected : {t1, t2, t3}) {
        auto d = h.take();
        ASSERT_EQ(d.size(), 1u);
        EXPECT_EQ(d[0].task.id, expected);
        EXPECT_TRUE(h.take().empty());
        h.core.member_finished(d[0], {});
    }
    EXPECT_EQ(h.core.unfinished(), 0u);
    EXPECT_FALSE(h.core.first_failure());
}

TEST(EngineCore, DisjointColumnBlocksOnTwoChipsDispatchTogether) {
    Harness h(chips(2));
    const BufferDescriptor b = host_buffer(1);
    TaskArgs left = args_of({{column_block(b, 0), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs right = args_of({{column_block(b, 8), TensorArgType::OUTPUT_EXISTING}});
    h.chip_task(left, 0);
    h.chip_task(right, 1);
    EXPECT_EQ(h.take().size(), 2u);  // no edge: a rendezvous between them cannot deadlock
}

TEST(EngineCore, TheBlobIsASnapshotAtSubmit) {
    Harness h(chips(1));
    const BufferDescriptor b = host_buffer(1);
    TaskArgs a = args_of({{matrix(b), TensorArgType::INPUT}});
    a.add_scalar(5);
    h.chip_task(a, 0);
    a.add_scalar(6);  // after submit: not part of the task
    auto d = h.take();
    ASSERT_EQ(d.size(), 1u);
    DecodedTaskArgs back = read_blob(d[0].blob.data(), d[0].blob.size());
    EXPECT_EQ(back.scalars, std::vector<uint64_t>{5});
    EXPECT_EQ(back.tensors[0], matrix(b));
    EXPECT_EQ(d[0].callable, 7u);
}

TEST(EngineCore, AFailurePoisonsSuccessorsAndIsReportedOnce) {
    Harness h(chips(2));
    const BufferDescriptor b = host_buffer(1), other = host_buffer(2);
    TaskArgs w = args_of({{matrix(b), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs r = args_of({{matrix(b), TensorArgType::INPUT}});
    TaskArgs independent = args_of({{matrix(other), TensorArgType::OUTPUT_EXISTING}});
    const TaskId t1 = h.chip_task(w, 0);
    h.chip_task(r, 0);
    h.chip_task(r, 1);
    h.chip_task(independent, 1);
    auto d = h.take();
    ASSERT_EQ(tasks_of(d), (std::vector<TaskId>{t1, 4}));
    h.core.member_finished(d[0], MemberFault{FailureCode::TASK_FAILED, "kernel vadd: index out of range", nullptr});
    ASSERT_TRUE(h.core.first_failure());
    EXPECT_EQ(h.core.first_failure()->task.id, t1);
    EXPECT_EQ(h.core.first_failure()->fault.text, "kernel vadd: index out of range");
    EXPECT_EQ(h.core.poisoned_count(), 2u);
    EXPECT_TRUE(h.take().empty());  // the poisoned never run
    h.core.member_finished(d[1], {});
    EXPECT_EQ(h.core.unfinished(), 0u);
    // Until the failure is reported, a later reader of the bytes the failed task
    // never produced is poisoned at submit, not run on them.
    TaskArgs late = args_of({{matrix(b), TensorArgType::INPUT}});
    h.chip_task(late, 0);
    EXPECT_TRUE(h.take().empty());
    EXPECT_EQ(h.core.poisoned_count(), 3u);
    EXPECT_EQ(h.core.unfinished(), 0u);
    // Once reported (wait() clears it), the failed task retires and a new run starts clean.
    h.core.clear_failure();
    h.chip_task(late, 0);
    EXPECT_EQ(h.take().size(), 1u);
}

TEST(EngineCore, ARefusedSubmitRecordsNothing) {
    Harness h(chips(1));
    const BufferDescriptor b = host_buffer(1);
    TaskArgs overlapping =
        args_of({{matrix(b), TensorArgType::OUTPUT_EXISTING}, {column_block(b, 4), TensorArgType::INPUT}});
    try {
        h.chip_task(overlapping, 0);
        FAIL() << "overlapping writes within one task must be refused";
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("task 1"), std::string::npos) << msg;
        EXPECT_NE(msg.find("no overlapping writes within one task"), std::string::npos) << msg;
    }
    EXPECT_EQ(h.core.unfinished(), 0u);
    EXPECT_EQ(h.core.tracker().live_tasks(), 0u);
    TaskArgs fine = args_of({{matrix(b), TensorArgType::INPUT}});
    EXPECT_EQ(h.chip_task(fine, 0), 1u);  // the refused submit consumed no id
    EXPECT_THROW(h.chip_task(fine, 1), std::invalid_argument);  // no chip 1
}

TEST(EngineCore, DeviceTensorsGoOnlyToTheirOwnerChip) {
    EngineConfig c = chips(2, 1);
    c.device_owner = [](const CanonicalIdentity& id) -> std::optional<uint32_t> {
        if (id.buffer_id == 10) return 1;
        return std::nullopt;
    };
    Harness h(std::move(c));
    TaskArgs dev = args_of({{matrix(device_buffer(10)), TensorArgType::INOUT}});
    TaskArgs unknown = args_of({{matrix(device_buffer(11)), TensorArgType::INPUT}});
    try {
        h.chip_task(dev, 0);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("DEVICE memory of chip 1 may only be dispatched to that chip"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(h.sub_task(dev), std::invalid_argument);
    try {
        h.sub_task(dev);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("sub-worker takes HOST tensors only"), std::string::npos);
    }
    EXPECT_THROW(h.chip_task(unknown, 1), std::invalid_argument);
    h.chip_task(dev, 1);
    EXPECT_EQ(h.take().size(), 1u);
}

TEST(EngineCore, AWindowTensorGoesToEveryChipOfItsDomainAndOrdersThemByTheUsualInference) {
    EngineConfig c = chips(3, 1);
    c.window_problem = [](const BufferDescriptor& d, ChildRef to,
                          const std::string& target) -> std::optional<std::string> {
        if (d.identity.buffer_id != 20) return std::nullopt;
        if (to.kind == ChildKind::CHIP && to.index < 2) return std::string{};
        return "window of domain 'tp' (chips 0, 1), not " + target;
    };
    Harness h(std::move(c));
    const BufferDescriptor w =
        make_address_descriptor(ident(20), BackendKind::VMM_WINDOW, AccessMode::READWRITE, 256, 0x20000);
    TaskArgs write = args_of({{matrix(w), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs read = args_of({{matrix(w), TensorArgType::INPUT}});
    const TaskId writer = h.chip_task(write, 0);
    const TaskId reader = h.chip_task(read, 1);  // a peer: admitted, and after the writer on the other chip
    for (auto [target, expect] : {std::pair{2, "not chip 2"}, std::pair{-1, "not a host sub-worker"}}) {
        try {
            if (target < 0)
                h.sub_task(read);
            else
                h.chip_task(read, static_cast<uint32_t>(target));
            FAIL() << expect;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(std::string("window of domain 'tp' (chips 0, 1), ") + expect),
                      std::string::npos)
                << e.what();
        }
    }
    auto d = h.take();
    ASSERT_EQ(tasks_of(d), (std::vector<TaskId>{writer}));
    h.core.member_finished(d[0], {});
    EXPECT_EQ(tasks_of(h.take()), (std::vector<TaskId>{reader}));
    // A VMM_WINDOW identity the hook does not know is DEVICE memory unknown to the Worker.
    TaskArgs stray = args_of(
        {{matrix(make_address_descriptor(ident(21), BackendKind::VMM_WINDOW, AccessMode::READWRITE, 256, 0x20000)),
          TensorArgType::INPUT}});
    EXPECT_THROW(h.chip_task(stray, 0), std::invalid_argument);
}

TEST(EngineCore, AStaleIdentityIsRefused) {
    EngineConfig c = chips(1);
    c.identity_problem = [](const CanonicalIdentity& id) -> std::string {
        return id.generation < 2 ? "generation " + std::to_string(id.generation) + " is stale (live: 2)" : "";
    };
    Harness h(std::move(c));
    TaskArgs a = args_of({{matrix(host_buffer(1)), TensorArgType::INPUT}});
    try {
        h.chip_task(a, 0);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("generation 1 is stale"), std::string::npos) << e.what();
    }
}

TEST(EngineCore, AGroupDispatchesAllMembersAndFinishesWhenTheLastDoes) {
    Harness h(chips(2));
    const BufferDescriptor b = host_buffer(1);
    TaskArgs m0 = args_of({{matrix(b), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs m1 = args_of({{matrix(b), TensorArgType::OUTPUT_EXISTING}});  // members are not compared
    MemberSubmit members[] = {{&m0, 0}, {&m1, 1}};
    const TaskId g = h.core.submit(TaskKind::NEXT_LEVEL, 3, members, h.config).id;
    TaskArgs after = args_of({{matrix(b), TensorArgType::INPUT}});
    h.chip_task(after, 0);
    auto d = h.take();
    ASSERT_EQ(tasks_of(d), (std::vector<TaskId>{g, g}));
    h.core.member_finished(d[0], {});
    EXPECT_TRUE(h.take().empty());  // the group is not done until both members are
    h.core.member_finished(d[1], {});
    EXPECT_EQ(h.take().size(), 1u);
}

TEST(EngineCore, ALostChipPoisonsTheWorkThatNeedsIt) {
    Harness h(chips(2));
    const BufferDescriptor b = host_buffer(1), c = host_buffer(2);
    TaskArgs on_b = args_of({{matrix(b), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs on_c = args_of({{matrix(c), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs on_d = args_of({{matrix(host_buffer(3)), TensorArgType::OUTPUT_EXISTING}});
    h.chip_task(on_b, 0);
    h.chip_task(on_c, 0);  // independent of the first, queued behind it on chip 0
    h.chip_task(on_d, 1);
    auto d = h.take();
    ASSERT_EQ(d.size(), 2u);
    h.core.child_lost(ChildRef{ChildKind::CHIP, 0}, "chip 0 died (SIGKILL)");
    h.core.member_finished(
        d[0], MemberFault{FailureCode::CHILD_DIED, "chip 0 died (SIGKILL) with the task in flight", nullptr});
    h.core.member_finished(d[1], {});
    EXPECT_EQ(h.core.unfinished(), 0u);  // the queued task on chip 0 was poisoned, not left waiting
    EXPECT_EQ(h.core.poisoned_count(), 1u);
    try {
        h.chip_task(on_c, 0);
        FAIL() << "a submit to a lost chip must be refused, not queued forever";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("worker=0 is lost (chip 0 died (SIGKILL))"), std::string::npos)
            << e.what();
    }
    h.chip_task(on_c, 1);  // c was never written: the poisoned writer still stands until reported
    EXPECT_TRUE(h.take().empty());
    h.core.clear_failure();
    h.chip_task(on_c, 1);
    EXPECT_EQ(h.take().size(), 1u);
}

TEST(EngineCore, EachChipMemberCarriesItsOwnWriteMaskAndTheCallersBytes) {
    Harness h(chips(2));
    h.config.block_dim = 5;
    const BufferDescriptor b = host_buffer(1), c = host_buffer(2);
    TaskArgs m0 = args_of({{matrix(b), TensorArgType::INPUT}, {matrix(c), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs m1 = args_of({{matrix(c), TensorArgType::INOUT}, {matrix(b), TensorArgType::INPUT}});
    MemberSubmit ms[] = {{&m0, 0}, {&m1, 1}};
    h.core.submit(TaskKind::NEXT_LEVEL, 7, ms, h.config);
    auto d = h.take();
    ASSERT_EQ(d.size(), 2u);
    const CallConfig& c0 = *d[0].config;
    const CallConfig& c1 = *d[1].config;
    EXPECT_EQ(c0.block_dim, 5u);
    EXPECT_EQ(c1.block_dim, 5u);
    EXPECT_FALSE(writes_tensor(c0, 0));
    EXPECT_TRUE(writes_tensor(c0, 1));
    EXPECT_TRUE(writes_tensor(c1, 0));
    EXPECT_FALSE(writes_tensor(c1, 1));
    // The write-only mask: OUTPUT_EXISTING is written and not read; INOUT and INPUT are read.
    EXPECT_FALSE(writes_only_tensor(c0, 0));
    EXPECT_TRUE(writes_only_tensor(c0, 1));
    EXPECT_FALSE(writes_only_tensor(c1, 0));
    EXPECT_FALSE(writes_only_tensor(c1, 1));
    for (const CallConfig* config : {&c0, &c1})
        for (size_t i = 0; i < 2; ++i) EXPECT_FALSE(no_dep_tensor(*config, i));
}

TEST(EngineCore, ANoDepTensorIsMarkedSoTheNextLevelKeepsItNoDep) {
    // NO_DEP left the masks as INPUT does, so one level down it arrived as INPUT.
    Harness h(chips(1));
    const BufferDescriptor b = host_buffer(1), c = host_buffer(2);
    TaskArgs a = args_of({{matrix(b), TensorArgType::NO_DEP}, {matrix(c), TensorArgType::INPUT}});
    h.chip_task(a, 0);
    auto d = h.take();
    ASSERT_EQ(d.size(), 1u);
    const CallConfig& cfg = *d[0].config;
    EXPECT_TRUE(no_dep_tensor(cfg, 0));
    EXPECT_FALSE(writes_tensor(cfg, 0));
    EXPECT_FALSE(writes_only_tensor(cfg, 0));
    EXPECT_FALSE(no_dep_tensor(cfg, 1));
    EXPECT_FALSE(no_dep_tensor(cfg, 191));
}

TEST(EngineCore, AChipMemberWithMoreTensorsThanAChipTakesIsRefused) {
    Harness h(chips(1));
    TaskArgs big;
    for (int i = 0; i < CHIP_MAX_TENSOR_ARGS + 1; ++i)
        big.add_tensor(matrix(host_buffer(static_cast<uint64_t>(i) + 1)), TensorArgType::INPUT);
    try {
        h.chip_task(big, 0);
        FAIL() << "expected a refusal";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("a chip takes at most 256"), std::string::npos) << e.what();
    }
    EXPECT_EQ(h.core.unfinished(), 0u);
}

TEST(EngineCore, AReleaseWaitsForEveryEarlierTaskWhateverItsOutcome) {
    Harness h(chips(2));
    const BufferDescriptor b = host_buffer(1), c = host_buffer(2);
    TaskArgs writer = args_of({{matrix(b), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs reader = args_of({{matrix(b), TensorArgType::INPUT}, {matrix(c), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs other = args_of({{matrix(host_buffer(3)), TensorArgType::OUTPUT_EXISTING}});
    h.chip_task(writer, 0);
    h.chip_task(reader, 0);  // waits for the writer
    h.chip_task(other, 1);
    int released = 0;
    h.core.release_after([&] { ++released; });
    EXPECT_EQ(h.core.pending_releases(), 1u);
    auto d = h.take();
    ASSERT_EQ(d.size(), 2u);
    h.core.member_finished(d[0], MemberFault{FailureCode::TASK_FAILED, "kernel failed",
                                             nullptr});  // the reader is poisoned, yet the release waits for chip 1
    EXPECT_EQ(released, 0);
    h.core.member_finished(d[1], {});
    EXPECT_EQ(released, 1);
    EXPECT_EQ(h.core.pending_releases(), 0u);
    h.core.clear_failure();
    h.core.release_after([&] { ++released; });  // nothing unfinished: at once
    EXPECT_EQ(released, 2);
}

TEST(EngineCore, AReleaseDoesNotWaitForTasksSubmittedAfterIt) {
    Harness h(chips(1));
    TaskArgs first = args_of({{matrix(host_buffer(1)), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs later = args_of({{matrix(host_buffer(2)), TensorArgType::OUTPUT_EXISTING}});
    h.chip_task(first, 0);
    int released = 0;
    h.core.release_after([&] { ++released; });
    h.chip_task(later, 0);
    auto d = h.take();
    ASSERT_EQ(d.size(), 1u);
    h.core.member_finished(d[0], {});
    EXPECT_EQ(released, 1);
    EXPECT_EQ(h.core.unfinished(), 1u);
}

TEST(EngineCore, AFailedGroupIsUnfinishedUntilEveryMemberHasComeBack) {
    Harness h(chips(2));
    TaskArgs m0 = args_of({{matrix(host_buffer(1)), TensorArgType::OUTPUT_EXISTING}});
    TaskArgs m1 = args_of({{matrix(host_buffer(2)), TensorArgType::OUTPUT_EXISTING}});
    MemberSubmit ms[] = {{&m0, 0}, {&m1, 1}};
    h.core.submit(TaskKind::NEXT_LEVEL, 7, ms, h.config);
    auto d = h.take();
    ASSERT_EQ(d.size(), 2u);
    h.core.member_finished(d[0], MemberFault{FailureCode::TASK_FAILED, "kernel failed", nullptr});
    EXPECT_EQ(h.core.unfinished(), 1u);  // member 1 still writes its bytes: run() must not return yet
    h.core.member_finished(d[1], {});
    EXPECT_EQ(h.core.unfinished(), 0u);
}
