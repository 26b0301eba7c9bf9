#include "simpler/ipc/process_cpu.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

namespace simpler::ipc {
namespace {

// The fields of /proc/<pid>/stat after "pid (comm) ", which may hold spaces
// and parentheses; the last ')' ends comm.
std::optional<std::vector<std::string>> stat_fields(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    FILE* f = std::fopen(path, "re");
    if (f == nullptr) return std::nullopt;
    char buf[2048];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* close_paren = std::strrchr(buf, ')');
    if (close_paren == nullptr) return std::nullopt;
    std::vector<std::string> fields;
    const char* p = close_paren + 1;
    while (*p != '\0') {
        while (*p == ' ' || *p == '\n') ++p;
        const char* start = p;
        while (*p != '\0' && *p != ' ' && *p != '\n') ++p;
        if (p > start) fields.emplace_back(start, p);
    }
    return fields;
}

// Field numbers as in proc(5): state is field 3, the first after comm.
std::optional<uint64_t> field_u64(const std::vector<std::string>& fields, size_t proc5_number) {
    const size_t i = proc5_number - 3;
    if (i >= fields.size()) return std::nullopt;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(fields[i].c_str(), &end, 10);
    if (end == fields[i].c_str() || *end != '\0') return std::nullopt;
    return static_cast<uint64_t>(v);
}

std::map<pid_t, uint64_t> sample(pid_t root) {
    std::map<pid_t, uint64_t> ticks;
    for (pid_t pid : process_tree(root)) {
        if (std::optional<uint64_t> t = process_cpu_ticks(pid)) ticks[pid] = *t;
    }
    return ticks;
}

}  // namespace

std::optional<uint64_t> process_cpu_ticks(pid_t pid) noexcept {
    try {
        const auto fields = stat_fields(pid);
        if (!fields) return std::nullopt;
        const auto utime = field_u64(*fields, 14);
        const auto stime = field_u64(*fields, 15);
        if (!utime || !stime) return std::nullopt;
        return *utime + *stime;
    } catch (...) {
        return std::nullopt;
    }
}

std::vector<pid_t> process_tree(pid_t root) {
    std::multimap<pid_t, pid_t> children;  // ppid -> pid
    if (DIR* d = opendir("/proc")) {
        while (dirent* e = readdir(d)) {
            char* end = nullptr;
            const long pid = std::strtol(e->d_name, &end, 10);
            if (end == e->d_name || *end != '\0' || pid <= 0) continue;
            const auto fields = stat_fields(static_cast<pid_t>(pid));
            if (!fields) continue;
            if (const auto ppid = field_u64(*fields, 4)) {
                children.emplace(static_cast<pid_t>(*ppid), static_cast<pid_t>(pid));
            }
        }
        closedir(d);
    }
    std::vector<pid_t> tree;
    if (process_cpu_ticks(root)) tree.push_back(root);
    for (size_t i = 0; i < tree.size(); ++i) {
        auto [lo, hi] = children.equal_range(tree[i]);
        for (auto it = lo; it != hi; ++it) tree.push_back(it->second);
    }
    return tree;
}

TreeCpuUsage measure_tree_cpu(pid_t root, std::chrono::milliseconds interval) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::map<pid_t, uint64_t> before = sample(root);
    std::this_thread::sleep_for(interval);
    const std::map<pid_t, uint64_t> after = sample(root);
    const auto t1 = std::chrono::steady_clock::now();
    uint64_t ticks = 0;
    for (const auto& [pid, t] : after) {
        const auto it = before.find(pid);
        const uint64_t start = it == before.end() ? 0 : it->second;
        if (t > start) ticks += t - start;
    }
    TreeCpuUsage u;
    u.cpu_seconds = static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
    u.wall_seconds = std::chrono::duration<double>(t1 - t0).count();
    u.processes = after.size();
    return u;
}

}  // namespace simpler::ipc
