// The edges of docs/explanation/dependencies.md ("Tags"): read after write, write after write,
// write after read, supersession on COVERED, retirement on completion, keying on
// the full identity plus the chip scope, groups, and explanations.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "deps_fixtures.h"

using namespace simpler;

using namespace deps_test;
using simpler::DependencyTracker;
using simpler::EdgeKind;
using simpler::TaskMember;
using simpler::TrackerConfig;
using TT = TensorArgType;

TEST(DependencyTracker, ReaderWaitsForEarlierWriter) {
    DependencyTracker t;
    const auto x = host_backing(256);
    EXPECT_EQ(submit(t, 1, {whole(x)}, {TT::OUTPUT}), Preds{});
    EXPECT_EQ(submit(t, 2, {block(x, 0, 4, 0, 4)}, {TT::INPUT}), Preds{1});
    const auto why = t.explain(1, 2);
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->kind, EdgeKind::READ_AFTER_WRITE);
    EXPECT_EQ(why->answer.overlap, TensorOverlap::PARTIAL);
    EXPECT_EQ(why->answer.reason, OverlapReason::SHARED_BYTES);
    EXPECT_TRUE(why->proven());
}

TEST(DependencyTracker, ReadersDoNotWaitForEachOther) {
    DependencyTracker t;
    const auto x = host_backing(256);
    EXPECT_EQ(submit(t, 1, {whole(x)}, {TT::INPUT}), Preds{});
    EXPECT_EQ(submit(t, 2, {whole(x)}, {TT::INPUT}), Preds{});
}

TEST(DependencyTracker, WriterWaitsForEarlierReadersAndWriters) {
    DependencyTracker t;
    const auto x = host_backing(256);
    submit(t, 1, {block(x, 0, 8, 0, 16)}, {TT::OUTPUT});
    submit(t, 2, {block(x, 8, 16, 0, 16)}, {TT::INPUT});
    EXPECT_EQ(submit(t, 3, {whole(x)}, {TT::OUTPUT_EXISTING}), (Preds{1, 2}));
    EXPECT_EQ(t.explain(1, 3)->kind, EdgeKind::WRITE_AFTER_WRITE);
    EXPECT_EQ(t.explain(2, 3)->kind, EdgeKind::WRITE_AFTER_READ);
    EXPECT_FALSE(t.explain(2, 1).has_value());
}

TEST(DependencyTracker, CoveringWriteSupersedesWhatItCovers) {
    DependencyTracker t;
    const auto x = host_backing(256);
    submit(t, 1, {block(x, 0, 8, 0, 8)}, {TT::OUTPUT});
    submit(t, 2, {block(x, 0, 8, 0, 8)}, {TT::INPUT});
    EXPECT_EQ(submit(t, 3, {whole(x)}, {TT::INOUT}), (Preds{1, 2}));
    EXPECT_EQ(t.live_entries(), 1u);  // 3's covering write removed 1 and 2
    EXPECT_EQ(submit(t, 4, {block(x, 0, 4, 0, 4)}, {TT::INPUT}), Preds{3});
}

TEST(DependencyTracker, PartialWriteLeavesTheEarlierEntryInPlace) {
    DependencyTracker t;
    const auto x = host_backing(256);
    submit(t, 1, {whole(x)}, {TT::OUTPUT});
    EXPECT_EQ(submit(t, 2, {block(x, 0, 8, 0, 16)}, {TT::OUTPUT_EXISTING}), Preds{1});
    EXPECT_EQ(submit(t, 3, {block(x, 8, 16, 0, 16)}, {TT::INPUT}), Preds{1});
    EXPECT_EQ(submit(t, 4, {whole(x)}, {TT::INPUT}), (Preds{1, 2}));
}

TEST(DependencyTracker, CompletedTasksLeaveTheTracker) {
    DependencyTracker t;
    const auto x = host_backing(256);
    submit(t, 1, {whole(x)}, {TT::OUTPUT});
    submit(t, 2, {block(x, 0, 4, 0, 16)}, {TT::INPUT});
    t.complete(1);
    EXPECT_FALSE(t.is_live(1));
    EXPECT_EQ(submit(t, 3, {block(x, 0, 4, 0, 16)}, {TT::INPUT}), Preds{});
    EXPECT_EQ(submit(t, 4, {whole(x)}, {TT::OUTPUT}), (Preds{2, 3}));
    t.complete(2);
    t.complete(3);
    t.complete(4);
    EXPECT_EQ(t.live_entries(), 0u);
    EXPECT_EQ(t.live_keys(), 0u);
    EXPECT_EQ(t.live_tasks(), 0u);
    EXPECT_THROW(t.complete(4), std::out_of_range);
}

TEST(DependencyTracker, RefusesTaskIdZeroAndALiveIdRecordingNothing) {
    DependencyTracker t;
    const auto x = host_backing(256);
    try {
        submit(t, 0, {whole(x)}, {TT::OUTPUT});
        FAIL() << "task 0 was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("task ids are nonzero"), std::string::npos) << e.what();
    }
    submit(t, 1, {whole(x)}, {TT::OUTPUT});
    EXPECT_THROW(submit(t, 1, {whole(x)}, {TT::INPUT}), std::invalid_argument);
    EXPECT_EQ(t.live_tasks(), 1u);
    EXPECT_EQ(t.live_entries(), 1u);
    EXPECT_EQ(submit(t, 2, {whole(x)}, {TT::INPUT}), Preds{1});
}

TEST(DependencyTracker, KeysOnTheFullIdentity) {
    DependencyTracker t;
    const auto x1 = host_backing(256, 5, AccessMode::READWRITE, 1);
    const auto x2 = host_backing(256, 5, AccessMode::READWRITE, 2);  // buffer id reused: a new generation
    const auto y = host_backing(256, 6);
    submit(t, 1, {whole(x1)}, {TT::OUTPUT});
    EXPECT_EQ(submit(t, 2, {whole(x2)}, {TT::INPUT}), Preds{});
    EXPECT_EQ(submit(t, 3, {whole(y)}, {TT::INPUT}), Preds{});
    EXPECT_EQ(submit(t, 4, {whole(x1)}, {TT::INPUT}), Preds{1});
}

TEST(DependencyTracker, DeviceBackingsAreScopedByTheirChip) {
    DependencyTracker t;
    const auto d = device_backing(256, 9);
    const auto h = host_backing(256, 10);
    submit(t, 1, {whole(d), whole(h)}, {TT::OUTPUT, TT::OUTPUT}, 0);
    EXPECT_EQ(submit(t, 2, {whole(d)}, {TT::INPUT}, 1), Preds{});   // same identity on chip 1: another backing
    EXPECT_EQ(submit(t, 3, {whole(d)}, {TT::INPUT}, 0), Preds{1});  // chip 0: the same backing
    EXPECT_EQ(submit(t, 4, {whole(h)}, {TT::INPUT}, 1), Preds{1});  // HOST backings have one scope
    EXPECT_EQ(t.explain(1, 3)->scope, 0);
    EXPECT_EQ(t.explain(1, 4)->scope, simpler::HOST_SCOPE);
}

TEST(DependencyTracker, NoDepArgumentsTakeNoPartInOrdering) {
    DependencyTracker t;
    const auto x = host_backing(256);
    submit(t, 1, {whole(x)}, {TT::OUTPUT});
    EXPECT_EQ(submit(t, 2, {whole(x)}, {TT::NO_DEP}), Preds{});
    EXPECT_EQ(submit(t, 3, {whole(x)}, {TT::OUTPUT}), Preds{1});
}

TEST(DependencyTracker, GroupMembersAreNotComparedWithEachOther) {
    DependencyTracker t;
    const auto x = host_backing(256);
    const Tensor w[1] = {whole(x)};
    const TT out[1] = {TT::OUTPUT};
    const TT in[1] = {TT::INPUT};
    // Every member names x as its output: the group's single completion token.
    const TaskMember members[3] = {{w, out, 0}, {w, out, 1}, {w, in, 2}};
    EXPECT_TRUE(t.submit(1, members).empty());
    EXPECT_EQ(submit(t, 2, {whole(x)}, {TT::INPUT}), Preds{1});
}

TEST(DependencyTracker, GroupLookupsRunBeforeAnyMemberRecords) {
    DependencyTracker t;
    const auto y = host_backing(256, 2);
    submit(t, 1, {whole(y)}, {TT::OUTPUT});  // the producer of y
    const Tensor w[1] = {whole(y)};
    const TT out[1] = {TT::OUTPUT};
    const TT in[1] = {TT::INPUT};
    // Member 0 overwrites y; member 1 reads y. Member 1 must still see task 1.
    const TaskMember members[2] = {{w, out}, {w, in}};
    const auto preds = t.submit(2, members);
    EXPECT_EQ(Preds(preds.begin(), preds.end()), Preds{1});
    const auto why = t.explain(1, 2);
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->kind, EdgeKind::WRITE_AFTER_WRITE);
    EXPECT_EQ(submit(t, 3, {whole(y)}, {TT::INPUT}), Preds{2});  // 2's write superseded 1
}

TEST(DependencyTracker, RendezvousOnDisjointColumnBlocksHasNoEdge) {
    DependencyTracker t;
    const auto x = host_backing(256);
    EXPECT_EQ(submit(t, 1, {block(x, 0, 16, 0, 4)}, {TT::OUTPUT}), Preds{});
    EXPECT_EQ(submit(t, 2, {block(x, 0, 16, 8, 12)}, {TT::OUTPUT}), Preds{});
}

TEST(DependencyTracker, TiledWriteByManyTasksHasNoEdgeBetweenTiles) {
    DependencyTracker t;
    const auto x = host_backing(256);
    simpler::TaskId id = 1;
    for (uint32_t r = 0; r < 16; r += 4)
        for (uint32_t c = 0; c < 16; c += 4)
            EXPECT_EQ(submit(t, id++, {block(x, r, r + 4, c, c + 4)}, {TT::OUTPUT}), Preds{});
    const auto all = submit(t, id, {whole(x)}, {TT::INPUT});
    EXPECT_EQ(all.size(), 16u);
}

// 256 live 8x8 tile writers of a 128x128 UINT8 matrix (past the flat arrays,
// so the tiles sit in the 2-D grid): probes of every layout find exactly the
// tiles they share bytes with.
TEST(DependencyTracker, ManyLiveTilesAreFoundByProbesOfEveryLayout) {
    DependencyTracker t;
    const auto x = host_backing(128 * 128);
    auto tile_task = [](uint32_t r, uint32_t c) { return simpler::TaskId{1 + r * 16 + c}; };
    for (uint32_t r = 0; r < 16; ++r)
        for (uint32_t c = 0; c < 16; ++c)
            ASSERT_EQ(submit(t, tile_task(r, c), {view(x, {8, 8}, {128, 1}, (r * 8) * 128 + c * 8)}, {TT::OUTPUT}),
                      Preds{});
    simpler::TaskId next = 1000;
    auto read = [&](const Tensor& probe) {
        const Preds p = submit(t, next, {probe}, {TT::INPUT});
        t.complete(next++);
        return p;
    };
    EXPECT_EQ(read(view(x, {8, 8}, {128, 1}, 16 * 128 + 24)), (Preds{tile_task(2, 3)}));
    EXPECT_EQ(read(view(x, {8, 8}, {1, 128}, 16 * 128 + 24)), (Preds{tile_task(2, 3)}));  // transposed
    Preds band;
    for (uint32_t c = 0; c < 16; ++c) band.push_back(tile_task(2, c));
    EXPECT_EQ(read(view(x, {8 * 128}, {1}, 16 * 128)), band);                                // 1-D over a row band
    EXPECT_EQ(read(view(x, {4, 8}, {64, 1})), (Preds{tile_task(0, 0), tile_task(0, 8)}));  // another row stride
    EXPECT_EQ(read(view(x, {8, 8}, {128, 1}, 4 * 128 + 4)),                                // off the tile grid
              (Preds{tile_task(0, 0), tile_task(0, 1), tile_task(1, 0), tile_task(1, 1)}));
    EXPECT_EQ(read(view(x, {2, 8, 8}, {8 * 128, 128, 1})), (Preds{tile_task(0, 0), tile_task(1, 0)}));  // 3-D
    t.complete(tile_task(2, 3));
    EXPECT_EQ(read(view(x, {8, 8}, {128, 1}, 16 * 128 + 24)), Preds{});
    EXPECT_EQ(submit(t, next, {view(x, {128, 128}, {128, 1})}, {TT::OUTPUT}).size(), 255u);
    EXPECT_EQ(t.live_entries(), 1u);  // the whole-matrix write covered every tile
}

TEST(DependencyTracker, ExplainNamesTheArgumentsAndTheFallbackReason) {
    DependencyTracker t(TrackerConfig{.overlap = {.exact_strides = false}});
    const auto x = host_backing(256);
    const auto y = host_backing(256, 2);
    submit(t, 1, {whole(y), view(x, {8, 4}, {1, 16})}, {TT::INPUT, TT::OUTPUT});  // x[0:4, 0:8].T
    submit(t, 2, {whole(y), block(x, 0, 4, 8, 16)}, {TT::INPUT, TT::INPUT});
    const auto why = t.explain(1, 2);
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->successor_arg, 1u);
    EXPECT_EQ(why->predecessor_arg, 1u);
    EXPECT_EQ(why->answer.reason, OverlapReason::DIFFERENT_STRIDES);
    EXPECT_FALSE(why->proven());
    EXPECT_NE(why->to_string().find("DIFFERENT_STRIDES"), std::string::npos);
    // With the different-stride extension the views are proven disjoint: no edge.
    DependencyTracker exact;
    submit(exact, 1, {whole(y), view(x, {8, 4}, {1, 16})}, {TT::INPUT, TT::OUTPUT});
    EXPECT_EQ(submit(exact, 2, {whole(y), block(x, 0, 4, 8, 16)}, {TT::INPUT, TT::INPUT}), Preds{});
}

TEST(DependencyTracker, ExplanationPrefersAProvenPairOverAFallback) {
    DependencyTracker t(TrackerConfig{.overlap = {.exact_strides = false}});
    const auto x = host_backing(256);
    submit(t, 1, {view(x, {8, 4}, {1, 16}), block(x, 8, 16, 0, 16)}, {TT::OUTPUT, TT::OUTPUT});
    submit(t, 2, {block(x, 0, 4, 8, 16), block(x, 8, 12, 0, 16)}, {TT::INPUT, TT::INPUT});
    const auto why = t.explain(1, 2);
    ASSERT_TRUE(why.has_value());
    EXPECT_TRUE(why->proven());
    EXPECT_EQ(why->successor_arg, 1u);
    EXPECT_EQ(t.edges_into(2).size(), 1u);
}

TEST(DependencyTracker, ACheckedSubmitInfersWhatAnUncheckedOneDoes) {
    // Two trackers fed the same members: one checks each submit, the other is
    // told check() passed them (a batch checked whole first). Same edges, same explanations.
    DependencyTracker plain;
    DependencyTracker checked;
    const auto x = host_backing(256);
    const auto y = host_backing(256, 2);
    const std::vector<std::vector<Tensor>> tensors = {{whole(x)},
                                                      {block(x, 0, 8, 0, 16), block(y, 0, 8, 0, 8)},
                                                      {block(x, 4, 12, 0, 16)},
                                                      {whole(y), block(x, 8, 16, 0, 16)}};
    const std::vector<std::vector<TT>> tags = {
        {TT::OUTPUT}, {TT::INPUT, TT::OUTPUT}, {TT::INOUT}, {TT::INPUT, TT::NO_DEP}};
    for (size_t k = 0; k < tensors.size(); ++k) {
        const TaskMember m{tensors[k], tags[k], HOST_SCOPE};
        const TaskId id = k + 1;
        const auto a = plain.submit(id, {&m, 1});
        const std::vector<TaskId> want(a.begin(), a.end());
        checked.check(id, {&m, 1});
        const auto b = checked.submit(id, {&m, 1}, /*checked=*/true);
        EXPECT_EQ(std::vector<TaskId>(b.begin(), b.end()), want) << "task " << id;
        for (TaskId p : want) {
            const auto e1 = plain.explain(p, id);
            const auto e2 = checked.explain(p, id);
            ASSERT_TRUE(e1.has_value() && e2.has_value());
            EXPECT_EQ(e1->kind, e2->kind);
            EXPECT_EQ(e1->answer.overlap, e2->answer.overlap);
        }
    }
    // A live id is still refused: that depends on what is live, not on the members.
    const TaskMember again{tensors[0], tags[0], HOST_SCOPE};
    EXPECT_THROW(checked.submit(1, {&again, 1}, /*checked=*/true), std::invalid_argument);
}

TEST(DependencyTracker, CheckRefusesOverlappingWritesWithinAMemberAsSubmitDoes) {
    // check() computes only the boxes its pairwise rule compares; it must refuse
    // exactly what submit() refuses, with the same message, with the pair at low
    // argument indices and past the 64th (where every box is computed up front).
    const auto x = host_backing(256);
    const auto y = host_backing(256, 2);
    for (const size_t pad : {size_t{1}, size_t{66}}) {
        std::vector<Tensor> tensors(pad, whole(y));
        std::vector<TT> tags(pad, TT::INPUT);
        tensors.push_back(block(x, 0, 8, 0, 16));
        tags.push_back(TT::INPUT);
        tensors.push_back(block(x, 4, 12, 0, 16));
        tags.push_back(TT::OUTPUT);
        const TaskMember m{tensors, tags, HOST_SCOPE};
        DependencyTracker plain;
        DependencyTracker checked;
        std::string submit_says, check_says;
        try {
            (void)plain.submit(1, {&m, 1});
        } catch (const std::invalid_argument& e) {
            submit_says = e.what();
        }
        try {
            checked.check(1, {&m, 1});
        } catch (const std::invalid_argument& e) {
            check_says = e.what();
        }
        EXPECT_NE(submit_says.find("no overlapping writes within one task"), std::string::npos) << submit_says;
        EXPECT_EQ(check_says, submit_says) << "pad " << pad;
        EXPECT_EQ(plain.live_tasks() + checked.live_tasks(), 0u);
        // Disjoint rows of the same backing pass both, with the same edges after.
        tensors.back() = block(x, 8, 16, 0, 16);
        const TaskMember ok{tensors, tags, HOST_SCOPE};
        EXPECT_NO_THROW(checked.check(2, {&ok, 1}));
        EXPECT_TRUE(checked.submit(2, {&ok, 1}, /*checked=*/true).empty());
        EXPECT_TRUE(plain.submit(2, {&ok, 1}).empty());
    }
}
