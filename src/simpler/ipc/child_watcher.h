// ChildWatcher: one parent thread that sleeps in poll() on the children's
// pidfds and reports each child's exit once, so a child that dies is noticed
// while the parent sleeps on the doorbell.
//
// For each exit the watcher reads the wait status without reaping
// (waitid(WNOWAIT): the ChildProcess owner still reaps exactly once) and calls
// on_exit(index, wait_status) on the watcher thread. The engine's on_exit marks
// the child's mailbox (Mailbox::mark_child_exited) and rings the doorbell; the
// thread driving the lanes then wakes and poll_result() turns the in-flight
// task into CHILD_DIED. Nothing spins: the thread is blocked in poll() until an
// exit or stop(). The watcher duplicates the pidfds it is given, so it never
// touches a descriptor its caller closes. Start it after the last fork (it is a thread).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace simpler::ipc {

struct WatchedChild {
    pid_t pid = -1;
    int pidfd = -1;
};

class ChildWatcher {
public:
    // Called on the watcher thread, once per exited child, with its index in
    // the constructor's list; must not throw (the thread is noexcept).
    using OnExit = std::function<void(size_t index, int wait_status)>;

    // Duplicates the pidfds and starts the thread; std::runtime_error when a
    // descriptor cannot be duplicated or the stop eventfd cannot be created.
    ChildWatcher(const std::vector<WatchedChild>& children, OnExit on_exit);
    ChildWatcher(const ChildWatcher&) = delete;
    ChildWatcher& operator=(const ChildWatcher&) = delete;
    ~ChildWatcher();

    // Wakes the thread, joins it and closes the descriptors. Idempotent. Must
    // not be called from on_exit.
    void stop() noexcept;

private:
    void run() noexcept;

    std::vector<int> pidfds_;
    int stop_fd_ = -1;
    OnExit on_exit_;
    std::thread thread_;
};

}  // namespace simpler::ipc
