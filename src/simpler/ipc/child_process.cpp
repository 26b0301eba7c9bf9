#include "simpler/ipc/child_process.h"

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <utility>

namespace simpler::ipc {
namespace {

int pidfd_open(pid_t pid) noexcept { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

// The owner-watch thread only polls: a small stack is plenty.
constexpr size_t OWNER_WATCH_STACK_BYTES = 64 * 1024;

int pidfd_send_signal(int pidfd, int sig) noexcept {
    return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

// What the owner-watch thread is started with. One per child process (static
// in start_owner_watch): the thread posts `started` only once it has copied the
// descriptor and is about to sleep, and never touches the struct afterwards.
struct OwnerWatchStart {
    int owner_pidfd = -1;
    pid_t owner = 0;
    sem_t started{};
};

// The child's watch on its owner: sleeps in poll() on the owner's pidfd and
// SIGKILLs its own process when the owner process has exited. Where the kernel
// cannot poll a pidfd (some sandboxes, gVisor among them, answer POLLNVAL or
// an error), it asks every 50 ms whether the child was reparented instead: the
// owner is the child's parent process until it exits.
void* watch_owner(void* arg) noexcept {
    auto* start = static_cast<OwnerWatchStart*>(arg);
    const int owner_pidfd = start->owner_pidfd;
    const pid_t owner = start->owner;
    sem_post(&start->started);
    for (;;) {
        pollfd p{owner_pidfd, POLLIN, 0};
        const int rc = poll(&p, 1, -1);
        if (rc < 0 && errno == EINTR) continue;
        if (rc > 0 && (p.revents & POLLIN) != 0) break;  // the owner has exited
        const timespec nap{0, 50'000'000};
        while (getppid() == owner) nanosleep(&nap, nullptr);
        break;
    }
    kill(getpid(), SIGKILL);
    return nullptr;
}

// Starts watch_owner on a small detached thread and returns once that thread
// runs (is about to sleep); otherwise the name of the step that failed, with
// errno set. Waiting for it matters: the body may fork (a nested Worker forks
// its own children), and a fork while another thread is still starting up
// could copy a lock that thread holds (the allocator's, the thread library's)
// into the new child.
const char* start_owner_watch(int owner_pidfd, pid_t owner) noexcept {
    static OwnerWatchStart start;
    start.owner_pidfd = owner_pidfd;
    start.owner = owner;
    if (sem_init(&start.started, 0, 0) != 0) return "sem_init";
    // A small stack first; where the system wants more than it (a larger
    // minimum signal stack, as in some sandboxes: EINVAL), the default one.
    int rc = EINVAL;
    for (const bool small : {true, false}) {
        pthread_attr_t attr;
        if (int r = pthread_attr_init(&attr); r != 0) return errno = r, "pthread_attr_init";
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (small) pthread_attr_setstacksize(&attr, OWNER_WATCH_STACK_BYTES);
        pthread_t thread;
        rc = pthread_create(&thread, &attr, watch_owner, &start);
        pthread_attr_destroy(&attr);
        if (rc != EINVAL) break;
    }
    if (rc != 0) return errno = rc, "pthread_create of the owner watch";
    while (sem_wait(&start.started) != 0) {
        if (errno != EINTR) return "sem_wait";
    }
    return nullptr;
}

// Says on stderr why this child ends before its body runs, then exits with
// CHILD_ORPHANED_STATUS (describe_wait_status names that status).
[[noreturn]] void give_up(const char* step) noexcept {
    std::fprintf(stderr, "simpler child %d: %s failed (%s); it cannot watch its owner and exits\n",
                 static_cast<int>(getpid()), step, std::strerror(errno));
    std::fflush(stderr);
    _exit(CHILD_ORPHANED_STATUS);
}

[[noreturn]] void run_child(int owner_pidfd, pid_t owner, bool forked_by_main_thread,
                            const std::function<int()>& body) noexcept {
    // A stopped child (SIGSTOP, a debugger) runs no thread, so its owner watch
    // cannot kill it; the kernel's parent-death SIGKILL can. It fires when the
    // forking *thread* exits, so it is asked for only when that thread was the
    // owner's main one (whose exit is the process's); a child forked by another
    // thread relies on the watch alone, as does a child where the kernel
    // refuses the prctl (a sandbox).
    // Where the watch cannot start but the death signal is armed, the signal
    // alone covers the owner's exit (the forking thread is the main one).
    const bool death_signal = forked_by_main_thread && prctl(PR_SET_PDEATHSIG, SIGKILL) == 0;
    if (death_signal && getppid() != owner) kill(getpid(), SIGKILL);  // the owner died before the prctl
    if (const char* failed = start_owner_watch(owner_pidfd, owner); failed != nullptr && !death_signal) give_up(failed);
    int status = CHILD_EXCEPTION_STATUS;
    try {
        status = body();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "simpler child %d: uncaught exception: %s\n", static_cast<int>(getpid()), e.what());
    } catch (...) {
        std::fprintf(stderr, "simpler child %d: uncaught non-standard exception\n", static_cast<int>(getpid()));
    }
    std::fflush(nullptr);
    _exit(status);
}

}  // namespace

std::string describe_wait_status(int wait_status) {
    if (wait_status == UNKNOWN_WAIT_STATUS) return "ended (status unknown)";
    if (WIFEXITED(wait_status)) {
        const int status = WEXITSTATUS(wait_status);
        std::string s = "exited with status " + std::to_string(status);
        if (status == CHILD_EXCEPTION_STATUS) s += " (an uncaught exception: see its stderr)";
        if (status == CHILD_ORPHANED_STATUS) s += " (it could not watch its owner process: see its stderr)";
        return s;
    }
    if (WIFSIGNALED(wait_status)) {
        const int sig = WTERMSIG(wait_status);
        const char* name = strsignal(sig);
        std::string s = "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
        if (WCOREDUMP(wait_status)) s += ", core dumped";
        return s;
    }
    return "ended with wait status " + std::to_string(wait_status);
}

ChildProcess ChildProcess::spawn(const std::function<int()>& body) {
    // A pidfd of this process, opened before the fork and inherited by the
    // child: it becomes readable when the whole process has exited (not when
    // the forking thread does), and it exists before the child runs, so an
    // owner that dies at any moment is noticed.
    const int owner_pidfd = pidfd_open(getpid());
    if (owner_pidfd < 0)
        throw std::runtime_error(std::string("ChildProcess: pidfd_open of the owner failed: ") + std::strerror(errno));
    std::fflush(nullptr);  // buffered output must not be written twice
    const pid_t owner = getpid();
    const bool forked_by_main_thread = static_cast<pid_t>(syscall(SYS_gettid)) == owner;
    const pid_t pid = fork();
    if (pid < 0) {
        const int err = errno;
        close(owner_pidfd);
        throw std::runtime_error(std::string("ChildProcess: fork failed: ") + std::strerror(err));
    }
    if (pid == 0) run_child(owner_pidfd, owner, forked_by_main_thread, body);
    close(owner_pidfd);
    ChildProcess child;
    child.pid_ = pid;
    child.pidfd_ = pidfd_open(pid);
    if (child.pidfd_ < 0) {
        const int err = errno;
        kill(pid, SIGKILL);
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        child.pid_ = -1;
        throw std::runtime_error(std::string("ChildProcess: pidfd_open failed: ") + std::strerror(err));
    }
    return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)),
      reaped_(std::exchange(other.reaped_, false)),
      status_(std::exchange(other.status_, 0)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        release();
        pid_ = std::exchange(other.pid_, -1);
        pidfd_ = std::exchange(other.pidfd_, -1);
        reaped_ = std::exchange(other.reaped_, false);
        status_ = std::exchange(other.status_, 0);
    }
    return *this;
}

ChildProcess::~ChildProcess() { release(); }

void ChildProcess::release() noexcept {
    if (pid_ > 0 && !reaped_) {
        signal(SIGKILL);
        wait_exit(NO_DEADLINE);
    }
    if (pidfd_ >= 0) close(pidfd_);
    pid_ = -1;
    pidfd_ = -1;
    reaped_ = false;
}

std::optional<int> ChildProcess::wait_status() const noexcept {
    if (!reaped_) return std::nullopt;
    return status_;
}

std::optional<int> ChildProcess::try_reap() noexcept {
    if (pid_ <= 0) return std::nullopt;
    if (reaped_) return status_;
    int st = 0;
    for (;;) {
        const pid_t r = waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
            reaped_ = true;
            status_ = st;
            return st;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {  // ECHILD: someone else reaped it
            reaped_ = true;
            status_ = UNKNOWN_WAIT_STATUS;
            return status_;
        }
        return std::nullopt;
    }
}

std::optional<int> ChildProcess::wait_exit(Deadline deadline) noexcept {
    for (;;) {
        if (std::optional<int> st = try_reap()) return st;
        if (pid_ <= 0) return std::nullopt;
        int timeout_ms = -1;
        if (deadline != NO_DEADLINE) {
            const auto left = deadline - Clock::now();
            if (left <= Clock::duration::zero()) return std::nullopt;
            // Round up so a sub-millisecond remainder does not spin.
            timeout_ms = static_cast<int>(
                std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), INT32_MAX));
        }
        pollfd p{pidfd_, POLLIN, 0};
        const int rc = poll(&p, 1, timeout_ms);
        if (rc < 0 && errno != EINTR) return try_reap();
    }
}

bool ChildProcess::signal(int sig) noexcept {
    if (pid_ <= 0 || reaped_) return false;
    return pidfd_send_signal(pidfd_, sig) == 0;
}

int ChildProcess::stop(Deadline grace) noexcept {
    if (std::optional<int> st = wait_exit(grace)) return *st;
    signal(SIGKILL);
    if (std::optional<int> st = wait_exit(NO_DEADLINE)) return *st;
    return UNKNOWN_WAIT_STATUS;
}

}  // namespace simpler::ipc
