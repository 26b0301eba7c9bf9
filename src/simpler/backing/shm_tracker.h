// ShmTracker: unlinks this process's /dev/shm objects when the process dies
// without unlinking them itself (SIGKILL, SIGTERM's default action, os._exit,
// a crash).
//
// The first POSIX shm object a process creates starts its tracker: a small
// process, forked twice so that it is no child of the owner (the owner never
// reaps it and a wait() of the owner's never sees it), named
// "simpler-shmtrk" (/proc/PID/comm). It holds two descriptors: its end of a
// SOCK_SEQPACKET socket pair to the owner, and a pidfd of the owner that the
// owner opened on itself before the fork (so an owner that dies at any moment,
// even before the tracker ran, is noticed). It keeps the set of names the owner
// announced, sleeping in poll() on both; when the pidfd says the owner process
// has exited (or the socket is closed at every owner-side end), it reads what
// is still queued, unlinks every name still in its set and exits.
//
// The owner announces a name *before* shm_open(O_CREAT) creates it
// (will_create) and withdraws it *after* shm_unlink (unlinked), so no name can
// exist that the tracker has not been told about. A send is one datagram
// written into the socket before the call returns; a message already queued
// when the owner dies is still read. The owner keeps its own copy of the set:
// if the tracker has died (someone killed it), the next announcement starts a
// new tracker and sends it the whole set.
//
// Per process: a forked child that creates objects starts its own tracker (the
// parent's names are the parent's). The tracker ignores SIGINT, SIGTERM, SIGHUP
// and SIGQUIT (a terminal's Ctrl-C or a group kill reaches it along with its
// owner; it exits right after the owner anyway), holds no descriptor of the
// owner's other than stderr, and spends no CPU while the owner lives.
//
// Limit: the owner-side state is guarded by one mutex; a process forked while
// another thread of its parent held it (a create racing the fork) would block
// at its first create. The Worker forks its children from init(), not while
// creating buffers.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <set>
#include <string>

namespace simpler {

class ShmTracker {
public:
    ShmTracker() = default;
    ShmTracker(const ShmTracker&) = delete;
    ShmTracker& operator=(const ShmTracker&) = delete;
    // Never runs for the process-wide tracker (it is leaked on purpose: the
    // tracker must outlive every static destructor that may still unlink).
    ~ShmTracker();

    // Announces `body` (a shm name without the leading '/') before it is
    // created. Starts the tracker if this process has none or it died; throws
    // std::runtime_error when it cannot be started or told (nothing is then
    // announced and the caller must not create the object).
    void will_create(const std::string& body);
    // Withdraws `body` after shm_unlink (or after a create that failed). Never
    // throws; a name the tracker could not be told about stays in its set and
    // its unlink at the owner's death finds nothing (ENOENT).
    void unlinked(const std::string& body) noexcept;

    // The tracker's pid in this process, or -1 when none was started here.
    [[nodiscard]] pid_t pid() const;

private:
    void start_locked();
    bool send_locked(char op, const std::string& body) noexcept;
    void forget_locked() noexcept;

    mutable std::mutex mu_;
    pid_t owner_ = -1;    // the process that started the tracker
    pid_t tracker_ = -1;  // the tracker's pid
    int sock_ = -1;       // the owner's end of the socket pair
    std::set<std::string> live_;
};

// The process-wide tracker every PosixShmOwner announces its names to.
ShmTracker& process_shm_tracker();

}  // namespace simpler
