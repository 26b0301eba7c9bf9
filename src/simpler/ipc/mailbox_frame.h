// MailboxFrame: the fixed layout at the start of every mailbox's shared region,
// followed directly by the argument blob area (blob_capacity bytes, at offset
// sizeof(MailboxFrame)). Three cache lines of control (who writes each line is
// stated on it; in the hot path only the state's line has two writers: the
// parent's TASK_READY, the child's RUNNING and result),
// then the task frame (callable id, call config, blob length), its lane
// conditions (lane_board.h: producers on other lanes it waits for) and the
// error message buffer.
//
// Every field is raw: states and error codes are stored as integers and become
// enums only after mailbox.cpp has checked them. A child is not trusted: the
// parent bounds every length it reads from here by its own private copy of the
// capacity, never by blob_capacity or message_bytes as stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "simpler/ipc/shared_word.h"

namespace simpler::ipc {

inline constexpr uint32_t MAILBOX_MAGIC = 0x584F424Du;  // "MBOX" little-endian
inline constexpr uint32_t MAILBOX_LAYOUT_VERSION = 3;
inline constexpr size_t CALL_CONFIG_BYTES = 64;
inline constexpr size_t ERROR_MESSAGE_BYTES = 4096;     // including the terminating NUL
inline constexpr size_t DEFAULT_BLOB_CAPACITY = size_t{1} << 20;
inline constexpr size_t MAX_BLOB_CAPACITY = size_t{1} << 30;

// The task's lifecycle. A new frame is IDLE; the parent writes TASK_READY over
// IDLE or over the previous task's DONE / FAILED (kept after the parent read
// that result); the child writes TASK_READY -> RUNNING -> DONE or FAILED. The
// parent may withdraw a task the child has not started: it swaps TASK_READY
// for WITHDRAWN, the child swaps TASK_READY for RUNNING, and whichever swap
// comes first decides; a WITHDRAWN task is answered FAILED (SKIPPED) without
// running. Each write is a release store (the two swaps compare-and-swap),
// each read an acquire load.
enum class MailboxState : uint32_t {
    IDLE = 0,
    TASK_READY = 1,
    RUNNING = 2,
    DONE = 3,
    FAILED = 4,
    WITHDRAWN = 5,
};

// "Start once task `seq` of lane `lane` has completed" (lane_board.h): a
// producer of the task running on another child's lane. A task carries up to
// MAX_LANE_CONDITIONS; the child checks them (check_conditions) before it waits.
inline constexpr uint32_t MAX_LANE_CONDITIONS = 4;
struct LaneCondition {
    uint32_t lane;  // the producer's lane (a LaneBoard index)
    uint32_t _pad;
    uint64_t seq;   // the producer's sequence on that lane (1, 2, ... in publish order)
};
static_assert(std::is_trivially_copyable_v<LaneCondition>);
static_assert(sizeof(LaneCondition) == 16);

// The call config travels as opaque bytes; the engine owns their meaning.
struct CallConfig {
    uint8_t bytes[CALL_CONFIG_BYTES];
};
static_assert(std::is_trivially_copyable_v<CallConfig>);
static_assert(sizeof(CallConfig) == 64);

struct alignas(64) MailboxFrame {
    // Line 0: written once by the creator, before fork.
    uint32_t magic;           // MAILBOX_MAGIC
    uint32_t layout_version;  // MAILBOX_LAYOUT_VERSION
    uint64_t blob_capacity;   // bytes of blob area after the frame (informative)
    uint8_t _pad0[48];
    // Line 1: written by the parent.
    SharedWord request;       // bumped after each task publication and on shutdown; the child sleeps here
    uint32_t shutdown;        // sticky: 0, then 1 forever
    uint32_t child_exited;    // 1 once the parent's reaper saw the child exit
    int32_t exit_status;      // raw wait status, meaningful when child_exited == 1
    uint8_t _pad1[44];
    // Line 2: written by the child (and `state` by the parent's publish: TASK_READY).
    uint32_t state;           // MailboxState
    int32_t error_code;       // TaskError when state == FAILED
    uint64_t completed_seq;   // task_seq the result belongs to
    uint32_t message_bytes;   // length of error_message without its NUL
    uint32_t _pad3;
    uint8_t _pad4[40];
    // Task frame, written by the parent before TASK_READY (kept off line 1,
    // which the idle child spins on, so a publication writes that line once).
    uint64_t callable_id;
    uint64_t blob_bytes;      // bytes of the blob area in use
    uint64_t task_seq;        // the parent's id of the published task
    uint32_t after_mask;      // bit i-1: the task published i before this one on the lane's ring is a producer
    uint32_t condition_count; // how many of `conditions` hold (untrusted: checked against MAX_LANE_CONDITIONS)
    uint8_t _pad5[32];
    CallConfig config;
    LaneCondition conditions[MAX_LANE_CONDITIONS];  // producers on other lanes, written by the parent
    // Written by the child before FAILED: NUL-terminated, truncated to fit.
    char error_message[ERROR_MESSAGE_BYTES];
};
static_assert(std::is_trivially_copyable_v<MailboxFrame>);
static_assert(std::is_standard_layout_v<MailboxFrame>);
static_assert(sizeof(MailboxFrame) == 4480);
static_assert(alignof(MailboxFrame) == 64);
static_assert(offsetof(MailboxFrame, magic) == 0);
static_assert(offsetof(MailboxFrame, layout_version) == 4);
static_assert(offsetof(MailboxFrame, blob_capacity) == 8);
static_assert(offsetof(MailboxFrame, request) == 64);
static_assert(offsetof(MailboxFrame, shutdown) == 72);
static_assert(offsetof(MailboxFrame, child_exited) == 76);
static_assert(offsetof(MailboxFrame, exit_status) == 80);
static_assert(offsetof(MailboxFrame, state) == 128);
static_assert(offsetof(MailboxFrame, error_code) == 132);
static_assert(offsetof(MailboxFrame, completed_seq) == 136);
static_assert(offsetof(MailboxFrame, message_bytes) == 144);
static_assert(offsetof(MailboxFrame, callable_id) == 192);
static_assert(offsetof(MailboxFrame, blob_bytes) == 200);
static_assert(offsetof(MailboxFrame, task_seq) == 208);
static_assert(offsetof(MailboxFrame, after_mask) == 216);
static_assert(offsetof(MailboxFrame, condition_count) == 220);
static_assert(offsetof(MailboxFrame, config) == 256);
static_assert(offsetof(MailboxFrame, conditions) == 320);
static_assert(offsetof(MailboxFrame, error_message) == 384);

}  // namespace simpler::ipc
