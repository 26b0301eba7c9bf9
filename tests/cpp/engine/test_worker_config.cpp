// WorkerConfig::validate: a refusal is a FieldRefusal naming the field by its
// whole path from WorkerConfig (its chip's ChipServiceConfig fields included)
// and the rule, so a caller reads the field instead of editing the message.
#include <gtest/gtest.h>

#include <string>

#include "simpler/engine/worker.h"
#include "simpler/task_interface/field_refusal.h"

namespace simpler {
namespace {

FieldRefusal refusal_of(const WorkerConfig& c) {
    try {
        c.validate();
    } catch (const FieldRefusal& e) {
        return e;
    }
    ADD_FAILURE() << "validate() refused nothing";
    return FieldRefusal("", "");
}

TEST(WorkerConfig, ARefusalNamesTheFieldByItsWholePathAndTheRule) {
    WorkerConfig c;
    c.chip_lane.chip.runtime.core_threads = 0;
    FieldRefusal r = refusal_of(c);
    EXPECT_EQ(r.field(), "WorkerConfig.chip_lane.chip.runtime.core_threads");
    EXPECT_EQ(r.rule(), "must be in [1, 256] (got 0)");
    c = WorkerConfig{};
    c.chip_lane.chip.arena_bytes = 0;
    r = refusal_of(c);
    EXPECT_EQ(r.field(), "WorkerConfig.chip_lane.chip.arena_bytes");
    EXPECT_EQ(r.rule(), "must be > 0 (got 0)");
    c = WorkerConfig{};
    c.level = 2;
    r = refusal_of(c);
    EXPECT_EQ(r.field(), "WorkerConfig.level");
    EXPECT_EQ(r.rule(), "must be in [3, 8] (got 2)");
}

}  // namespace
}  // namespace simpler
