// FailureReport: the sentence rendered from the fields, the path, and the text
// a next-level Worker answers its parent with — round trip, shortened to fit,
// and every refusal naming its field; every failure code by its name.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "simpler/engine/failure_report.h"
#include "simpler/ipc/mailbox.h"

namespace simpler {
namespace {

FailedTask chip_failure() {
    FailedTask f;
    f.level = 3;
    f.has_task = true;
    f.task = 4;
    f.run = 1;
    f.callable_id = 2;
    f.callable = "test.fail";
    f.child = ChildRef{ChildKind::CHIP, 1};
    f.code = FailureCode::TASK_FAILED;
    f.text = "kernel said no";
    f.not_run = 2;
    return f;
}

FailureReport tree_failure() {
    FailedTask top;
    top.level = 4;
    top.has_task = true;
    top.task = 9;
    top.run = 3;
    top.callable = "orch";
    top.child = ChildRef{ChildKind::WORKER, 0};
    top.code = FailureCode::FAILED_BELOW;
    return FailureReport{{top, chip_failure()}};
}

TEST(FailureReport, ALevelRendersTheTaskTheChildTheCauseAndWhatWasNotRun) {
    const FailureReport r{{chip_failure()}};
    EXPECT_EQ(r.render(),
              "task 4 of run 1 (callable 'test.fail', member 0) on chip 1 failed: TASK_FAILED: kernel said no; "
              "2 dependent task(s) were not run");
    EXPECT_EQ(r.path(), std::vector<std::string>{"chip 1"});
}

TEST(FailureReport, ATreeRendersEachLevelLedByThePathBelowIt) {
    const FailureReport r = tree_failure();
    EXPECT_EQ(r.render(),
              "task 9 of run 3 (callable 'orch', member 0) on worker 0 failed: L3[0] → chip 1: task 4 of run 1 "
              "(callable 'test.fail', member 0) on chip 1 failed: TASK_FAILED: kernel said no; 2 dependent task(s) "
              "were not run");
    EXPECT_EQ(r.path(), (std::vector<std::string>{"L3[0]", "chip 1"}));
    // A member's fault that carries the child's report says the same below its task.
    const MemberFault fault{FailureCode::FAILED_BELOW, "",
                            std::make_shared<const FailureReport>(FailureReport{{chip_failure()}})};
    EXPECT_EQ(fault.words(ChildRef{ChildKind::WORKER, 0}),
              "L3[0] → chip 1: task 4 of run 1 (callable 'test.fail', member 0) on chip 1 failed: TASK_FAILED: "
              "kernel said no; 2 dependent task(s) were not run");
}

TEST(FailureReport, CausesThatAreNotATasksAreSaidAsTheyHaveAlwaysBeen) {
    EXPECT_EQ(cause_text(FailureCode::NOT_RUN, "x failed", ChildRef{}), "not run: x failed");
    EXPECT_EQ(cause_text(FailureCode::NOT_DISPATCHED, "the child is gone", ChildRef{ChildKind::SUB_WORKER, 2}),
              "not dispatched to sub-worker 2: the child is gone");
    FailedTask raised;
    raised.level = 3;
    raised.code = FailureCode::RAISED;
    raised.text = "the orchestration 'f' raised:\nKeyError";
    EXPECT_EQ(FailureReport{{raised}}.render(), raised.text);
    EXPECT_TRUE(FailureReport{{raised}}.path().empty());
    FailedTask any = chip_failure();
    any.any_child = true;
    any.child.kind = ChildKind::SUB_WORKER;
    EXPECT_NE(FailureReport{{any}}.render().find("on any sub-worker failed"), std::string::npos);
    EXPECT_TRUE(FailureReport{{any}}.path().empty());
}

TEST(FailureReport, APoisonedTaskNamesTheOtherRunsFailure) {
    FailedTask poisoned = chip_failure();
    poisoned.code = FailureCode::NOT_RUN;
    poisoned.text = "it needs what task 4 of run 1 failed to produce";
    poisoned.not_run = 3;
    poisoned.run = 2;
    poisoned.task = 6;
    poisoned.cause = std::make_shared<const FailedTask>(chip_failure());
    EXPECT_EQ(FailureReport{{poisoned}}.render(),
              "task 6 of run 2 (callable 'test.fail', member 0) was not run: it needs what task 4 of run 1 "
              "(callable 'test.fail', member 0) on chip 1 failed: TASK_FAILED: kernel said no (in another run); 2 "
              "more task(s) of this run were not run");
}

TEST(FailureReport, EncodeDecodeRoundTripsEveryField) {
    FailureReport r = tree_failure();
    r.levels[1].text = std::string("a\0b\n→ ok", 10);
    r.levels[1].cause = std::make_shared<const FailedTask>(chip_failure());
    r.levels[1].sub = true;
    r.levels[1].member = 7;
    const std::string text = encode_failure(r, 4095);
    EXPECT_EQ(text.find('\0'), std::string::npos);
    std::string why;
    const std::optional<FailureReport> back = decode_failure(text, why);
    ASSERT_TRUE(back) << why;
    ASSERT_EQ(back->levels.size(), 2u);
    const FailedTask& f = back->levels[1];
    EXPECT_EQ(f.text, "a\\0b\n→ ok");  // a NUL is written out: the text travels NUL-terminated
    EXPECT_TRUE(f.sub);
    EXPECT_EQ(f.member, 7u);
    EXPECT_EQ(f.callable, "test.fail");
    EXPECT_EQ(f.child, (ChildRef{ChildKind::CHIP, 1}));
    ASSERT_TRUE(f.cause);
    EXPECT_EQ(f.cause->text, "kernel said no");
    EXPECT_EQ(encode_failure(*back, 4095), text);  // nothing lost or added
    EXPECT_EQ(back->path(), r.path());
}

TEST(FailureReport, ALongReportIsShortenedToFitAndStillDecodes) {
    FailureReport r = tree_failure();
    r.levels[1].text = std::string(20000, 'x') + "é";
    const std::string text = encode_failure(r, 4095);
    EXPECT_LE(text.size(), 4095u);
    std::string why;
    const std::optional<FailureReport> back = decode_failure(text, why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->levels.size(), 2u);
    EXPECT_TRUE(back->levels[1].text.ends_with(" [truncated]"));
    EXPECT_EQ(back->levels[1].code, FailureCode::TASK_FAILED);
}

TEST(FailureReport, EveryCodeIsNamedAndFoundByItsName) {
    for (int i = 1; i <= static_cast<int>(FailureCode::CLOSED); ++i) {
        const auto code = static_cast<FailureCode>(i);
        EXPECT_EQ(failure_code_named(failure_code_name(code)), code) << failure_code_name(code);
    }
    EXPECT_STREQ(failure_code_name(FailureCode::CHILD_DIED), "CHILD_DIED");
    EXPECT_EQ(failure_code_named("NONE"), std::nullopt);
    EXPECT_EQ(failure_code_named("child_died"), std::nullopt);
    EXPECT_EQ(failure_code_of(ipc::TaskError::TIMED_OUT), FailureCode::TIMED_OUT);
    EXPECT_EQ(failure_code_of(ipc::TaskError::FAILED_BELOW), FailureCode::FAILED_BELOW);
    EXPECT_EQ(failure_code_of(ipc::TaskError::NONE), FailureCode::NONE);
}

TEST(FailureReport, DecodeRefusesWhatItCannotTrustNamingTheField) {
    std::string why;
    EXPECT_FALSE(decode_failure("", why));
    EXPECT_NE(why.find("must start with"), std::string::npos) << why;
    const std::string good = encode_failure(tree_failure(), 4095);
    EXPECT_FALSE(decode_failure(good + "1:x", why));
    EXPECT_NE(why.find("bytes after the last level"), std::string::npos) << why;
    EXPECT_FALSE(decode_failure(good.substr(0, good.size() - 3), why));
    // Below a level-4 Worker's task is a level-3 report, not a level-2 one.
    FailureReport skipped = tree_failure();
    skipped.levels[1].level = 2;
    EXPECT_FALSE(decode_failure(encode_failure(skipped, 4095), why));
    EXPECT_NE(why.find("levels[1].level: must be one below"), std::string::npos) << why;
    // FAILED_BELOW exactly when a level follows.
    FailureReport alone{{tree_failure().levels[0]}};
    EXPECT_FALSE(decode_failure(encode_failure(alone, 4095), why));
    EXPECT_NE(why.find("levels[0].code: FAILED_BELOW exactly when a level follows"), std::string::npos) << why;
    // A code travels by name: a name no code has, and NONE (no failure), are refused.
    const std::string named = encode_failure(tree_failure(), 4095);
    const size_t code_at = named.rfind("11:TASK_FAILED");  // levels[1]'s code
    ASSERT_NE(code_at, std::string::npos);
    for (const auto& [name, shown] : {std::pair{"5:lower", "lower"}, std::pair{"4:NONE", "NONE"}}) {
        std::string bad = named;
        bad.replace(code_at, 14, name);
        EXPECT_FALSE(decode_failure(bad, why));
        EXPECT_NE(why.find(std::string("levels[1].code: not a failure code's name (got '") + shown + "')"),
                  std::string::npos)
            << why;
    }
    std::string kind = encode_failure(FailureReport{{chip_failure()}}, 4095);
    const std::string chip_kind = "1:01:1";  // child_kind 0, then child_index 1 (the fields are in order)
    const size_t at = kind.find(chip_kind);
    ASSERT_NE(at, std::string::npos);
    kind.replace(at, chip_kind.size(), "1:71:1");
    EXPECT_FALSE(decode_failure(kind, why));
    EXPECT_NE(why.find("levels[0].child_kind: must be a number <= 2 (got '7')"), std::string::npos) << why;
}

}  // namespace
}  // namespace simpler
