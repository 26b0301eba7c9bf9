#include "simpler/backing/cow_write_watch.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace simpler {

namespace {

enum : uint32_t { FREE = 0, WATCHING = 1, WRITTEN = 2 };

struct Entry {
    std::atomic<uint32_t> state{FREE};
    std::atomic<pid_t> pid{0};             // the process that watches
    std::atomic<uint64_t> begin{0}, end{0};  // the protected pages; begin == end: none
    int prot = PROT_READ | PROT_WRITE;     // what the pages are given back
};

Entry g_entries[MAX_COW_WATCHES];
std::atomic<size_t> g_high{0};  // entries [0, g_high) may be in use
std::mutex g_mu;
struct sigaction g_previous{};
bool g_installed = false;  // a forked child inherits the handler with the flag

uint64_t page_bytes() {
    static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    return page;
}

// A fault nobody here watches: the handler installed before this one takes it,
// or the default action (when the faulting instruction runs again, or at once
// for a signal another process sent).
void pass_on(int sig, siginfo_t* info, void* context) {
    if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    if (info == nullptr || info->si_code <= 0) raise(sig);  // sent, not a fault: delivered once this returns
}

void on_fault(int sig, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    if (info != nullptr && info->si_code > 0) {
        const uint64_t addr = reinterpret_cast<uint64_t>(info->si_addr);
        const pid_t self = getpid();
        const size_t high = g_high.load(std::memory_order_acquire);
        for (size_t i = 0; i < high; ++i) {
            Entry& e = g_entries[i];
            if (e.state.load(std::memory_order_acquire) == FREE || e.pid.load(std::memory_order_relaxed) != self)
                continue;
            const uint64_t begin = e.begin.load(std::memory_order_relaxed);
            const uint64_t end = e.end.load(std::memory_order_relaxed);
            if (addr < begin || addr >= end) continue;
            // The first write: the region is written, its pages writable again,
            // and the write runs again when this returns.
            if (mprotect(reinterpret_cast<void*>(begin), end - begin, e.prot) == 0) {
                e.state.store(WRITTEN, std::memory_order_release);
                errno = saved_errno;
                return;
            }
            break;
        }
    }
    errno = saved_errno;
    pass_on(sig, info, context);
}

void install_once() {
    if (g_installed) return;
    struct sigaction sa{};
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &g_previous) != 0)
        throw std::runtime_error(std::string("cannot install the SIGSEGV handler: ") + std::strerror(errno));
    g_installed = true;
}

// The protection of the mappings over [begin, end) from /proc/self/maps: their
// common PROT_* bits, or -1 when they differ or a page is unmapped.
int protection_of(uint64_t begin, uint64_t end) {
    FILE* maps = std::fopen("/proc/self/maps", "re");
    if (maps == nullptr) return -1;
    int prot = -2;  // none seen yet
    uint64_t covered = begin;
    char line[8192];  // a line holds a path of up to PATH_MAX bytes
    while (covered < end && std::fgets(line, sizeof line, maps) != nullptr) {
        char* cursor = nullptr;
        const uint64_t lo = std::strtoull(line, &cursor, 16);
        if (*cursor != '-') continue;
        const uint64_t hi = std::strtoull(cursor + 1, &cursor, 16);
        if (*cursor != ' ') continue;
        const char* perms = cursor + 1;
        if (hi <= covered || lo >= end) continue;
        if (lo > covered) break;  // a hole
        const int p =
            (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | (perms[2] == 'x' ? PROT_EXEC : 0);
        if (prot != -2 && p != prot) {
            prot = -1;
            break;
        }
        prot = p;
        covered = hi;
    }
    std::fclose(maps);
    return covered >= end && prot >= 0 ? prot : -1;
}

}  // namespace

CowWriteWatch start_cow_write_watch(uint64_t base, uint64_t nbytes, bool owns_pages) {
    const uint64_t page = page_bytes();
    const uint64_t end = base + nbytes;
    // The pages to protect: all of a runtime mapping, else those wholly inside.
    uint64_t first = owns_pages ? base & ~(page - 1) : (base + page - 1) & ~(page - 1);
    uint64_t last = owns_pages ? (end + page - 1) & ~(page - 1) : end & ~(page - 1);
    if (last < first) last = first;
    CowWriteWatch w;
    if (first == last) {
        w.head_at = base;  // no whole page: every byte is compared
        w.head.assign(reinterpret_cast<const uint8_t*>(base), reinterpret_cast<const uint8_t*>(end));
    } else {
        if (base < first) {
            w.head_at = base;
            w.head.assign(reinterpret_cast<const uint8_t*>(base), reinterpret_cast<const uint8_t*>(first));
        }
        if (last < end) {
            w.tail_at = last;
            w.tail.assign(reinterpret_cast<const uint8_t*>(last), reinterpret_cast<const uint8_t*>(end));
        }
    }
    int prot = PROT_READ | PROT_WRITE;
    if (first < last && !owns_pages) {
        prot = protection_of(first, last);
        if (prot < 0 || (prot & PROT_WRITE) == 0) first = last;  // memory the process cannot write as it is
    }
    std::lock_guard lock(g_mu);
    install_once();
    const pid_t self = getpid();
    size_t slot = MAX_COW_WATCHES;
    const size_t high = g_high.load(std::memory_order_relaxed);
    for (size_t i = 0; i < high && slot == MAX_COW_WATCHES; ++i) {
        // A forked child's copy of its parent's entries is free to reuse.
        if (g_entries[i].state.load(std::memory_order_relaxed) == FREE ||
            g_entries[i].pid.load(std::memory_order_relaxed) != self)
            slot = i;
    }
    if (slot == MAX_COW_WATCHES) {
        if (high == MAX_COW_WATCHES)
            throw std::runtime_error("more than " + std::to_string(MAX_COW_WATCHES) +
                                     " FORK_COW regions are watched in this process");
        slot = high;
    }
    Entry& e = g_entries[slot];
    e.state.store(FREE, std::memory_order_relaxed);
    e.pid.store(self, std::memory_order_relaxed);
    e.begin.store(first, std::memory_order_relaxed);
    e.end.store(last, std::memory_order_relaxed);
    e.prot = prot;
    e.state.store(WATCHING, std::memory_order_release);
    if (slot == high) g_high.store(high + 1, std::memory_order_release);
    if (first < last && mprotect(reinterpret_cast<void*>(first), last - first, prot & ~PROT_WRITE) != 0) {
        const int err = errno;
        e.state.store(FREE, std::memory_order_release);
        throw std::runtime_error(std::string("cannot write-protect the region's pages: ") + std::strerror(err));
    }
    w.slot = static_cast<int>(slot);
    return w;
}

bool cow_written(const CowWriteWatch& w) noexcept {
    if (w.slot < 0) return false;
    const Entry& e = g_entries[w.slot];
    if (e.pid.load(std::memory_order_relaxed) == getpid() && e.state.load(std::memory_order_acquire) == WRITTEN)
        return true;
    if (!w.head.empty() && std::memcmp(reinterpret_cast<const void*>(w.head_at), w.head.data(), w.head.size()) != 0)
        return true;
    return !w.tail.empty() && std::memcmp(reinterpret_cast<const void*>(w.tail_at), w.tail.data(), w.tail.size()) != 0;
}

void stop_cow_write_watch(CowWriteWatch& w) noexcept {
    if (w.slot < 0) return;
    Entry& e = g_entries[w.slot];
    try {
        std::lock_guard lock(g_mu);
        if (e.pid.load(std::memory_order_relaxed) == getpid() && e.state.load(std::memory_order_relaxed) != FREE) {
            const uint64_t begin = e.begin.load(std::memory_order_relaxed);
            const uint64_t end = e.end.load(std::memory_order_relaxed);
            if (begin < end) (void)mprotect(reinterpret_cast<void*>(begin), end - begin, e.prot);
            e.state.store(FREE, std::memory_order_release);
        }
    } catch (...) {
        // Only the lock can throw; the entry stays (the pages stay as they are).
    }
    w = CowWriteWatch{};
}

size_t cow_watches() noexcept {
    const pid_t self = getpid();
    size_t n = 0;
    const size_t high = g_high.load(std::memory_order_acquire);
    for (size_t i = 0; i < high; ++i) {
        if (g_entries[i].state.load(std::memory_order_relaxed) != FREE &&
            g_entries[i].pid.load(std::memory_order_relaxed) == self)
            ++n;
    }
    return n;
}

}  // namespace simpler
