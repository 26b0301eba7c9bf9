// StatusChannel: how a thread waits for a Worker's children's status to change
// (a child lost there or below a next-level child) without holding the Worker.
//
// Python's loss logger (simpler/runtime/log.py) sleeps in wait() on a thread of its
// own; it names the channel by its id, so it keeps no Python object of the
// Worker alive: a Worker dropped without close() is still destroyed (its
// destructor closes the channel, which wakes the waiter for good), and one
// alive at exit leaves no bound object behind in a blocked thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "simpler/ipc/futex.h"

namespace simpler {

class StatusChannel {
public:
    // A new channel, listed under a process-unique id until close().
    static std::shared_ptr<StatusChannel> create();
    // The listed channel with this id; null when there is none (closed, or never made).
    static std::shared_ptr<StatusChannel> find(uint64_t id);

    [[nodiscard]] uint64_t id() const noexcept { return id_; }
    // The status changed: the serial moves on and every waiter wakes.
    void changed();
    // No more changes: delisted, and every waiter (now and later) returns nullopt.
    void close();
    // The serial once it is not `seen`; nullopt once closed; the serial as it
    // is when `until` passes first.
    std::optional<uint64_t> wait(uint64_t seen, ipc::Deadline until);

private:
    explicit StatusChannel(uint64_t id) : id_(id) {}

    const uint64_t id_;
    std::mutex mu_;
    std::condition_variable cv_;
    uint64_t serial_ = 0;
    bool closed_ = false;
};

}  // namespace simpler
