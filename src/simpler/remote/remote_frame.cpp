#include "simpler/remote/remote_frame.h"

#include <cstring>

#include "simpler/task_interface/task_args_wire.h"

namespace simpler {

namespace {

struct Header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint64_t seq;
    uint64_t word;
    uint32_t body_len;
    uint32_t count;
};
static_assert(sizeof(Header) == REMOTE_FRAME_HEADER_BYTES);

constexpr size_t FLAGS_ALIGN = 8;

size_t padded(size_t n) { return (n + FLAGS_ALIGN - 1) / FLAGS_ALIGN * FLAGS_ALIGN; }

[[noreturn]] void refuse(const std::string& field, const std::string& rule, uint64_t got) {
    throw RemoteFrameError("remote frame: " + field + ": " + rule + " (got " + std::to_string(got) + ")");
}

std::vector<std::byte> frame_of(FrameType type, uint64_t seq, uint64_t word, uint32_t count, size_t body_len) {
    if (body_len > UINT32_MAX)
        throw std::length_error("remote frame: a body of " + std::to_string(body_len) + " bytes");
    std::vector<std::byte> out(REMOTE_FRAME_HEADER_BYTES + body_len);
    const Header h{REMOTE_FRAME_MAGIC,
                   REMOTE_FRAME_VERSION,
                   static_cast<uint16_t>(type),
                   seq,
                   word,
                   static_cast<uint32_t>(body_len),
                   count};
    std::memcpy(out.data(), &h, sizeof h);
    return out;
}

}  // namespace

const char* frame_type_name(FrameType t) noexcept {
    switch (t) {
        case FrameType::HELLO: return "HELLO";
        case FrameType::READY: return "READY";
        case FrameType::TASK: return "TASK";
        case FrameType::DONE: return "DONE";
        case FrameType::FORGET: return "FORGET";
        case FrameType::SHUTDOWN: return "SHUTDOWN";
        case FrameType::BYE: return "BYE";
    }
    return "unknown";
}

RemoteFrame decode_frame(std::span<const std::byte> message) {
    if (message.size() < REMOTE_FRAME_HEADER_BYTES)
        refuse("length", "a frame is at least " + std::to_string(REMOTE_FRAME_HEADER_BYTES) + " bytes", message.size());
    Header h{};
    std::memcpy(&h, message.data(), sizeof h);
    if (h.magic != REMOTE_FRAME_MAGIC) refuse("magic", "must be 0x46524D53", h.magic);
    if (h.version != REMOTE_FRAME_VERSION)
        refuse("version", "must be " + std::to_string(REMOTE_FRAME_VERSION), h.version);
    if (h.type == 0 || h.type > FRAME_TYPE_MAX) refuse("type", "must be 1..7", h.type);
    if (h.body_len != message.size() - REMOTE_FRAME_HEADER_BYTES)
        refuse("body_len",
               "must be the message's length less the header (" +
                   std::to_string(message.size() - REMOTE_FRAME_HEADER_BYTES) + ")",
               h.body_len);
    RemoteFrame f{static_cast<FrameType>(h.type), h.seq, h.word, h.count, message.subspan(REMOTE_FRAME_HEADER_BYTES)};
    switch (f.type) {
        case FrameType::HELLO:
        case FrameType::READY:
        case FrameType::DONE:
            if (f.body.size() > REMOTE_FRAME_MAX_TEXT)
                refuse("body_len", "a text is at most " + std::to_string(REMOTE_FRAME_MAX_TEXT) + " bytes",
                       f.body.size());
            if (f.type == FrameType::DONE && f.word > 2) refuse("word", "a DONE's status must be 0, 1 or 2", f.word);
            if (f.type == FrameType::DONE && f.count > REMOTE_FRAME_MAX_TENSORS)
                refuse("count", "a DONE carries at most " + std::to_string(REMOTE_FRAME_MAX_TENSORS) + " payloads",
                       f.count);
            break;
        case FrameType::TASK:
            if (f.count > REMOTE_FRAME_MAX_TENSORS)
                refuse("count", "a TASK names at most " + std::to_string(REMOTE_FRAME_MAX_TENSORS) + " tensors",
                       f.count);
            if (f.body.size() < CALL_CONFIG_SIZE + padded(f.count) + BLOB_HEADER_BYTES)
                refuse("body_len",
                       "too short for the call config, " + std::to_string(f.count) + " flags and a blob header",
                       f.body.size());
            break;
        case FrameType::FORGET:
            if (f.body.size() != uint64_t{f.count} * sizeof(CanonicalIdentity))
                refuse("body_len", "a FORGET is count x 32 bytes (count " + std::to_string(f.count) + ")",
                       f.body.size());
            break;
        case FrameType::SHUTDOWN:
        case FrameType::BYE:
            if (!f.body.empty()) refuse("body_len", "must be 0", f.body.size());
            if (f.word > (f.type == FrameType::SHUTDOWN ? 1u : 0u))
                refuse("word", "a SHUTDOWN's is 0 or 1, a BYE's 0", f.word);
            break;
    }
    return f;
}

RemoteTask decode_task(const RemoteFrame& f) {
    if (f.type != FrameType::TASK) refuse("type", "expected a TASK", static_cast<uint64_t>(f.type));
    RemoteTask t;
    t.seq = f.seq;
    t.callable = f.word;
    std::memcpy(&t.config, f.body.data(), CALL_CONFIG_SIZE);
    const std::byte* flags = f.body.data() + CALL_CONFIG_SIZE;
    t.flags.resize(f.count);
    for (uint32_t i = 0; i < f.count; ++i) {
        const auto v = static_cast<uint8_t>(flags[i]);
        if (v > (SIDECAR_FETCH | SIDECAR_WRITE_BACK))
            refuse("flags[" + std::to_string(i) + "]", "must be a set of FETCH (1) and WRITE_BACK (2)", v);
        if (((v & SIDECAR_WRITE_BACK) != 0) != writes_tensor(t.config, i))
            refuse("flags[" + std::to_string(i) + "]", "WRITE_BACK must match the call config's write mask", v);
        t.flags[i] = v;
    }
    for (size_t i = f.count; i < padded(f.count); ++i)
        if (flags[i] != std::byte{0}) refuse("flags padding", "must be zero", static_cast<uint8_t>(flags[i]));
    // The engine's masks name only the task's tensors: a bit past the count is
    // not a mask the engine wrote.
    for (size_t i = f.count; i < CALL_CONFIG_WRITE_MASK_BITS; ++i)
        if (writes_tensor(t.config, i))
            refuse("config.write_mask",
                   "names tensor " + std::to_string(i) + " of a TASK of " + std::to_string(f.count) + " tensors", i);
    for (size_t i = f.count; i < CALL_CONFIG_WRITE_ONLY_MASK_BITS; ++i)
        if (write_only_bit(t.config, i))
            refuse("config.write_only_mask",
                   "names tensor " + std::to_string(i) + " of a TASK of " + std::to_string(f.count) + " tensors", i);
    const std::span<const std::byte> blob = f.body.subspan(CALL_CONFIG_SIZE + padded(f.count));
    TaskArgsView view;
    if (const ValidationError e = TaskArgsView::open(blob.data(), blob.size(), view); !e.ok())
        throw RemoteFrameError("remote frame: TASK blob: " + e.message());
    if (view.size_bytes() != blob.size())
        refuse("TASK blob", "must fill the rest of the body (" + std::to_string(blob.size()) + " bytes)",
               view.size_bytes());
    if (static_cast<uint32_t>(view.tensor_count()) != f.count)
        refuse("count", "must equal the blob's tensor count (" + std::to_string(view.tensor_count()) + ")", f.count);
    t.tensors.resize(f.count);
    for (int32_t i = 0; i < view.tensor_count(); ++i) {
        Tensor& tensor = t.tensors[static_cast<size_t>(i)];
        if (const ValidationError e = view.tensor(i, tensor); !e.ok())
            throw RemoteFrameError("remote frame: TASK blob: " + e.message());
        if (tensor.buffer.backend_kind != static_cast<uint8_t>(BackendKind::REMOTE_SIDECAR))
            refuse("tensor[" + std::to_string(i) + "].buffer.backend_kind",
                   "a remote task's tensor is REMOTE_SIDECAR (3)", tensor.buffer.backend_kind);
    }
    t.scalars.resize(static_cast<size_t>(view.scalar_count()));
    for (int32_t i = 0; i < view.scalar_count(); ++i) t.scalars[static_cast<size_t>(i)] = view.scalar(i);
    return t;
}

std::string_view frame_text(const RemoteFrame& f) {
    return {reinterpret_cast<const char*>(f.body.data()), f.body.size()};
}

std::vector<CanonicalIdentity> decode_forget(const RemoteFrame& f) {
    if (f.type != FrameType::FORGET) refuse("type", "expected a FORGET", static_cast<uint64_t>(f.type));
    std::vector<CanonicalIdentity> out(f.count);
    if (f.count > 0) std::memcpy(out.data(), f.body.data(), f.body.size());
    return out;
}

std::vector<std::byte> encode_text_frame(FrameType type, uint64_t seq, uint64_t word, uint32_t count,
                                         std::string_view text) {
    std::vector<std::byte> out = frame_of(type, seq, word, count, text.size());
    if (!text.empty()) std::memcpy(out.data() + REMOTE_FRAME_HEADER_BYTES, text.data(), text.size());
    return out;
}

std::vector<std::byte> encode_task_frame(uint64_t seq, uint64_t callable, const CallConfig& config,
                                         std::span<const uint8_t> flags, std::span<const Tensor> tensors,
                                         std::span<const uint64_t> scalars) {
    if (flags.size() != tensors.size()) throw std::invalid_argument("encode_task_frame: one flag per tensor");
    const size_t blob = blob_size(static_cast<int64_t>(tensors.size()), static_cast<int64_t>(scalars.size()));
    std::vector<std::byte> out = frame_of(FrameType::TASK, seq, callable, static_cast<uint32_t>(tensors.size()),
                                          CALL_CONFIG_SIZE + padded(flags.size()) + blob);
    std::byte* p = out.data() + REMOTE_FRAME_HEADER_BYTES;
    std::memcpy(p, &config, CALL_CONFIG_SIZE);
    p += CALL_CONFIG_SIZE;
    if (!flags.empty()) std::memcpy(p, flags.data(), flags.size());
    p += padded(flags.size());
    write_wire_blob(tensors, scalars, p);
    return out;
}

void write_wire_blob(std::span<const Tensor> tensors, std::span<const uint64_t> scalars, std::byte* out) noexcept {
    const auto counts =
        std::array<int32_t, 2>{static_cast<int32_t>(tensors.size()), static_cast<int32_t>(scalars.size())};
    std::memcpy(out, counts.data(), BLOB_HEADER_BYTES);
    out += BLOB_HEADER_BYTES;
    if (!tensors.empty()) std::memcpy(out, tensors.data(), tensors.size_bytes());
    out += tensors.size_bytes();
    if (!scalars.empty()) std::memcpy(out, scalars.data(), scalars.size_bytes());
}

std::vector<std::byte> encode_forget_frame(std::span<const CanonicalIdentity> identities) {
    std::vector<std::byte> out =
        frame_of(FrameType::FORGET, 0, 0, static_cast<uint32_t>(identities.size()), identities.size_bytes());
    if (!identities.empty())
        std::memcpy(out.data() + REMOTE_FRAME_HEADER_BYTES, identities.data(), identities.size_bytes());
    return out;
}

BufferDescriptor sidecar_descriptor(const BufferDescriptor& source) {
    return make_buffer_descriptor(
        source.identity, BackendKind::REMOTE_SIDECAR, static_cast<AddressSpace>(source.address_space),
        static_cast<AccessMode>(source.access), source.nbytes, {}, source.owner_worker_path_id);
}

}  // namespace simpler
