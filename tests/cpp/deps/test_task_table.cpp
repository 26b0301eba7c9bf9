// TaskTable: values keyed by task id in pooled slots — found while present,
// gone after erase, a freed slot reused by the next insert with a reset value
// (nothing of the task before), capacity kept up to KEEP_WARM free slots, the
// index right under random inserts and erases (checked against std::map), and
// references stable while other tasks come and go.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "simpler/deps/task_table.h"

using simpler::TaskId;
using simpler::TaskTable;

namespace {

struct Value {
    uint64_t tag = 0;
    std::vector<int> items;
    int resets = 0;  // how many times this slot's value was reset (survives reset)

    void reset() noexcept {
        tag = 0;
        items.clear();
        ++resets;
    }
};

}  // namespace

TEST(TaskTable, FindsWhatWasInsertedAndForgetsWhatWasErased) {
    TaskTable<Value> t;
    t.insert(1).tag = 10;
    t.insert(2).tag = 20;
    ASSERT_NE(t.find(1), nullptr);
    EXPECT_EQ(t.find(1)->tag, 10u);
    EXPECT_EQ(t.find(2)->tag, 20u);
    EXPECT_EQ(t.find(3), nullptr);
    EXPECT_EQ(t.size(), 2u);
    EXPECT_TRUE(t.erase(1));
    EXPECT_FALSE(t.erase(1));
    EXPECT_FALSE(t.contains(1));
    EXPECT_TRUE(t.contains(2));
    EXPECT_EQ(t.size(), 1u);
}

TEST(TaskTable, RefusesIdZeroAndADuplicate) {
    TaskTable<Value> t;
    EXPECT_THROW(t.insert(0), std::logic_error);
    t.insert(5).tag = 1;
    EXPECT_THROW(t.insert(5), std::logic_error);
    EXPECT_EQ(t.find(5)->tag, 1u);  // the refused insert changed nothing
    EXPECT_EQ(t.size(), 1u);
}

TEST(TaskTable, TryInsertGivesNullForALiveIdAndChangesNothing) {
    TaskTable<Value> t;
    Value* v = t.try_insert(7);
    ASSERT_NE(v, nullptr);
    v->tag = 70;
    EXPECT_EQ(t.try_insert(7), nullptr);
    EXPECT_EQ(t.find(7)->tag, 70u);
    EXPECT_EQ(t.size(), 1u);
}

TEST(TaskTable, EraseIfKeepsTheValueWhenTheCheckThrows) {
    TaskTable<Value> t;
    t.insert(3).tag = 30;
    t.insert(4).tag = 40;
    EXPECT_THROW(t.erase_if(3, [](const Value&) { throw std::logic_error("kept"); }), std::logic_error);
    ASSERT_NE(t.find(3), nullptr);
    EXPECT_EQ(t.find(3)->tag, 30u);
    EXPECT_EQ(t.size(), 2u);
    uint64_t seen = 0;
    EXPECT_TRUE(t.erase_if(3, [&](const Value& v) { seen = v.tag; }));
    EXPECT_EQ(seen, 30u);
    EXPECT_FALSE(t.contains(3));
    EXPECT_FALSE(t.erase_if(3, [](const Value&) { ADD_FAILURE() << "checked an absent id"; }));
    EXPECT_EQ(t.find(4)->tag, 40u);
}

TEST(TaskTable, AMovedTableStillFindsItsValues) {
    TaskTable<Value> t;
    for (TaskId id = 1; id <= 100; ++id) t.insert(id).tag = id * 2;
    const Value* before = t.find(50);
    TaskTable<Value> moved(std::move(t));
    EXPECT_EQ(moved.find(50), before);  // the slots were taken whole, not copied
    for (TaskId id = 1; id <= 100; ++id) ASSERT_EQ(moved.find(id)->tag, id * 2);
    moved.insert(101).tag = 1;
    EXPECT_EQ(moved.size(), 101u);
}

TEST(TaskTable, AnErasedSlotIsReusedResetWithItsCapacity) {
    TaskTable<Value> t;
    Value& first = t.insert(1);
    first.tag = 7;
    first.items.assign(100, 42);
    const int* storage = first.items.data();
    t.erase(1);
    Value& again = t.insert(2);
    EXPECT_EQ(&again, &first);  // the same slot
    EXPECT_EQ(again.tag, 0u);   // nothing of task 1
    EXPECT_TRUE(again.items.empty());
    EXPECT_EQ(again.resets, 1);
    EXPECT_GE(again.items.capacity(), 100u);  // its storage kept
    again.items.push_back(1);
    EXPECT_EQ(again.items.data(), storage);  // no allocation for the next task
    EXPECT_EQ(t.slot_count(), 1u);
}

TEST(TaskTable, PastKeepWarmFreeSlotsAnErasedValueIsFreed) {
    TaskTable<Value> t;
    const size_t n = TaskTable<Value>::KEEP_WARM + 2;
    for (TaskId id = 1; id <= n; ++id) t.insert(id).items.assign(16, 1);
    for (TaskId id = 1; id <= n; ++id) t.erase(id);
    size_t warm = 0;
    size_t fresh = 0;
    std::vector<Value*> got;
    for (TaskId id = n + 1; id <= 2 * n; ++id) {
        Value& v = t.insert(id);
        EXPECT_TRUE(v.items.empty());
        EXPECT_EQ(v.tag, 0u);
        (v.items.capacity() >= 16 ? warm : fresh) += 1;
    }
    EXPECT_EQ(warm, TaskTable<Value>::KEEP_WARM);
    EXPECT_EQ(fresh, 2u);
    EXPECT_EQ(t.slot_count(), n);  // every slot reused, none added
}

TEST(TaskTable, RandomInsertsAndErasesAgreeWithAMap) {
    TaskTable<Value> t;
    std::map<TaskId, uint64_t> oracle;
    std::mt19937_64 rng(14);
    TaskId next = 1;
    for (int step = 0; step < 200000; ++step) {
        const uint64_t r = rng() % 10;
        if (r < 5 || oracle.empty()) {
            // mostly dense, increasing ids; now and then a jump (a long-lived task's neighbours are gone)
            next += (rng() % 50 == 0) ? 1 + rng() % 5000 : 1;
            t.insert(next).tag = next * 3;
            oracle[next] = next * 3;
        } else {
            // erase the oldest most of the time, else a random live one
            auto it = oracle.begin();
            if (r >= 8) std::advance(it, static_cast<long>(rng() % oracle.size()));
            EXPECT_TRUE(t.erase(it->first));
            oracle.erase(it);
        }
        if (step % 997 == 0) {
            ASSERT_EQ(t.size(), oracle.size());
            for (const auto& [id, tag] : oracle) {
                const Value* v = t.find(id);
                ASSERT_NE(v, nullptr) << "task " << id;
                ASSERT_EQ(v->tag, tag);
            }
            for (TaskId probe = 1; probe <= next; probe += 1 + rng() % 97)
                ASSERT_EQ(t.contains(probe), oracle.contains(probe)) << "task " << probe;
            size_t seen = 0;
            t.for_each([&](TaskId id, const Value& v) {
                ++seen;
                EXPECT_EQ(v.tag, oracle.at(id));
            });
            ASSERT_EQ(seen, oracle.size());
        }
    }
}

TEST(TaskTable, AReferenceStaysValidWhileOtherTasksComeAndGo) {
    TaskTable<Value> t;
    Value& kept = t.insert(1);
    kept.tag = 99;
    for (TaskId id = 2; id < 20000; ++id) {
        t.insert(id).tag = id;
        if (id % 3 == 0) t.erase(id - 1);
    }
    EXPECT_EQ(&kept, t.find(1));
    EXPECT_EQ(kept.tag, 99u);
}
