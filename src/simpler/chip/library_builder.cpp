#include "simpler/chip/library_builder.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "simpler/chip/content_hash.h"
#include "simpler/chip/private_cache.h"
#include "simpler/chip/status.h"

extern char** environ;

namespace simpler::chip {
namespace fs = std::filesystem;
namespace {

std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return (v != nullptr && v[0] != '\0') ? std::string(v) : fallback;
}

bool read_file(const fs::path& p, std::string& out) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

void add_abi_headers(Sha256& h, const std::string& include_dir) {
    for (const char* sub : {"simpler/chip", "simpler/task_interface"}) {
        const fs::path dir = fs::path(include_dir) / sub;
        std::vector<fs::path> headers;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".h") headers.push_back(e.path());
        std::sort(headers.begin(), headers.end());
        for (const fs::path& p : headers) {
            std::string text;
            if (!read_file(p, text)) continue;
            h.update_field(p.filename().string());
            h.update_field(text);
        }
    }
}

// Runs argv with stdout and stderr appended to `log`; returns the exit status
// (or -1 when it could not start / did not exit normally).
int run_to_log(const std::vector<std::string>& argv, const std::string& log) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        std::ofstream(log, std::ios::app) << "cannot start " << argv[0] << ": " << std::strerror(rc) << "\n";
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The header that proves a folder is the root of the chip ABI headers.
constexpr const char* ABI_HEADER = "simpler/chip/library_abi.h";

// An object of this translation unit: dladdr names the binary it was loaded from.
const char g_anchor = 0;

// The include dir a build uses and where it came from (for the refusal).
struct IncludeDirChoice {
    std::string dir;
    std::string origin;
};

IncludeDirChoice choose_include_dir(const LibraryBuildConfig& config) {
    if (!config.include_dir.empty()) return {config.include_dir, "LibraryBuildConfig::include_dir"};
    if (const char* v = std::getenv("SIMPLER_CHIP_INCLUDE_DIR"); v != nullptr && v[0] != '\0')
        return {v, "$SIMPLER_CHIP_INCLUDE_DIR"};
    Dl_info info{};
    const bool named = dladdr(&g_anchor, &info) != 0 && info.dli_fname != nullptr;
    return {named ? chip_headers_beside(info.dli_fname) : std::string{},
            "the headers installed beside simpler's binary"};
}

// What a library's .sum file records of it: its size and SHA-256.
std::string library_sum(std::string_view bytes) {
    return std::to_string(bytes.size()) + " " + sha256_hex(bytes) + "\n";
}

// Whether the cached library `out` may be loaded: it and its .sum file are
// this user's alone (private_cache.h), and it has the size and hash recorded
// when it was built.
bool cached_library_matches(const fs::path& out, const fs::path& sum) {
    const std::optional<std::string> recorded = read_private_file(sum.string());
    if (!recorded) return false;
    const std::optional<std::string> bytes = read_private_file(out.string());
    return bytes && *recorded == library_sum(*bytes);
}

}  // namespace

std::string default_chip_cache_dir() { return private_cache_folder(requested_cache_dir()); }

std::string chip_headers_beside(const std::string& binary_path) {
    if (binary_path.empty()) return {};
    const fs::path include = fs::path(binary_path).parent_path() / "include";
    std::error_code ec;
    return fs::is_regular_file(include / ABI_HEADER, ec) ? include.string() : std::string{};
}

std::string default_chip_include_dir() { return choose_include_dir(LibraryBuildConfig{}).dir; }

LibraryBuild build_library(const std::string& source_path, const LibraryBuildConfig& config) {
    std::string source;
    if (!read_file(source_path, source))
        throw std::invalid_argument("build_library: cannot read source " + source_path);
    const std::string compiler = config.compiler.empty() ? env_or("CXX", "c++") : config.compiler;
    const IncludeDirChoice choice = choose_include_dir(config);
    const std::string& include_dir = choice.dir;
    if (include_dir.empty())
        throw std::runtime_error(
            "build_library: no simpler headers to compile " + source_path +
            " against: set LibraryBuildConfig::include_dir or $SIMPLER_CHIP_INCLUDE_DIR to the folder that holds " +
            ABI_HEADER + " (CMake: simpler_INCLUDE_DIR; Python: simpler.get_include())");
    if (std::error_code ec; !fs::is_regular_file(fs::path(include_dir) / ABI_HEADER, ec))
        throw std::runtime_error("build_library: the include dir " + include_dir + " (from " + choice.origin +
                                 ") holds no " + ABI_HEADER);
    const fs::path cache =
        private_cache_folder(config.cache_dir.empty() ? requested_cache_dir() : config.cache_dir, "chip-libs");

    Sha256 h;
    h.update_field("simpler chip library v1");
    h.update_field(std::to_string(CHIP_ABI_VERSION));
    h.update_field(compiler);
    for (const std::string& f : config.flags) h.update_field(f);
    h.update_field(include_dir);
    h.update_field(source);
    add_abi_headers(h, include_dir);
    const std::string key = h.hex();
    const fs::path out = cache / (key + ".so");

    const fs::path sum = cache / (key + ".so.sum");
    if (cached_library_matches(out, sum)) return LibraryBuild{out.string(), key, true};

    // Built in a folder of its own (mkdtemp: nobody can foresee its name), then moved into place.
    const fs::path work = make_private_temp_folder(cache.string());
    std::error_code ec;
    const fs::path tmp = work / "library.so";
    const fs::path log = work / "build.log";
    std::vector<std::string> argv{compiler, "-std=c++20", "-shared", "-fPIC", "-fvisibility=hidden"};
    argv.insert(argv.end(), config.flags.begin(), config.flags.end());
    argv.insert(argv.end(), {"-I" + include_dir, "-o", tmp.string(), source_path});
    const int rc = run_to_log(argv, log.string());
    std::string diagnostics;
    read_file(log, diagnostics);
    if (rc != 0) {
        fs::remove_all(work, ec);
        if (diagnostics.size() > 4000) diagnostics = diagnostics.substr(0, 4000) + "\n...";
        throw std::runtime_error("build_library: " + compiler + " failed on " + source_path + " (exit " +
                                 std::to_string(rc) + "):\n" + diagnostics);
    }
    const std::optional<std::string> built = read_private_file(tmp.string());
    // Nobody but this user may write it, whatever the umask gave the compiler's output.
    const bool placed = built && chmod(tmp.c_str(), 0755) == 0 &&
                        write_private_file(sum.string(), library_sum(*built)).empty() &&
                        std::rename(tmp.c_str(), out.c_str()) == 0;
    fs::remove_all(work, ec);
    if (!placed) throw std::runtime_error("build_library: cannot move the built library into " + out.string());
    return LibraryBuild{out.string(), key, false};
}

}  // namespace simpler::chip
