// The edge log's bound: EdgeLogRecorder keeps at most its capacity of edges
// and counts the rest, take() hands them over and starts again; an EngineCore
// with record_edges and a small edge_log_capacity keeps the first edges of a
// chain in submit order and counts every later one, however long the chain.
#include <gtest/gtest.h>

#include <vector>

#include "engine_core_harness.h"
#include "simpler/engine/edge_log.h"
#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"

using namespace simpler;
using namespace engine_test;

namespace {

EdgeExplanation edge(TaskId pred, TaskId succ) {
    EdgeExplanation e;
    e.predecessor = pred;
    e.successor = succ;
    return e;
}

TaskArgs writes_tile(const BufferDescriptor& b) {
    TaskArgs a;
    a.add_tensor(tile(b, 0), TensorArgType::INOUT);
    return a;
}

}  // namespace

TEST(EdgeLog, KeepsUpToItsCapacityAndCountsTheRest) {
    EdgeLogRecorder log(3);
    const std::vector<EdgeExplanation> two = {edge(1, 2), edge(2, 3)};
    log.append(two);
    log.append(two);  // one fits, one is dropped
    log.append(two);  // both dropped
    EdgeLog taken = log.take();
    ASSERT_EQ(taken.edges.size(), 3u);
    EXPECT_EQ(taken.edges[2].predecessor, 1u);
    EXPECT_EQ(taken.dropped, 3u);

    taken = log.take();  // taking empties it: nothing kept, nothing counted
    EXPECT_TRUE(taken.edges.empty());
    EXPECT_EQ(taken.dropped, 0u);
    log.append(two);
    EXPECT_EQ(log.take().edges.size(), 2u);  // room again after a take
}

TEST(EdgeLog, CapacityZeroKeepsNoneAndCountsAll) {
    EdgeLogRecorder log(0);
    const std::vector<EdgeExplanation> one = {edge(4, 5)};
    log.append(one);
    log.append({});
    const EdgeLog taken = log.take();
    EXPECT_TRUE(taken.edges.empty());
    EXPECT_EQ(taken.dropped, 1u);
}

TEST(EdgeLog, AnEngineKeepsTheFirstEdgesOfALongChainAndCountsTheOthers) {
    EngineConfig c = children(1, 0);
    c.record_edges = true;
    c.edge_log_capacity = 4;
    Harness h(c);
    const BufferDescriptor b = host_buffer(1);
    const TaskArgs a = writes_tile(b);
    std::vector<TaskId> ids;
    for (int i = 0; i < 100; ++i) ids.push_back(h.chip_task(a, 0));  // each writes what the one before wrote
    for (std::vector<Dispatch> ready = h.take(); !ready.empty(); ready = h.take())
        for (const Dispatch& d : ready) h.core.member_finished(d, {});
    EXPECT_EQ(h.core.unfinished(), 0u);
    const EdgeLog log = h.core.take_edge_log();
    ASSERT_EQ(log.edges.size(), 4u);
    EXPECT_EQ(log.dropped, 95u);
    for (size_t i = 0; i < log.edges.size(); ++i) {
        EXPECT_EQ(log.edges[i].predecessor, ids[i]);
        EXPECT_EQ(log.edges[i].successor, ids[i + 1]);
    }
    EXPECT_EQ(h.core.take_edge_log().dropped, 0u);
}
