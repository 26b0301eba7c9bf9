#include "simpler/chip/private_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>

namespace simpler::chip {
namespace fs = std::filesystem;
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): the environment is not written here
    return v != nullptr ? std::string(v) : std::string();
}

std::string mode_text(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

// Why `st` (of `what` at `path`) may not be trusted, empty when it may.
std::string owner_problem(const struct stat& st, const std::string& what, const std::string& path) {
    const uid_t me = geteuid();
    if (st.st_uid != me)
        return what + " " + path + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
               std::to_string(me) + ")";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return what + " " + path + " (mode " + mode_text(st.st_mode) + ") may be written by group or others";
    return {};
}

std::string errno_text(const std::string& what, const std::string& path, int err) {
    return what + " " + path + ": " + std::strerror(err);
}

// Makes `folder` (mode 0700; missing parents with the default mode) unless it
// exists, then judges it.
std::string ensure_folder(const fs::path& folder) {
    struct stat st{};
    if (lstat(folder.c_str(), &st) != 0 && errno == ENOENT) {
        std::error_code ec;
        fs::create_directories(folder.parent_path(), ec);
        if (mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) return errno_text("cannot create", folder, errno);
    }
    return folder_problem(folder);
}

// Both `root` and root/sub usable: empty; else why not.
std::string ensure_cache(const fs::path& root, const std::string& sub) {
    std::string why = ensure_folder(root);
    if (why.empty() && !sub.empty()) why = ensure_folder(root / sub);
    return why;
}

std::mutex g_said_mu;
std::set<std::string> g_said;  // refusals already written to stderr by this process

void say_refused(const std::string& why, const std::string& instead) {
    std::lock_guard lock(g_said_mu);
    if (!g_said.insert(why).second) return;
    std::fprintf(stderr, "simpler: not using the chip cache folder: %s; using %s instead\n", why.c_str(),
                 instead.c_str());
}

// mkdtemp of `tmpl` (ending in XXXXXX): the folder made (mode 0700); throws
// std::runtime_error naming `what` and the template.
std::string made_by_mkdtemp(std::string tmpl, const std::string& what) {
    const std::string asked = tmpl;
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error(errno_text(what, asked, errno));
    return tmpl;
}

// A folder for this process alone, made once by mkdtemp beside the fallback.
std::string process_fallback() {
    static std::mutex mu;
    static std::string made;
    std::lock_guard lock(mu);
    if (made.empty() || !folder_problem(made).empty())
        made = made_by_mkdtemp(fallback_cache_dir() + "-XXXXXX", "no private chip cache folder: mkdtemp");
    return made;
}

}  // namespace

std::string requested_cache_dir() {
    if (std::string v = env("SIMPLER_CACHE_DIR"); !v.empty()) return v;
    if (const std::string v = env("XDG_CACHE_HOME"); !v.empty()) return (fs::path(v) / "simpler").string();
    if (const std::string v = env("HOME"); !v.empty()) return (fs::path(v) / ".cache" / "simpler").string();
    if (const std::string v = env("XDG_RUNTIME_DIR"); !v.empty()) return (fs::path(v) / "simpler").string();
    return fallback_cache_dir();
}

std::string fallback_cache_dir() {
    std::string dir = "/tmp/simpler-cache-";
    dir += std::to_string(geteuid());
    return dir;
}

std::string folder_problem(const std::string& folder) {
    struct stat st{};
    if (stat(folder.c_str(), &st) != 0) return errno_text("cannot use folder", folder, errno);
    if (!S_ISDIR(st.st_mode)) return "folder " + folder + " is not a directory";
    return owner_problem(st, "folder", folder);
}

std::string private_cache_folder(const std::string& root, const std::string& sub) {
    const std::string why = ensure_cache(root, sub);
    if (why.empty()) return sub.empty() ? root : (fs::path(root) / sub).string();
    fs::path instead = fallback_cache_dir();
    if (!ensure_cache(instead, sub).empty()) instead = process_fallback();
    if (const std::string again = ensure_cache(instead, sub); !again.empty())
        throw std::runtime_error("no private chip cache folder: " + again);
    const std::string out = sub.empty() ? instead.string() : (instead / sub).string();
    say_refused(why, out);
    return out;
}

std::string file_problem(const std::string& path) {
    struct stat st{};
    if (lstat(path.c_str(), &st) != 0) return errno_text("cannot use file", path, errno);
    if (S_ISLNK(st.st_mode)) return "file " + path + " is a symbolic link";
    if (!S_ISREG(st.st_mode)) return "file " + path + " is not a regular file";
    return owner_problem(st, "file", path);
}

std::optional<std::string> read_private_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat st{};
    std::optional<std::string> out;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && owner_problem(st, "file", path).empty()) {
        std::string bytes;
        char buf[1 << 16];
        ssize_t n = 0;
        while ((n = ::read(fd, buf, sizeof buf)) > 0) bytes.append(buf, static_cast<size_t>(n));
        if (n == 0) out = std::move(bytes);
    }
    ::close(fd);
    return out;
}

std::string write_private_file(const std::string& path, std::string_view bytes) {
    const fs::path target(path);
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on `"literal" + std::string&&`.
    std::string leaf = ".";
    leaf += target.filename().string();
    leaf += ".XXXXXX";
    std::string name = (target.parent_path() / leaf).string();
    const int fd = mkostemp(name.data(), O_CLOEXEC);  // O_CREAT | O_EXCL, mode 0600; fills in the X's
    if (fd < 0) return errno_text("cannot create a temporary beside", path, errno);
    size_t done = 0;
    int err = 0;
    while (done < bytes.size() && err == 0) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n > 0)
            done += static_cast<size_t>(n);
        else if (n < 0 && errno != EINTR)
            err = errno;
    }
    if (::close(fd) != 0 && err == 0) err = errno;
    std::string why = err != 0 ? errno_text("cannot write", name, err) : std::string();
    if (why.empty() && std::rename(name.c_str(), path.c_str()) != 0)
        why = errno_text("cannot rename a file to", path, errno);
    if (!why.empty()) ::unlink(name.c_str());
    return why;
}

std::string make_private_temp_folder(const std::string& folder) {
    return made_by_mkdtemp((fs::path(folder) / "build.XXXXXX").string(), "cannot create a folder like");
}

}  // namespace simpler::chip
