#include "simpler/engine/device_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "simpler/chip/device_catalog.h"
#include "simpler/ipc/child_process.h"

namespace simpler {
namespace {

// One line per device, fields split by tabs; a failure is one line "error\t<message>".
std::string field(std::string s) {
    for (char& c : s)
        if (c == '\t' || c == '\n') c = ' ';
    return s;
}

std::string encode(const std::vector<chip::DeviceFacts>& found) {
    std::string out;
    for (const chip::DeviceFacts& f : found)
        out += "device\t" + std::to_string(static_cast<int>(f.kind)) + "\t" + field(f.platform) + "\t" + field(f.name) +
               "\t" + field(f.version) + "\t" + field(f.uuid) + "\t" + std::to_string(f.memory_bytes) + "\t" +
               std::to_string(f.compute_units) + "\t" + std::to_string(f.concurrent_kernels) + "\t" +
               (f.unified_host_memory ? "1" : "0") + "\n";
    return out;
}

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> parts;
    size_t at = 0;
    for (;;) {
        const size_t tab = line.find('\t', at);
        parts.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
        if (tab == std::string::npos) return parts;
        at = tab + 1;
    }
}

uint64_t number(const std::string& s) {
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') throw std::runtime_error("device probe: a malformed answer ('" + s + "')");
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
}

std::vector<chip::DeviceFacts> decode(const std::string& text) {
    std::vector<chip::DeviceFacts> found;
    size_t at = 0;
    while (at < text.size()) {
        const size_t nl = text.find('\n', at);
        const std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        at = nl == std::string::npos ? text.size() : nl + 1;
        const std::vector<std::string> p = split(line);
        if (p.size() == 2 && p[0] == "error") throw std::runtime_error(p[1]);
        if (p.size() != 10 || p[0] != "device")
            throw std::runtime_error("device probe: a malformed answer ('" + line + "')");
        chip::DeviceFacts f;
        const uint64_t kind = number(p[1]);
        if (kind > static_cast<uint64_t>(chip::LAST_DEVICE_KIND))
            throw std::runtime_error("device probe: a malformed answer (device kind " + p[1] + ")");
        f.kind = static_cast<chip::DeviceKind>(kind);
        f.platform = p[2];
        f.name = p[3];
        f.version = p[4];
        f.uuid = p[5];
        f.memory_bytes = number(p[6]);
        f.compute_units = static_cast<uint32_t>(number(p[7]));
        f.concurrent_kernels = static_cast<uint32_t>(number(p[8]));
        f.unified_host_memory = p[9] == "1";
        found.push_back(std::move(f));
    }
    return found;
}

void write_all(int fd, const std::string& s) noexcept {
    size_t done = 0;
    while (done < s.size()) {
        const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

}  // namespace

std::vector<chip::DeviceFacts> probe_devices(const chip::DeviceChoice& choice, std::chrono::milliseconds timeout) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("device probe: pipe failed: ") + std::strerror(errno));
    ipc::ChildProcess child;
    try {
        child = ipc::ChildProcess::spawn([&]() -> int {
            ::close(fds[0]);
            std::string answer;
            int status = 0;
            try {
                answer = encode(chip::find_devices(choice));
            } catch (const std::exception& e) {
                answer = "error\t" + field(e.what()) + "\n";
                status = 1;
            }
            write_all(fds[1], answer);
            ::close(fds[1]);
            return status;
        });
    } catch (...) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw;
    }
    ::close(fds[1]);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string text;
    bool eof = false;
    while (!eof) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fds[0], POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        char buf[4096];
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            eof = true;
        } else {
            text.append(buf, static_cast<size_t>(n));
        }
    }
    ::close(fds[0]);
    const int status = child.stop(ipc::Clock::now() + std::chrono::seconds(1));
    if (!eof)
        throw std::runtime_error("device probe: the child asking for " +
                                 std::string(chip::device_kind_name(choice.kind)) + " devices gave no answer within " +
                                 std::to_string(timeout.count()) + " ms");
    if (text.empty())
        throw std::runtime_error("device probe: the child asking for " +
                                 std::string(chip::device_kind_name(choice.kind)) + " devices " +
                                 ipc::describe_wait_status(status) + " without an answer");
    return decode(text);
}

}  // namespace simpler
