// ShmTracker: a process that dies without unlinking (here: _exit with its
// owners still open) leaves no /dev/shm object; what it unlinked itself stays
// unlinked; a forked child gets a tracker of its own.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "process_fixture.h"
#include "simpler/backing/posix_shm_owner.h"
#include "simpler/backing/shm_tracker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

// The names a forked child created and left open before it _exit()ed, read
// from a pipe; the child writes "name\n" per object.
std::vector<std::string> names_from_child(const std::function<void(int fd)>& body) {
    int p[2];
    if (pipe(p) != 0) return {};
    const pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        body(p[1]);
        _exit(0);  // no destructor runs: the owners are never closed
    }
    close(p[1]);
    std::string text;
    char buf[256];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    std::vector<std::string> out;
    for (size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
        out.push_back(text.substr(at, nl - at));
    return out;
}

bool exists(const std::string& body) { return access(("/dev/shm/" + body).c_str(), F_OK) == 0; }

// Waits up to 30 s for every name to be gone; the ones still there.
std::vector<std::string> still_there(const std::vector<std::string>& names) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    std::vector<std::string> left = names;
    while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
        std::erase_if(left, [](const std::string& n) { return !exists(n); });
        if (!left.empty()) std::this_thread::sleep_for(5ms);
    }
    return left;
}

// True once `pid` has exited (gone, or a zombie nobody reaped yet), within 30 s.
bool wait_process_gone(pid_t pid) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    for (;;) {
        FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
        if (f == nullptr) return true;
        char buf[512] = {};
        const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        std::fclose(f);
        const char* close_paren = std::strrchr(buf, ')');
        if (n > 0 && close_paren != nullptr && (close_paren[2] == 'Z' || close_paren[2] == 'X')) return true;
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(5ms);
    }
}

void say(int fd, const std::string& s) {
    const std::string line = s + "\n";
    if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(3);
}

}  // namespace

TEST(ShmTracker, AProcessThatExitsWithoutUnlinkingLeavesNothing) {
    const std::vector<std::string> names = names_from_child([](int fd) {
        for (int i = 0; i < 3; ++i) {
            auto* owner = PosixShmOwner::create(4096).release();  // leaked on purpose
            owner->data()[0] = 1;
            say(fd, owner->name());
        }
        say(fd, std::to_string(process_shm_tracker().pid()));
    });
    ASSERT_EQ(names.size(), 4u);
    EXPECT_GT(std::stoi(names.back()), 0);
    EXPECT_EQ(still_there({names.begin(), names.end() - 1}), std::vector<std::string>{});
}

TEST(ShmTracker, ANameUnlinkedAndWithdrawnIsNotUnlinkedAgainAndAForkedChildHasItsOwnTracker) {
    const pid_t mine = [] {
        auto keep = PosixShmOwner::create(64);
        return process_shm_tracker().pid();
    }();
    ASSERT_GT(mine, 0);
    const std::vector<std::string> names = names_from_child([mine](int fd) {
        auto closed = PosixShmOwner::create(64);
        const std::string gone = closed->name();
        closed->close();
        // A stand-in object of the same name that this process did not create
        // through an owner: the tracker must leave it alone.
        const int made = shm_open(("/" + gone).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
        if (made >= 0) close(made);
        say(fd, gone);
        say(fd, process_shm_tracker().pid() != mine ? "own" : "shared");
        say(fd, std::to_string(process_shm_tracker().pid()));
    });
    ASSERT_EQ(names.size(), 3u);
    EXPECT_EQ(names[1], "own");
    // Once the child's tracker has exited (it does once the child did), the
    // stand-in is still there: the withdrawn name was not unlinked again.
    EXPECT_TRUE(wait_process_gone(std::stoi(names[2])));
    EXPECT_TRUE(exists(names[0]));
    shm_unlink(("/" + names[0]).c_str());
}
