// Fuzzes the parent's reading of a result: whatever a corrupted child writes
// into its line of the frame (state, error code, completed sequence, message
// length) and into the message buffer, poll_result() reads only inside the
// frame, returns a known TaskError, a message of at most ERROR_MESSAGE_BYTES - 1
// bytes, and poisons the lane on anything impossible.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"

using namespace simpler::ipc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    if (mb.publish(1, CallConfig{}, {}, seq) != PublishStatus::OK) std::abort();
    // Bytes 0..63 overwrite the child's line (offset 128), the rest the message.
    auto* frame = reinterpret_cast<uint8_t*>(&mb.frame());
    const size_t line = size < 64 ? size : 64;
    std::memcpy(frame + offsetof(MailboxFrame, state), data, line);
    const size_t msg = size - line < ERROR_MESSAGE_BYTES ? size - line : ERROR_MESSAGE_BYTES;
    std::memcpy(mb.frame().error_message, data + line, msg);
    const auto r = mb.poll_result(Clock::now());
    if (r) {
        if (r->message.size() > ERROR_MESSAGE_BYTES - 1) std::abort();
        // TaskError runs from NONE to FAILED_BELOW (the last value): nothing else may come back.
        if (static_cast<int32_t>(r->error) < 0 || r->error > TaskError::FAILED_BELOW) std::abort();
        if (r->error == TaskError::PROTOCOL && mb.usable()) std::abort();
        if (mb.in_flight()) std::abort();
    } else if (!mb.in_flight()) {
        std::abort();
    }
    return 0;
}
