// Helpers for fork-based backing tests: run a lambda in a forked child (which
// always leaves through _exit, so gtest's state in the child never runs its
// teardown), and a fixture that fails a test leaving a /dev/shm object of this
// process's incarnation behind or an unreaped child.
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <dirent.h>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "simpler/backing/identity_minter.h"
#include "simpler/backing/shm_name.h"

namespace simpler::test {

// Runs fn in a forked child and returns its exit status (fn's return value, 99
// when it threw, 98 when it died of a signal).
inline int run_in_child(const std::function<int()>& fn) {
    const pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int rc = 99;
        try {
            rc = fn();
        } catch (...) {
            rc = 99;
        }
        _exit(rc);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 98;
}

// /dev/shm entries whose name starts with prefix.
inline std::vector<std::string> shm_objects_with_prefix(const std::string& prefix) {
    std::vector<std::string> out;
    DIR* d = opendir("/dev/shm");
    if (d == nullptr) return out;
    while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind(prefix, 0) == 0) out.push_back(name);
    }
    closedir(d);
    return out;
}

inline std::string shm_prefix_of(IdentityMinter& minter) {
    const OwnerNonce n = minter.nonce();
    uint8_t raw[OWNER_INSTANCE_ID_BYTES];
    for (size_t i = 0; i < n.size(); ++i) raw[i] = n[i];
    return shm_name_prefix_for(raw);
}

// Checks, after each test, that no shm object named by the process minter or by
// a minter the test watched is left, and that no child is left unreaped.
class LeakCheckedTest : public ::testing::Test {
protected:
    void watch(IdentityMinter& minter) { prefixes_.push_back(shm_prefix_of(minter)); }

    void TearDown() override {
        prefixes_.push_back(shm_prefix_of(process_identity_minter()));
        for (const std::string& prefix : prefixes_)
            EXPECT_TRUE(shm_objects_with_prefix(prefix).empty())
                << "a /dev/shm object " << prefix << "* of this test is left behind";
        errno = 0;
        EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a child process is left unreaped";
        EXPECT_EQ(errno, ECHILD);
    }

private:
    std::vector<std::string> prefixes_;
};

}  // namespace simpler::test
