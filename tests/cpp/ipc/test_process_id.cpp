// current_process_id(): the caller's pid, as getpid() says, in the parent and
// in a child made by fork() after the cache was filled (and in a grandchild).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "simpler/ipc/process_id.h"

using simpler::ipc::current_process_id;

TEST(ProcessId, IsGetpidInTheParentAndInForkedChildren) {
    const pid_t parent = getpid();
    ASSERT_EQ(current_process_id(), parent);  // fills the cache
    ASSERT_EQ(current_process_id(), parent);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Exit status: 0 when the child and its own child read themselves.
        const bool child_ok = current_process_id() == getpid() && current_process_id() != parent;
        const pid_t grandchild = fork();
        if (grandchild < 0) _exit(3);
        if (grandchild == 0) _exit(current_process_id() == getpid() ? 0 : 1);
        int gs = 0;
        if (waitpid(grandchild, &gs, 0) != grandchild) _exit(4);
        _exit(child_ok && WIFEXITED(gs) && WEXITSTATUS(gs) == 0 ? 0 : 2);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(current_process_id(), parent);
}
