// ChipFactsPage: a chip child's one report of the device it opened (or why it
// opened none), read by its Worker across the fork; and Worker::device_facts,
// which waits for it, refuses a chip that does not exist and names one lost
// before it told.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "simpler/engine/chip_facts_page.h"
#include "simpler/engine/worker.h"

namespace simpler {
namespace {

using namespace std::chrono_literals;

chip::DeviceFacts some_facts() {
    chip::DeviceFacts f;
    f.kind = chip::DeviceKind::CUDA;
    f.platform = "NVIDIA CUDA";
    f.name = "NVIDIA H100 80GB HBM3";
    f.version = "CUDA 13.0 driver, compute capability 9.0";
    f.uuid = "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f";
    f.memory_bytes = 1ULL << 33;
    f.compute_units = 2;
    f.concurrent_kernels = 1;
    f.unified_host_memory = true;
    return f;
}

TEST(ChipFactsPage, WhatAForkedChildPublishesIsReadWholeByItsParent) {
    ChipFactsPage page;
    EXPECT_EQ(page.read().state, ChipFactsPage::State::PENDING);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        usleep(20'000);  // the parent is asleep in wait() by now, most likely
        page.publish(some_facts());
        _exit(0);
    }
    page.wait(ipc::Clock::now() + 10s);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    const ChipFactsPage::Reading r = page.read();
    ASSERT_EQ(r.state, ChipFactsPage::State::OPENED) << r.why;
    const chip::DeviceFacts want = some_facts();
    EXPECT_EQ(r.facts.kind, want.kind);
    EXPECT_EQ(r.facts.platform, want.platform);
    EXPECT_EQ(r.facts.name, want.name);
    EXPECT_EQ(r.facts.version, want.version);
    EXPECT_EQ(r.facts.uuid, want.uuid);
    EXPECT_EQ(r.facts.memory_bytes, want.memory_bytes);
    EXPECT_EQ(r.facts.compute_units, want.compute_units);
    EXPECT_EQ(r.facts.concurrent_kernels, want.concurrent_kernels);
    EXPECT_TRUE(r.facts.unified_host_memory);
}

TEST(ChipFactsPage, AFailureIsReadWithItsReasonAndLongTextsAreCut) {
    ChipFactsPage failed;
    failed.publish_failure("chip 1 could not start: no OpenCL platform");
    EXPECT_EQ(failed.read().state, ChipFactsPage::State::FAILED);
    EXPECT_EQ(failed.read().why, "chip 1 could not start: no OpenCL platform");
    ChipFactsPage cut;
    chip::DeviceFacts f = some_facts();
    f.name = std::string(5000, 'n');
    f.uuid = std::string(300, 'u');
    cut.publish(f);
    EXPECT_EQ(cut.read().facts.name, std::string(CHIP_FACTS_TEXT_BYTES, 'n'));
    EXPECT_EQ(cut.read().facts.uuid, std::string(CHIP_FACTS_TEXT_BYTES, 'u'));
}

TEST(ChipFactsPage, AWaitOnAPageNobodyWritesEndsAtItsDeadline) {
    ChipFactsPage page;
    const auto t0 = ipc::Clock::now();
    page.wait(t0 + 30ms);
    EXPECT_GE(ipc::Clock::now(), t0 + 30ms);
    EXPECT_EQ(page.read().state, ChipFactsPage::State::PENDING);
}

WorkerConfig two_chips() {
    WorkerConfig c;
    c.num_chips = 2;
    c.chip_lane.chip.arena_bytes = 1 << 22;
    c.chip_lane.chip.runtime.core_threads = 3;
    c.chip_lane.chip.orchestrations = {"std.copy"};
    c.close_grace = 500ms;
    return c;
}

TEST(WorkerDeviceFacts, EachChipTellsTheDeviceItOpened) {
    Worker w(two_chips());
    EXPECT_THROW((void)w.device_facts(0), std::logic_error);  // before init()
    w.init();
    for (uint32_t c = 0; c < 2; ++c) {
        const chip::DeviceFacts f = w.device_facts(c);
        EXPECT_EQ(f.kind, chip::DeviceKind::SIMULATED);
        EXPECT_EQ(f.platform, "simpler");
        EXPECT_EQ(f.memory_bytes, uint64_t{1} << 22);
        EXPECT_EQ(f.compute_units, 3U);
    }
    try {
        (void)w.device_facts(2);
        ADD_FAILURE() << "chip 2 does not exist";
    } catch (const std::out_of_range& e) {
        EXPECT_STREQ(e.what(), "Worker.device_facts: no chip 2 (this Worker has 2 chips)");
    }
    w.close();
    EXPECT_THROW((void)w.device_facts(0), std::logic_error);
}

TEST(WorkerDeviceFacts, AChipThatCouldNotStartSaysWhy) {
    WorkerConfig c = two_chips();
    c.chip_lane.chip.libraries = {"/nonexistent/libnothing.so"};
    Worker w(c);
    w.init();
    try {
        (void)w.device_facts(0);
        ADD_FAILURE() << "chip 0 could not start";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("Worker.device_facts: chip 0 could not start: ", 0), 0U) << what;
        EXPECT_NE(what.find("/nonexistent/libnothing.so"), std::string::npos) << what;
    }
    w.close();
}

TEST(WorkerDeviceFacts, AChipLostBeforeItToldIsNamedWithHowItWent) {
    // The chips' library is a FIFO nobody writes: each chip child blocks in
    // its dlopen, before it has opened a device or told anything.
    char dir[] = "/tmp/chip-facts-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string fifo = std::string(dir) + "/never.so";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    WorkerConfig c = two_chips();
    c.chip_lane.chip.libraries = {fifo};
    {
        Worker w(c);
        w.init();
        ASSERT_EQ(kill(w.child_pids()[1], SIGKILL), 0);
        try {
            (void)w.device_facts(1);
            ADD_FAILURE() << "chip 1 never told";
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("Worker.device_facts: chip 1 was lost before it told which device it opened ("),
                      std::string::npos)
                << what;
            EXPECT_NE(what.find("signal 9"), std::string::npos) << what;
        }
        w.close();
    }
    unlink(fifo.c_str());
    rmdir(dir);
}

}  // namespace
}  // namespace simpler
