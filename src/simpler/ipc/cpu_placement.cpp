#include "simpler/ipc/cpu_placement.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace simpler::ipc {

std::optional<uint32_t> runnable_tasks() noexcept {
    // "0.47 1.25 1.70 2/345 1234": the fourth field is runnable/total.
    const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char buf[128];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return std::nullopt;
    buf[n] = '\0';
    const char* p = buf;
    for (int field = 0; field < 3; ++field) {
        p = std::strchr(p, ' ');
        if (p == nullptr) return std::nullopt;
        ++p;
    }
    char* end = nullptr;
    const unsigned long runnable = std::strtoul(p, &end, 10);
    if (end == p || *end != '/') return std::nullopt;
    return static_cast<uint32_t>(runnable);
}

StepAside step_off_current_cpu() noexcept {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    // Over CPU_SETSIZE CPUs the call fails (EINVAL): such a machine is left alone.
    if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return StepAside::NOT_MOVED;
    const int cpu = ::sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2) return StepAside::PINNED;
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    const std::optional<uint32_t> runnable = runnable_tasks();
    if (online < 2 || !runnable || *runnable > static_cast<uint64_t>(online)) return StepAside::NO_ROOM;
    cpu_set_t elsewhere = mask;
    CPU_CLR(cpu, &elsewhere);
    if (::sched_setaffinity(0, sizeof elsewhere, &elsewhere) != 0) return StepAside::NOT_MOVED;
    const int now_on = ::sched_getcpu();
    // The mask as it was (the kernel returned it a moment ago); the thread stays
    // where the kernel just put it.
    (void)::sched_setaffinity(0, sizeof mask, &mask);
    return now_on != cpu && now_on >= 0 ? StepAside::MOVED : StepAside::NOT_MOVED;
}

}  // namespace simpler::ipc
