// A chip's install of a late callable, in process: the ChipInstall bytes
// round-trip and every malformed form is refused naming what is wrong; a
// ChipLane installs a standard orchestration by name as the next callable id
// and runs it; an unknown name, a library that cannot be opened or an id out
// of turn is refused naming the chip, the id is taken by that failure (a run
// of it says so), and the lane keeps serving and installing.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "simpler/engine/chip_install.h"
#include "simpler/engine/chip_lane.h"
#include "simpler/engine/device_memory.h"
#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

namespace {

struct Lane {
    Lane() : memory(1, 1 << 20) {
        ChipLaneConfig c;
        c.chip.arena_bytes = 1 << 22;
        c.chip.orchestrations = {"std.copy"};
        c.device_memory = &memory;
        lane = std::make_unique<ChipLane>(3, c);
    }
    std::string install(uint64_t id, const std::string& name, const std::string& library = {}) {
        const std::vector<std::byte> payload = encode_chip_install({name, library});
        return lane->install(id, payload);
    }
    ipc::TaskOutcome run_noop(uint64_t callable) {
        blob = encode_blob(TaskArgs{});
        ipc::TaskView task;
        task.callable_id = callable;
        task.blob = blob;
        return lane->run(task);
    }
    DeviceMemory memory;
    std::unique_ptr<ChipLane> lane;
    std::vector<std::byte> blob;
};

}  // namespace

TEST(ChipInstall, BytesRoundTrip) {
    const ChipInstall in{"my.orch", "/tmp/libmine.so"};
    EXPECT_EQ(decode_chip_install(encode_chip_install(in)), in);
    const ChipInstall standard{"std.noop", ""};
    EXPECT_EQ(decode_chip_install(encode_chip_install(standard)), standard);
}

TEST(ChipInstall, MalformedBytesAreRefusedNamingTheProblem) {
    EXPECT_THROW(encode_chip_install({"", "x"}), std::invalid_argument);
    const std::vector<std::byte> good = encode_chip_install({"my.orch", "lib"});
    try {
        (void)decode_chip_install(std::span(good).first(5));
        FAIL() << "a short header was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("shorter than its 8-byte header"), std::string::npos) << e.what();
    }
    try {
        (void)decode_chip_install(std::span(good).first(good.size() - 1));
        FAIL() << "a truncated body was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("do not fill"), std::string::npos) << e.what();
    }
    std::vector<std::byte> huge = good;
    const uint32_t lie = 0xFFFFFFFFu;
    std::memcpy(huge.data(), &lie, sizeof lie);
    EXPECT_THROW((void)decode_chip_install(huge), std::invalid_argument);
    std::vector<std::byte> unnamed(8, std::byte{0});
    EXPECT_THROW((void)decode_chip_install(unnamed), std::invalid_argument);
}

TEST(ChipInstall, AStandardOrchestrationInstalledByNameRunsAsTheNextId) {
    Lane l;
    EXPECT_EQ(l.run_noop(1).error, ipc::TaskError::UNKNOWN_CALLABLE);
    EXPECT_EQ(l.install(1, "std.noop"), "");
    EXPECT_EQ(l.lane->chip().orchestration_count(), 2u);
    const ipc::TaskOutcome r = l.run_noop(1);
    EXPECT_EQ(r.error, ipc::TaskError::NONE) << r.message;
}

// The refusal is the reason alone: the parent prefixes the child's name once
// (tests/py/test_register_late.py checks "chip 0: chip library ..." end to end).
TEST(ChipInstall, ARefusalSaysWhyTakesTheIdAndTheLaneGoesOn) {
    Lane l;
    const std::string unknown = l.install(1, "std.nope");
    EXPECT_EQ(unknown.rfind("no chip orchestration named 'std.nope' in the standard set", 0), 0u) << unknown;
    const ipc::TaskOutcome r = l.run_noop(1);
    EXPECT_EQ(r.error, ipc::TaskError::TASK_FAILED);
    EXPECT_NE(r.message.find("chip callable 1 was not installed on this chip"), std::string::npos) << r.message;

    const std::string missing = l.install(2, "my.orch", "/nonexistent/libsimpler-none.so");
    EXPECT_NE(missing.find("/nonexistent/libsimpler-none.so"), std::string::npos) << missing;
    EXPECT_EQ(l.run_noop(2).error, ipc::TaskError::TASK_FAILED);

    const std::string out_of_turn = l.install(7, "std.noop");
    EXPECT_NE(out_of_turn.find("chip callable 7 is not the next id (3)"), std::string::npos) << out_of_turn;
    const std::vector<std::byte> garbage(3, std::byte{1});
    EXPECT_NE(l.lane->install(3, garbage).find("shorter than its 8-byte header"), std::string::npos);

    EXPECT_EQ(l.install(4, "std.noop"), "") << "the id a refusal took is the failure's; the next one installs";
    EXPECT_EQ(l.run_noop(4).error, ipc::TaskError::NONE);
}
