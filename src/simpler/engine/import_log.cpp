#include "simpler/engine/import_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace simpler {

ImportLog::ImportLog(uint32_t chip_index) : chip_index_(chip_index) {
    const char* dir = std::getenv("SIMPLER_IMPORT_LOG");  // NOLINT(concurrency-mt-unsafe): read once, at start
    if (dir == nullptr || *dir == '\0') return;
    const std::string path = std::string(dir) + "/chip-" + std::to_string(getpid()) + ".log";
    // A new file of its own: never one (or a link) someone put at that name before.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
}

ImportLog::~ImportLog() {
    if (fd_ >= 0) ::close(fd_);
}

void ImportLog::record(const char* event, const ImportRegistry& registry) const noexcept {
    if (fd_ < 0) return;
    try {
        // Appended piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict, GCC bug 105329) on
        // `"literal" + std::string&&`.
        std::string line = "chip ";
        line += std::to_string(chip_index_);
        line += " pid ";
        line += std::to_string(getpid());
        line += ' ';
        line += event;
        line += " maps ";
        line += std::to_string(registry.stats().maps);
        line += " cache";
        for (const CanonicalIdentity& id : registry.identities()) {
            line += ' ';
            line += id.to_string();
        }
        line += '\n';
        (void)!::write(fd_, line.data(), line.size());
    } catch (...) {  // NOLINT(bugprone-empty-catch): a diagnostic that cannot be written is skipped
    }
}

}  // namespace simpler
