// FieldRefusal: a refused config field as a value — its dotted path and the
// rule — kept whole when a holding struct prefixes the path.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "simpler/task_interface/field_refusal.h"

namespace simpler {
namespace {

TEST(FieldRefusal, CarriesTheFieldAndTheRuleAndReadsAsBoth) {
    const FieldRefusal r("runtime.core_threads", "must be in [1, 256] (got 0)");
    EXPECT_EQ(r.field(), "runtime.core_threads");
    EXPECT_EQ(r.rule(), "must be in [1, 256] (got 0)");
    EXPECT_STREQ(r.what(), "runtime.core_threads: must be in [1, 256] (got 0)");
    const FieldRefusal up = r.within("WorkerConfig.chip_lane.chip.");
    EXPECT_EQ(up.field(), "WorkerConfig.chip_lane.chip.runtime.core_threads");
    EXPECT_EQ(up.rule(), r.rule());
    const std::invalid_argument& as_invalid = up;  // a ValueError in Python
    EXPECT_STREQ(as_invalid.what(), "WorkerConfig.chip_lane.chip.runtime.core_threads: must be in [1, 256] (got 0)");
}

}  // namespace
}  // namespace simpler
