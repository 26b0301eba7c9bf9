#include "simpler/ipc/child_watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "simpler/ipc/child_process.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace simpler::ipc {
namespace {

// The wait status waitpid would return, rebuilt from waitid's siginfo.
int wait_status_of(const siginfo_t& info) noexcept {
    switch (info.si_code) {
        case CLD_EXITED: return (info.si_status & 0xff) << 8;
        case CLD_KILLED: return info.si_status & 0x7f;
        case CLD_DUMPED: return (info.si_status & 0x7f) | 0x80;
        default: return UNKNOWN_WAIT_STATUS;
    }
}

int peek_exit_status(int pidfd) noexcept {
    siginfo_t info{};
    for (;;) {
        const int rc =
            waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED | WNOHANG | WNOWAIT);
        if (rc == 0) return wait_status_of(info);
        if (errno != EINTR) return UNKNOWN_WAIT_STATUS;
    }
}

}  // namespace

ChildWatcher::ChildWatcher(const std::vector<WatchedChild>& children, OnExit on_exit) : on_exit_(std::move(on_exit)) {
    auto cleanup = [this] {
        for (int fd : pidfds_)
            if (fd >= 0) close(fd);
        if (stop_fd_ >= 0) close(stop_fd_);
    };
    for (const WatchedChild& c : children) {
        const int fd = c.pidfd >= 0 ? fcntl(c.pidfd, F_DUPFD_CLOEXEC, 0) : -1;
        if (fd < 0) {
            const int err = errno;
            cleanup();
            throw std::runtime_error("ChildWatcher: cannot duplicate the pidfd of child " + std::to_string(c.pid) +
                                     ": " + std::strerror(err));
        }
        pidfds_.push_back(fd);
    }
    stop_fd_ = eventfd(0, EFD_CLOEXEC);
    if (stop_fd_ < 0) {
        const int err = errno;
        cleanup();
        throw std::runtime_error(std::string("ChildWatcher: eventfd failed: ") + std::strerror(err));
    }
    thread_ = std::thread([this] { run(); });
}

ChildWatcher::~ChildWatcher() { stop(); }

void ChildWatcher::stop() noexcept {
    if (thread_.joinable()) {
        const uint64_t one = 1;
        while (write(stop_fd_, &one, sizeof one) < 0 && errno == EINTR) {}
        thread_.join();
    }
    for (int& fd : pidfds_) {
        if (fd >= 0) close(fd);
        fd = -1;
    }
    if (stop_fd_ >= 0) close(stop_fd_);
    stop_fd_ = -1;
}

void ChildWatcher::run() noexcept {
    std::vector<pollfd> fds(pidfds_.size() + 1);
    for (size_t i = 0; i < pidfds_.size(); ++i) fds[i] = pollfd{pidfds_[i], POLLIN, 0};
    fds.back() = pollfd{stop_fd_, POLLIN, 0};
    for (;;) {
        const int rc = poll(fds.data(), fds.size(), -1);
        if (rc < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds.back().revents != 0) return;
        for (size_t i = 0; i + 1 < fds.size(); ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            const int status = peek_exit_status(fds[i].fd);
            fds[i].fd = -1;  // poll ignores negative descriptors: report once
            on_exit_(i, status);
        }
    }
}

}  // namespace simpler::ipc
