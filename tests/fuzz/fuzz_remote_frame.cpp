// libFuzzer target for the remote frame decoder (remote_frame.h), the first
// code to read what arrives from another host. Invariants checked on every input:
//  - decode_frame and decode_task / decode_forget throw nothing but
//    RemoteFrameError, and never read outside the message (ASan);
//  - an accepted frame's type is 1..7 and its body is the rest of the message;
//  - re-encoding an accepted frame reproduces the message: a text, SHUTDOWN or
//    BYE frame and a decoded TASK byte for byte, a FORGET all but seq and word
//    (encode_forget_frame writes them as 0; the decoder does not check them);
//  - every tensor of a decoded TASK passes validate_tensor, is REMOTE_SIDECAR,
//    and its flag is FETCH / WRITE_BACK with WRITE_BACK as the write mask says;
//  - the runs of each view (view_runs.h) lie inside the backing and add up to
//    view_payload_bytes (checked for views of at most 2^16 elements);
//  - decode_task refuses every frame that is not a TASK, decode_forget every
//    frame that is not a FORGET.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "simpler/remote/remote_frame.h"
#include "simpler/remote/view_runs.h"

using namespace simpler;

#define FUZZ_CHECK(cond)               \
    do {                               \
        if (!(cond)) __builtin_trap(); \
    } while (0)

namespace {

bool same(const std::vector<std::byte>& a, std::span<const std::byte> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
}

void check_runs(const Tensor& t) {
    const uint64_t elem = data_type_element_size(t.dtype);
    const uint64_t payload = view_payload_bytes(t);
    if (payload / elem > (1u << 16)) return;
    uint64_t total = 0, runs = 0;
    for_each_run(t, [&](uint64_t offset, uint64_t length) {
        FUZZ_CHECK(length > 0 && length % elem == 0);
        FUZZ_CHECK(offset <= t.buffer.nbytes && length <= t.buffer.nbytes - offset);
        total += length;
        ++runs;
    });
    FUZZ_CHECK(total == payload);
    FUZZ_CHECK(view_is_one_run(t) == (runs == 1));
}

void check_task(const RemoteFrame& f, std::span<const std::byte> message) {
    RemoteTask t;
    try {
        t = decode_task(f);
    } catch (const RemoteFrameError&) {
        return;
    }
    FUZZ_CHECK(t.seq == f.seq && t.callable == f.word);
    FUZZ_CHECK(t.tensors.size() == f.count && t.flags.size() == f.count);
    for (size_t i = 0; i < t.tensors.size(); ++i) {
        FUZZ_CHECK(validate_tensor(t.tensors[i]).ok());
        FUZZ_CHECK(t.tensors[i].buffer.backend_kind == static_cast<uint8_t>(BackendKind::REMOTE_SIDECAR));
        FUZZ_CHECK(t.flags[i] <= (SIDECAR_FETCH | SIDECAR_WRITE_BACK));
        FUZZ_CHECK(((t.flags[i] & SIDECAR_WRITE_BACK) != 0) == writes_tensor(t.config, i));
        check_runs(t.tensors[i]);
    }
    FUZZ_CHECK(same(encode_task_frame(t.seq, t.callable, t.config, t.flags, t.tensors, t.scalars), message));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const std::byte> message(reinterpret_cast<const std::byte*>(data), size);
    RemoteFrame f;
    try {
        f = decode_frame(message);
    } catch (const RemoteFrameError&) {
        return 0;
    }
    const auto type = static_cast<uint16_t>(f.type);
    FUZZ_CHECK(type >= 1 && type <= FRAME_TYPE_MAX);
    FUZZ_CHECK(size >= REMOTE_FRAME_HEADER_BYTES);
    FUZZ_CHECK(f.body.data() == message.data() + REMOTE_FRAME_HEADER_BYTES);
    FUZZ_CHECK(f.body.size() == size - REMOTE_FRAME_HEADER_BYTES);

    bool task_refused = false, forget_refused = false;
    try {
        (void)decode_task(f);
    } catch (const RemoteFrameError&) {
        task_refused = true;
    }
    try {
        (void)decode_forget(f);
    } catch (const RemoteFrameError&) {
        forget_refused = true;
    }
    FUZZ_CHECK(f.type == FrameType::TASK || task_refused);
    FUZZ_CHECK(f.type != FrameType::FORGET || !forget_refused);
    FUZZ_CHECK(f.type == FrameType::FORGET || forget_refused);

    switch (f.type) {
        case FrameType::HELLO:
        case FrameType::READY:
        case FrameType::DONE: {
            const std::string_view text = frame_text(f);
            FUZZ_CHECK(text.size() <= REMOTE_FRAME_MAX_TEXT);
            if (f.type == FrameType::DONE) FUZZ_CHECK(f.word <= 2 && f.count <= REMOTE_FRAME_MAX_TENSORS);
            FUZZ_CHECK(same(encode_text_frame(f.type, f.seq, f.word, f.count, text), message));
            break;
        }
        case FrameType::SHUTDOWN:
        case FrameType::BYE:
            FUZZ_CHECK(f.body.empty());
            FUZZ_CHECK(same(encode_text_frame(f.type, f.seq, f.word, f.count, ""), message));
            break;
        case FrameType::FORGET: {
            const std::vector<CanonicalIdentity> ids = decode_forget(f);
            FUZZ_CHECK(ids.size() == f.count);
            std::vector<std::byte> again = encode_forget_frame(ids);
            FUZZ_CHECK(again.size() == size);
            // All but seq and word (bytes 8..23).
            FUZZ_CHECK(std::memcmp(again.data(), data, 8) == 0);
            FUZZ_CHECK(std::memcmp(again.data() + 24, data + 24, size - 24) == 0);
            break;
        }
        case FrameType::TASK: check_task(f, message); break;
    }
    return 0;
}
