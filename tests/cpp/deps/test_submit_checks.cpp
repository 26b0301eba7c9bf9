// The submit checks of docs/explanation/dependencies.md: access within grant, no overlapping
// writes within one task whatever the argument order, and a refusal that names
// the task, the arguments, the buffer and the rule and records nothing.
#include <gtest/gtest.h>

#include <string>

#include "deps_fixtures.h"

using namespace simpler;

using namespace deps_test;
using simpler::DependencyTracker;
using TT = TensorArgType;

namespace {

// The message of the std::invalid_argument a submit throws; empty when none.
std::string refusal(DependencyTracker& t, simpler::TaskId id, std::initializer_list<Tensor> tensors,
                    std::initializer_list<TT> tags, int32_t chip = simpler::HOST_SCOPE) {
    try {
        submit(t, id, tensors, tags, chip);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(SubmitChecks, OutputOnAReadOnlyBufferIsRefusedNamingTaskArgumentBufferAndRule) {
    DependencyTracker t;
    const auto ro = host_backing(256, 3, AccessMode::READ);
    const auto x = host_backing(256);
    const std::string msg = refusal(t, 42, {whole(x), whole(ro)}, {TT::INPUT, TT::OUTPUT});
    EXPECT_TRUE(contains(msg, "task 42")) << msg;
    EXPECT_TRUE(contains(msg, "argument 1")) << msg;
    EXPECT_TRUE(contains(msg, ro.identity.to_string())) << msg;
    EXPECT_TRUE(contains(msg, "access within grant")) << msg;
    EXPECT_TRUE(contains(msg, "OUTPUT needs WRITE")) << msg;
    EXPECT_EQ(t.live_tasks(), 0u);
    EXPECT_EQ(t.live_entries(), 0u);
}

TEST(SubmitChecks, InoutNeedsReadWriteAndInputNeedsRead) {
    DependencyTracker t;
    const auto wo = host_backing(256, 3, AccessMode::WRITE);
    EXPECT_TRUE(contains(refusal(t, 1, {whole(wo)}, {TT::INOUT}), "access within grant"));
    EXPECT_TRUE(contains(refusal(t, 1, {whole(wo)}, {TT::INPUT}), "access within grant"));
    EXPECT_EQ(refusal(t, 1, {whole(wo)}, {TT::OUTPUT}), "");
    EXPECT_EQ(refusal(t, 2, {whole(wo)}, {TT::NO_DEP}), "");
}

TEST(SubmitChecks, OverlappingWritesWithinOneTaskAreRefusedInEitherOrder) {
    DependencyTracker t;
    const auto x = host_backing(256, 4);
    const std::string a = refusal(t, 7, {block(x, 0, 8, 0, 8), block(x, 4, 12, 4, 12)}, {TT::INPUT, TT::OUTPUT});
    const std::string b = refusal(t, 7, {block(x, 4, 12, 4, 12), block(x, 0, 8, 0, 8)}, {TT::OUTPUT, TT::INPUT});
    for (const std::string& msg : {a, b}) {
        EXPECT_TRUE(contains(msg, "task 7")) << msg;
        EXPECT_TRUE(contains(msg, "arguments 0 and 1")) << msg;
        EXPECT_TRUE(contains(msg, x.identity.to_string())) << msg;
        EXPECT_TRUE(contains(msg, "no overlapping writes within one task")) << msg;
    }
    EXPECT_TRUE(contains(refusal(t, 7, {whole(x), whole(x)}, {TT::OUTPUT, TT::OUTPUT}), "COVERED"));
}

TEST(SubmitChecks, DisjointTilesOfOneBufferMayBeWrittenByOneTask) {
    DependencyTracker t;
    const auto x = host_backing(256);
    // Column blocks whose byte ranges interleave, and two reads of one region.
    EXPECT_EQ(refusal(t, 1, {block(x, 0, 16, 0, 4), block(x, 0, 16, 8, 12), block(x, 0, 16, 4, 8)},
                      {TT::OUTPUT, TT::OUTPUT_EXISTING, TT::INOUT}),
              "");
    EXPECT_EQ(refusal(t, 2, {whole(x), whole(x)}, {TT::INPUT, TT::INPUT}), "");
    EXPECT_EQ(refusal(t, 3, {whole(x), whole(x)}, {TT::NO_DEP, TT::OUTPUT}), "");
}

TEST(SubmitChecks, ARefusedSubmitLeavesTheGraphAsItWas) {
    const auto x = host_backing(256);
    const auto ro = host_backing(256, 3, AccessMode::READ);
    DependencyTracker t;
    submit(t, 1, {block(x, 0, 8, 0, 16)}, {TT::OUTPUT});
    submit(t, 2, {block(x, 8, 16, 0, 16), whole(ro)}, {TT::INPUT, TT::INPUT});
    // A covering write that would supersede both entries, refused by its last argument.
    EXPECT_FALSE(refusal(t, 3, {whole(x), whole(ro)}, {TT::OUTPUT, TT::OUTPUT}).empty());
    EXPECT_FALSE(t.is_live(3));
    EXPECT_EQ(t.live_entries(), 3u);
    EXPECT_EQ(t.live_keys(), 2u);
    EXPECT_EQ(submit(t, 3, {block(x, 0, 4, 0, 16)}, {TT::INPUT}), Preds{1});
    EXPECT_EQ(submit(t, 4, {block(x, 8, 16, 0, 16)}, {TT::OUTPUT}), Preds{2});
}

TEST(SubmitChecks, ALiveTaskIdCannotBeSubmittedTwice) {
    DependencyTracker t;
    const auto x = host_backing(256);
    submit(t, 1, {whole(x)}, {TT::INPUT});
    EXPECT_TRUE(contains(refusal(t, 1, {whole(x)}, {TT::INPUT}), "task 1"));
    t.complete(1);
    EXPECT_EQ(refusal(t, 1, {whole(x)}, {TT::INPUT}), "");
}

TEST(SubmitChecks, DeviceTensorToAHostMemberIsRefused) {
    DependencyTracker t;
    const auto d = device_backing(256, 9);
    EXPECT_TRUE(contains(refusal(t, 1, {whole(d)}, {TT::INPUT}), "a DEVICE tensor goes only to a chip"));
    EXPECT_EQ(refusal(t, 1, {whole(d)}, {TT::INPUT}, 0), "");
}

TEST(SubmitChecks, AWindowTensorMayGoToANextLevelWorkerOtherDeviceMemoryMayNot) {
    DependencyTracker t;
    const auto w = make_address_descriptor(identity(20), BackendKind::VMM_WINDOW, AccessMode::READWRITE, 256, 0x20000);
    const auto d = device_backing(256, 9);
    const std::vector<Tensor> window{whole(w)}, device{whole(d)};
    const std::vector<TT> tags{TT::INPUT};
    const TaskMember to_l3_window{window, tags, simpler::HOST_SCOPE, /*next_level=*/true};
    EXPECT_NO_THROW(t.submit(1, std::span<const TaskMember>(&to_l3_window, 1)));  // a global domain's window
    const TaskMember to_l3_device{device, tags, simpler::HOST_SCOPE, /*next_level=*/true};
    try {
        t.submit(2, std::span<const TaskMember>(&to_l3_device, 1));
        FAIL() << "DEVICE_MALLOC memory went to a next-level Worker";
    } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(contains(e.what(), "a DEVICE tensor goes only to a chip"));
    }
    const TaskMember to_host_window{window, tags, simpler::HOST_SCOPE, /*next_level=*/false};
    EXPECT_THROW(t.submit(3, std::span<const TaskMember>(&to_host_window, 1)), std::invalid_argument);
}

TEST(SubmitChecks, InvalidTensorsAndUnknownTagsAreRefused) {
    DependencyTracker t;
    const auto x = host_backing(256);
    Tensor bad = whole(x);
    bad.byte_offset = 8;  // runs past the backing
    EXPECT_TRUE(contains(refusal(t, 1, {bad}, {TT::INPUT}), "every tensor is valid"));
    EXPECT_TRUE(contains(refusal(t, 1, {whole(x)}, {static_cast<TT>(9)}), "known TensorArgType"));
    const Tensor ts[1] = {whole(x)};
    EXPECT_THROW(t.submit(1, ts, std::span<const TT>{}), std::invalid_argument);
    EXPECT_EQ(t.live_tasks(), 0u);
}

TEST(SubmitChecks, WithoutTensorValidationAnInvalidViewStillGetsItsEdges) {
    simpler::TrackerConfig config;
    config.validate_tensors = false;
    DependencyTracker t(config);
    const auto x = host_backing(256);
    submit(t, 1, {block(x, 0, 4, 0, 16)}, {TT::OUTPUT});
    Tensor bad = whole(x);
    bad.dtype = 200;  // unknown: the box reaches everything and fits no exact model
    EXPECT_EQ(submit(t, 2, {bad}, {TT::INPUT}), Preds{1});
    EXPECT_EQ(submit(t, 3, {block(x, 12, 16, 0, 16)}, {TT::OUTPUT}), Preds{2});
}
