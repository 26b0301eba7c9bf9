// Fuzzes a parent's reading of a next-level Worker's failure report (the text
// of a FAILED_BELOW result or of a remote DONE): whatever the text,
// decode_failure() either refuses it naming why, or returns a report whose
// levels obey the rules (1 to FAILURE_MAX_LEVELS, each one level below the one
// above, FAILED_BELOW exactly when a level follows) and whose encoding is
// exactly that text (every length and number was checked against it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "simpler/engine/failure_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::string why;
    const std::optional<simpler::FailureReport> r = simpler::decode_failure(text, why);
    if (!r) {
        if (why.empty()) std::abort();
        return 0;
    }
    if (r->levels.empty() || r->levels.size() > simpler::FAILURE_MAX_LEVELS) std::abort();
    for (size_t i = 0; i + 1 < r->levels.size(); ++i)
        if (r->levels[i + 1].level + 1 != r->levels[i].level || r->levels[i].code != simpler::FailureCode::FAILED_BELOW)
            std::abort();
    (void)r->render();
    (void)r->path();
    if (simpler::encode_failure(*r, text.size() + 1) != text) std::abort();
    return 0;
}
