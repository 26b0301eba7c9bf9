// ImportLog: a chip child's import cache as a diagnostic record. When the
// environment variable SIMPLER_IMPORT_LOG names a directory, each chip child
// appends one line to <dir>/chip-<pid>.log after every task and every forget:
//
//     chip 1 pid 4242 task maps 1 cache 7fc9…:3@g2 7fc9…:5@g1
//     chip 1 pid 4242 forget maps 1 cache 7fc9…:5@g1
//
// (the event, the registry's map count so far, the identities its cache holds
// now). The file is created O_CREAT | O_EXCL | O_NOFOLLOW (mode 0600): a file
// or link already at its name disables the log rather than being written
// through. Tests read it to see what a chip several levels down mapped and forgot;
// unset, nothing is opened or written. The variable is read when the lane
// starts, so a child forked after it is set logs, at any depth of a tree.
#pragma once

#include <cstdint>
#include <string>

#include "simpler/backing/import_registry.h"

namespace simpler {

class ImportLog {
public:
    // Opens the log of this chip child when SIMPLER_IMPORT_LOG is set (a failure to open disables it).
    explicit ImportLog(uint32_t chip_index);
    ImportLog(const ImportLog&) = delete;
    ImportLog& operator=(const ImportLog&) = delete;
    ~ImportLog();

    [[nodiscard]] bool enabled() const noexcept { return fd_ >= 0; }
    // Appends "<event> maps <n> cache <ids>" (one write, O_APPEND); no-op when disabled.
    void record(const char* event, const ImportRegistry& registry) const noexcept;

private:
    uint32_t chip_index_;
    int fd_ = -1;
};

}  // namespace simpler
