#include "simpler/engine/import_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace simpler {

ImportLog::ImportLog(uint32_t chip_index) : chip_index_(chip_index) {
    const char* dir = std::getenv("SIMPLER_IMPORT_LOG");  // NOLINT(concurrency-mt-unsafe): read once, at start
    if (dir == nullptr || *dir == '\0') return;
    const std::string path = std::string(dir) + "/chip-" + std::to_string(getpid()) + ".log";
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

ImportLog::~ImportLog() {
    if (fd_ >= 0) ::close(fd_);
}

void ImportLog::record(const char* event, const ImportRegistry& registry) const noexcept {
    if (fd_ < 0) return;
    try {
        std::string line = "chip " + std::to_string(chip_index_) + " pid " + std::to_string(getpid()) + " " + event +
                           " maps " + std::to_string(registry.stats().maps) + " cache";
        for (const CanonicalIdentity& id : registry.identities()) line += " " + id.to_string();
        line += "\n";
        (void)!::write(fd_, line.data(), line.size());
    } catch (...) {  // NOLINT(bugprone-empty-catch): a diagnostic that cannot be written is skipped
    }
}

}  // namespace simpler
