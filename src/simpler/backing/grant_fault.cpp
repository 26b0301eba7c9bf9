#include "simpler/backing/grant_fault.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>

namespace simpler {

namespace {

constexpr size_t MESSAGE_BYTES = 192;
constexpr size_t PROCESS_BYTES = 64;

struct Range {
    std::atomic<uint64_t> begin{0};  // 0: a free entry
    uint64_t end = 0;
    char message[MESSAGE_BYTES] = {};
};

Range g_ranges[MAX_GRANT_FAULT_RANGES];
std::mutex g_mu;
std::atomic<size_t> g_listed{0};
GrantFaultReporter g_reporter = nullptr;
char g_process[PROCESS_BYTES] = "the child process";
struct sigaction g_previous_segv{};
struct sigaction g_previous_bus{};
bool g_installed = false;

// Appends s to buf[pos..cap) and returns the new position (async-signal-safe).
size_t append(char* buf, size_t pos, size_t cap, const char* s) noexcept {
    while (*s != '\0' && pos + 1 < cap) buf[pos++] = *s++;
    buf[pos] = '\0';
    return pos;
}

size_t append_u64(char* buf, size_t pos, size_t cap, uint64_t v) noexcept {
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    char text[24];
    for (size_t i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
    text[n] = '\0';
    return append(buf, pos, cap, text);
}

// Formats the message for a fault at addr into out; 0 when addr is not listed.
size_t format_fault(uint64_t addr, char* out, size_t cap) noexcept {
    for (const Range& r : g_ranges) {
        const uint64_t begin = r.begin.load(std::memory_order_acquire);
        if (begin == 0 || addr < begin || addr >= r.end) continue;
        size_t pos = append(out, 0, cap, r.message);
        pos = append(out, pos, cap, " at byte offset ");
        pos = append_u64(out, pos, cap, addr - begin);
        pos = append(out, pos, cap, "; ");
        pos = append(out, pos, cap, g_process);
        pos = append(out, pos, cap,
                     " was ended (its state after the faulting write cannot be trusted) and is lost to this Worker");
        return pos;
    }
    return 0;
}

void on_fault(int sig, siginfo_t* info, void* /*context*/) {
    char message[512];
    const size_t n = format_fault(reinterpret_cast<uint64_t>(info->si_addr), message, sizeof message);
    if (n == 0) {
        // Not a grant fault: the handler before ours (or the default action)
        // takes it when the faulting instruction runs again.
        sigaction(sig, sig == SIGSEGV ? &g_previous_segv : &g_previous_bus, nullptr);
        return;
    }
    if (g_reporter != nullptr) g_reporter(message, n);
    _exit(GRANT_FAULT_EXIT_STATUS);
}

}  // namespace

bool list_read_only_range(uint64_t begin, uint64_t nbytes, const BufferDescriptor& d) noexcept {
    if (begin == 0 || nbytes == 0) return false;
    std::lock_guard lock(g_mu);
    for (Range& r : g_ranges) {
        if (r.begin.load(std::memory_order_relaxed) != 0) continue;
        const bool read_grant = d.access == static_cast<uint8_t>(AccessMode::READ);
        std::string m = "write to read-only bytes of buffer " + d.identity.to_string() + " (" +
                        backend_kind_name(d.backend_kind) + ", grants " + access_mode_name(d.access) +
                        (read_grant ? ")" : "; an INPUT argument is mapped read-only)");
        std::memset(r.message, 0, sizeof r.message);
        std::memcpy(r.message, m.data(), std::min(m.size(), sizeof r.message - 1));
        r.end = begin + nbytes;
        r.begin.store(begin, std::memory_order_release);
        g_listed.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    return false;
}

void delist_read_only_range(uint64_t begin) noexcept {
    if (begin == 0) return;
    std::lock_guard lock(g_mu);
    for (Range& r : g_ranges) {
        if (r.begin.load(std::memory_order_relaxed) != begin) continue;
        r.begin.store(0, std::memory_order_release);
        g_listed.fetch_sub(1, std::memory_order_relaxed);
        return;
    }
}

size_t listed_read_only_ranges() noexcept { return g_listed.load(std::memory_order_relaxed); }

void install_grant_fault_handler(GrantFaultReporter reporter, const char* process) {
    g_reporter = reporter;
    std::memset(g_process, 0, sizeof g_process);
    std::strncpy(g_process, process, sizeof g_process - 1);
    if (g_installed) return;
    struct sigaction sa{};
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous_segv);
    sigaction(SIGBUS, &sa, &g_previous_bus);
    g_installed = true;
}

std::string grant_fault_message(uint64_t addr) {
    char message[512];
    const size_t n = format_fault(addr, message, sizeof message);
    return std::string(message, n);
}

}  // namespace simpler
