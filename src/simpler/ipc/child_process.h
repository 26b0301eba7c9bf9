// ChildProcess: the move-only owner of one forked child, its pid and its pidfd.
//
// spawn() opens a pidfd of the owner process, forks, and the child starts one
// small thread asleep in poll() on that inherited pidfd: when the owner
// *process* exits (however: exit, a signal, SIGKILL), the thread SIGKILLs the
// child. It is the process that counts, not the thread that forked, so a child
// forked from a short-lived thread lives on. The pidfd exists before the fork,
// so an owner that dies before the child started is noticed too. A stopped
// child (SIGSTOP) runs no thread: when the owner's main thread forked it, the
// child also asks for PR_SET_PDEATHSIG(SIGKILL), which the kernel delivers
// even to a stopped process (it follows the forking thread, and the main
// thread's exit is the process's; a child forked by another thread has the
// watch only). In a sandbox that cannot poll a pidfd (gVisor), the thread
// instead asks every 50 ms whether the child was reparented; where the thread
// cannot start at all but the death signal is armed, the signal alone watches,
// and otherwise the child says why on stderr and exits with
// CHILD_ORPHANED_STATUS. Then the child runs the body and _exit()s with its
// return value, so no parent destructor, atexit handler or test framework code
// ever runs in the child.
//
// The parent holds a pidfd (pidfd_open) so a death is observable by poll()
// while nothing else runs (child_watcher.h), and signals go through the pidfd,
// never to a recycled pid. The owner reaps exactly once: by try_reap(),
// wait_exit(), stop(), or else the destructor, which SIGKILLs and reaps a child
// still present. Does not know about mailboxes.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "simpler/ipc/futex.h"

namespace simpler::ipc {

// Exit status of a child whose body threw (the exception's what() goes to stderr).
inline constexpr int CHILD_EXCEPTION_STATUS = 125;
// Exit status of a child that could not start watching its owner (no thread).
inline constexpr int CHILD_ORPHANED_STATUS = 126;
// A wait status that could not be read (the child was reaped elsewhere).
inline constexpr int UNKNOWN_WAIT_STATUS = -1;

// "exited with status 3", "killed by signal 9 (Killed)".
[[nodiscard]] std::string describe_wait_status(int wait_status);

class ChildProcess {
public:
    ChildProcess() noexcept = default;
    // Forks a child that runs body() and _exit()s with its result. Throws
    // std::runtime_error when fork or pidfd_open fails (no child is left behind).
    static ChildProcess spawn(const std::function<int()>& body);

    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    // SIGKILLs and reaps the child when it is still unreaped.
    ~ChildProcess();

    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    [[nodiscard]] int pidfd() const noexcept { return pidfd_; }
    // True once the child was reaped; wait_status() is then set.
    [[nodiscard]] bool reaped() const noexcept { return reaped_; }
    [[nodiscard]] std::optional<int> wait_status() const noexcept;

    // Reaps the child if it has exited; never blocks.
    std::optional<int> try_reap() noexcept;
    // Waits (sleeping in poll on the pidfd) until the child exits or the
    // deadline passes; reaps it and returns the wait status, or nullopt.
    std::optional<int> wait_exit(Deadline deadline) noexcept;
    // Sends sig through the pidfd; false when the child is already reaped.
    bool signal(int sig) noexcept;
    // Waits until `grace` for the child to exit by itself, then SIGKILLs it;
    // always returns with the child reaped.
    int stop(Deadline grace) noexcept;

private:
    void release() noexcept;

    pid_t pid_ = -1;
    int pidfd_ = -1;
    bool reaped_ = false;
    int status_ = 0;
};

}  // namespace simpler::ipc
