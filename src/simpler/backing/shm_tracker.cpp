#include "simpler/backing/shm_tracker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_set>

#include "simpler/backing/shm_name.h"

namespace simpler {
namespace {

// One message: an op byte ('+' will create, '-' unlinked) and the name body.
constexpr size_t MESSAGE_MAX = 1 + SHM_NAME_MAX_BYTES;
// How long the owner waits for a new tracker's hello.
constexpr int HELLO_TIMEOUT_MS = 10'000;

int pidfd_open(pid_t pid) noexcept { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

bool valid_body(const char* p, size_t n) noexcept {
    if (n == 0 || n > SHM_NAME_MAX_BYTES) return false;
    for (size_t i = 0; i < n; ++i)
        if (p[i] <= ' ' || p[i] > '~' || p[i] == '/') return false;
    return true;
}

// Closes every descriptor but `keep_a`, `keep_b` and stderr; stdin and stdout
// become /dev/null (the tracker must not hold the owner's pipes open).
void close_other_descriptors(int keep_a, int keep_b) noexcept {
    const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
    }
    const long max_fd = sysconf(_SC_OPEN_MAX);
    const int limit = max_fd > 0 && max_fd < 1'048'576 ? static_cast<int>(max_fd) : 1'048'576;
    int first = 3;
    for (int keep : {std::min(keep_a, keep_b), std::max(keep_a, keep_b)}) {
        if (keep >= first) {
            if (keep > first && syscall(SYS_close_range, first, keep - 1, 0) != 0)
                for (int fd = first; fd < keep; ++fd) close(fd);
            first = keep + 1;
        }
    }
    if (syscall(SYS_close_range, first, ~0U, 0) != 0)
        for (int fd = first; fd < limit; ++fd) close(fd);
}

// Reads every queued message into `names`; false once the socket reports end
// of stream (every owner-side end is closed).
bool drain(int sock, std::unordered_set<std::string>& names) noexcept {
    char buf[MESSAGE_MAX + 1];
    for (;;) {
        const ssize_t n = recv(sock, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) return false;
        if (n < 0) return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK;
        if (static_cast<size_t>(n) > MESSAGE_MAX || !valid_body(buf + 1, static_cast<size_t>(n) - 1)) continue;
        try {
            std::string body(buf + 1, static_cast<size_t>(n) - 1);
            if (buf[0] == '+')
                names.insert(std::move(body));
            else if (buf[0] == '-')
                names.erase(body);
        } catch (...) {
            // Out of memory in the tracker: the name is not tracked.
        }
    }
}

// `fd` moved above stderr (a process may run with 0-2 closed, and they are reused below).
int above_stdio(int fd) noexcept {
    if (fd > 2) return fd;
    const int moved = fcntl(fd, F_DUPFD, 3);
    if (moved < 0) _exit(1);
    return moved;
}

[[noreturn]] void tracker_main(int sock, int owner_pidfd) noexcept {
    prctl(PR_SET_NAME, "simpler-shmtrk");
    sock = above_stdio(sock);
    owner_pidfd = above_stdio(owner_pidfd);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(sig, SIG_IGN);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    close_other_descriptors(sock, owner_pidfd);
    if (chdir("/") != 0) {
        // Staying in the owner's directory only keeps it busy.
    }
    const pid_t self = getpid();
    if (send(sock, &self, sizeof self, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof self)) _exit(1);
    std::unordered_set<std::string> names;
    for (;;) {
        pollfd fds[2] = {{sock, POLLIN, 0}, {owner_pidfd, POLLIN, 0}};
        const int rc = poll(fds, 2, -1);
        if (rc < 0) {
            if (errno == EINTR) continue;
            break;
        }
        const bool owner_gone = fds[1].revents != 0;
        const bool open = drain(sock, names);
        if (owner_gone || !open || (fds[0].revents & (POLLHUP | POLLERR)) != 0) break;
    }
    drain(sock, names);
    for (const std::string& body : names) shm_unlink(shm_syscall_path(body).c_str());
    _exit(0);
}

}  // namespace

ShmTracker::~ShmTracker() {
    if (sock_ >= 0 && owner_ == getpid()) close(sock_);
}

void ShmTracker::forget_locked() noexcept {
    if (sock_ >= 0) close(sock_);
    sock_ = -1;
    tracker_ = -1;
    owner_ = -1;
}

void ShmTracker::start_locked() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        throw std::runtime_error(std::string("ShmTracker: socketpair failed: ") + std::strerror(errno));
    const int owner_pidfd = pidfd_open(getpid());
    if (owner_pidfd < 0) {
        const int err = errno;
        close(sv[0]);
        close(sv[1]);
        throw std::runtime_error(std::string("ShmTracker: pidfd_open of this process failed: ") + std::strerror(err));
    }
    auto fail = [&](const std::string& what, int err) -> std::runtime_error {
        close(sv[0]);
        close(sv[1]);
        close(owner_pidfd);
        return std::runtime_error("ShmTracker: " + what + ": " + std::strerror(err));
    };
    const pid_t middle = fork();
    if (middle < 0) throw fail("fork failed", errno);
    if (middle == 0) {
        // The middle process: fork the tracker and leave it to the reaper.
        const pid_t tracker = fork();
        if (tracker == 0) tracker_main(sv[1], owner_pidfd);
        _exit(tracker < 0 ? 1 : 0);
    }
    int st = 0;
    while (waitpid(middle, &st, 0) < 0 && errno == EINTR) {}
    close(sv[1]);
    sv[1] = -1;
    close(owner_pidfd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        close(sv[0]);
        throw std::runtime_error("ShmTracker: the tracker process could not be forked");
    }
    pid_t tracker = -1;
    pollfd p{sv[0], POLLIN, 0};
    int rc = 0;
    while ((rc = poll(&p, 1, HELLO_TIMEOUT_MS)) < 0 && errno == EINTR) {}
    if (rc != 1 || recv(sv[0], &tracker, sizeof tracker, MSG_DONTWAIT) != static_cast<ssize_t>(sizeof tracker)) {
        close(sv[0]);
        throw std::runtime_error("ShmTracker: the tracker process did not start");
    }
    sock_ = sv[0];
    tracker_ = tracker;
    owner_ = getpid();
}

bool ShmTracker::send_locked(char op, const std::string& body) noexcept {
    char buf[MESSAGE_MAX];
    if (body.size() + 1 > sizeof buf) return false;
    buf[0] = op;
    std::copy(body.begin(), body.end(), buf + 1);  // a counted message, no terminator
    for (;;) {
        const ssize_t n = send(sock_, buf, body.size() + 1, MSG_NOSIGNAL);
        if (n == static_cast<ssize_t>(body.size() + 1)) return true;
        if (n < 0 && errno == EINTR) continue;
        return false;
    }
}

void ShmTracker::will_create(const std::string& body) {
    if (body.empty() || body.size() > SHM_NAME_MAX_BYTES)
        throw std::invalid_argument("ShmTracker: '" + body + "' is no shm name body");
    std::lock_guard lock(mu_);
    if (owner_ != getpid()) {
        // None yet, or the parent's (this is a forked child): its names are not ours.
        if (sock_ >= 0) close(sock_);
        sock_ = -1;
        live_.clear();
        start_locked();
    }
    live_.insert(body);
    if (send_locked('+', body)) return;
    // The tracker is gone: start another and tell it every live name.
    forget_locked();
    try {
        start_locked();
        for (const std::string& n : live_)
            if (!send_locked('+', n)) throw std::runtime_error("ShmTracker: the new tracker refused a name");
    } catch (...) {
        live_.erase(body);
        throw;
    }
}

void ShmTracker::unlinked(const std::string& body) noexcept {
    std::lock_guard lock(mu_);
    if (owner_ != getpid()) return;
    live_.erase(body);
    send_locked('-', body);
}

pid_t ShmTracker::pid() const {
    std::lock_guard lock(mu_);
    return owner_ == getpid() ? tracker_ : -1;
}

ShmTracker& process_shm_tracker() {
    static ShmTracker* tracker = new ShmTracker();  // never destroyed: see the header
    return *tracker;
}

}  // namespace simpler
