// RemoteFrame: the messages between an L4 and a remote L3 Worker (its relay
// on the L4's host, its server on its own host), and their one decoder.
//
// Every frame is one transport message: a 32-byte header, then a body of
// body_len bytes. All integers are little-endian.
//
//   offset 0  u32 magic   REMOTE_FRAME_MAGIC ("SMRF")
//   offset 4  u16 version REMOTE_FRAME_VERSION
//   offset 6  u16 type    FrameType
//   offset 8  u64 seq     TASK / DONE: the task's sequence number on the link
//   offset 16 u64 word    TASK: the callable id; DONE: 0 ok, 1 failed (text: why), 2 failed (text: a FailureReport);
//                         SHUTDOWN: 1 when the job lost a rank (skip MPI_Finalize), else 0
//   offset 24 u32 body_len
//   offset 28 u32 count   TASK: tensors; DONE: payloads that follow; FORGET: identities
//
// Bodies:
//   HELLO, READY  UTF-8 text (the child's configuration; empty, or why it did not start)
//   TASK          CallConfig (64 bytes) | one SidecarFlags byte per tensor |
//                 zero padding to a multiple of 8 | the argument blob, whose
//                 every tensor is a REMOTE_SIDECAR descriptor with its source's
//                 identity, access and nbytes
//   DONE          UTF-8 text: empty on success, else why the task failed
//   FORGET        count 32-byte CanonicalIdentity values
//   SHUTDOWN, BYE empty
//
// Tensor bytes never ride in a frame: after a TASK, one payload message per
// tensor flagged FETCH follows (the view's packed bytes, view_runs.h), in
// tensor order; after a DONE with count > 0, one per tensor flagged WRITE_BACK.
//
// decode_frame trusts nothing: it checks the header, the body length against
// the message, and the body against its type (a TASK's blob through
// read_blob, which validates every tensor), and throws RemoteFrameError naming
// the field, the rule and the value. encode_* build frames the decoder accepts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/call_config.h"
#include "simpler/task_interface/identity.h"

namespace simpler {

inline constexpr uint32_t REMOTE_FRAME_MAGIC = 0x46524D53;  // "SMRF" in memory order
inline constexpr uint16_t REMOTE_FRAME_VERSION = 1;
inline constexpr size_t REMOTE_FRAME_HEADER_BYTES = 32;
// A text body (a configuration, a failure) is at most this long.
inline constexpr size_t REMOTE_FRAME_MAX_TEXT = 1u << 20;
// A TASK names at most this many tensors (a next-level member's limit).
inline constexpr uint32_t REMOTE_FRAME_MAX_TENSORS = 256;

enum class FrameType : uint16_t {
    HELLO = 1,     // L4 -> L3: the child's configuration
    READY = 2,     // L3 -> L4: started (empty text) or why not
    TASK = 3,      // L4 -> L3
    DONE = 4,      // L3 -> L4
    FORGET = 5,    // L4 -> L3: these backings were freed
    SHUTDOWN = 6,  // L4 -> L3: close
    BYE = 7,       // L3 -> L4: closed
};
inline constexpr uint16_t FRAME_TYPE_MAX = 7;
[[nodiscard]] const char* frame_type_name(FrameType t) noexcept;

// Per tensor of a TASK.
enum SidecarFlags : uint8_t {
    SIDECAR_FETCH = 1,       // the view's bytes follow the frame (the task reads them)
    SIDECAR_WRITE_BACK = 2,  // the task writes the view; its bytes come back after DONE
};

class RemoteFrameError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

struct RemoteFrame {
    FrameType type = FrameType::HELLO;
    uint64_t seq = 0;
    uint64_t word = 0;
    uint32_t count = 0;
    std::span<const std::byte> body;  // into the decoded message
};

struct RemoteTask {
    uint64_t seq = 0;
    uint64_t callable = 0;
    CallConfig config{};
    std::vector<uint8_t> flags;          // SidecarFlags per tensor
    std::vector<Tensor> tensors;         // validated; REMOTE_SIDECAR each
    std::vector<uint64_t> scalars;
};

// Checks the header and the body's shape for its type; the body stays in `message`.
RemoteFrame decode_frame(std::span<const std::byte> message);
// A TASK frame's contents, every tensor validated (RemoteFrameError otherwise).
RemoteTask decode_task(const RemoteFrame& frame);
// A HELLO / READY / DONE frame's text.
std::string_view frame_text(const RemoteFrame& frame);
// A FORGET frame's identities.
std::vector<CanonicalIdentity> decode_forget(const RemoteFrame& frame);

std::vector<std::byte> encode_text_frame(FrameType type, uint64_t seq, uint64_t word, uint32_t count,
                                         std::string_view text);
std::vector<std::byte> encode_task_frame(uint64_t seq, uint64_t callable, const CallConfig& config,
                                         std::span<const uint8_t> flags, std::span<const Tensor> tensors,
                                         std::span<const uint64_t> scalars);
std::vector<std::byte> encode_forget_frame(std::span<const CanonicalIdentity> identities);

// Writes the argument blob of already validated `tensors` and `scalars`
// (blob_size(tensors, scalars) bytes at `out`): a TASK frame's, and the blob a
// remote rank runs its task on after it resolved the sidecars.
void write_wire_blob(std::span<const Tensor> tensors, std::span<const uint64_t> scalars, std::byte* out) noexcept;

// The REMOTE_SIDECAR form of `source`: the same identity, address space,
// access, nbytes and owner path, an empty body.
BufferDescriptor sidecar_descriptor(const BufferDescriptor& source);

}  // namespace simpler
