// Helpers shared by the EngineCore unit tests (no processes): identities, a
// config of so many chips and sub-workers, and a harness that submits one-member
// tasks and takes what is ready.
#pragma once

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"

namespace engine_test {

using namespace simpler;

inline CanonicalIdentity ident(uint64_t id, uint32_t gen = 1) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x42, sizeof c.owner_instance_id);
    c.buffer_id = id;
    c.generation = gen;
    return c;
}

// A 4 KiB POSIX_SHM host buffer of identity ident(id).
inline BufferDescriptor host_buffer(uint64_t id) {
    const uint8_t name[] = "sptest";
    return make_buffer_descriptor(ident(id), BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, 4096,
                                  {name, 6});
}

// Tile k of `b`: 16 UINT8 at byte 16k.
inline Tensor tile(const BufferDescriptor& b, uint32_t k) {
    const uint32_t shapes[] = {16};
    const uint32_t strides[] = {1};
    return make_tensor(b, shapes, DataType::UINT8, strides, uint64_t{16} * k);
}

// An EngineConfig of `chips` chips and `subs` sub-workers.
inline EngineConfig children(uint32_t chips, uint32_t subs) {
    EngineConfig c;
    c.children[static_cast<size_t>(ChildKind::CHIP)] = chips;
    c.children[static_cast<size_t>(ChildKind::SUB_WORKER)] = subs;
    return c;
}

struct Harness {
    explicit Harness(EngineConfig c) : core(std::move(c)) {}
    EngineCore core;
    TaskConfig config{};

    TaskId chip_task(const TaskArgs& a, uint32_t chip, uint64_t callable = 7) {
        MemberSubmit m{&a, chip};
        return core.submit(TaskKind::NEXT_LEVEL, callable, {&m, 1}, config).id;
    }
    TaskId sub_task(const TaskArgs& a) {
        MemberSubmit m{&a, std::nullopt};
        return core.submit(TaskKind::SUB, 9, {&m, 1}, config).id;
    }
    std::vector<Dispatch> take(const EngineCore::LaneOpen& lane_open = {}) {
        std::vector<Dispatch> out;
        core.take(out, lane_open);
        return out;
    }
};

}  // namespace engine_test
