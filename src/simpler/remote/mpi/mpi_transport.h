// MpiTransport: this process's one link to the other ranks of an mpirun job,
// the only channel between an L4 and its remote L3 Workers (docs/internals/remote.md).
// Nothing of ours listens on a socket: MPI's own transport carries every byte.
//
// MPI itself is reached through the MPI shim, loaded at the first start()
// (mpi_library.h): nothing here is compiled against mpi.h.
//
// start() initializes MPI once per process (MPI_THREAD_MULTIPLE: each relay
// thread of the L4 talks to its own rank) on a private duplicate of
// MPI_COMM_WORLD whose errors are returned, not fatal, and starts the
// heartbeat thread. finalize() stops it and finalizes MPI; MPI cannot start
// again in this process after that. MPI_Finalize waits for every rank of the
// job, so once the job has lost a rank (here, or as the L4 said in its
// SHUTDOWN) finalize() leaves MPI as it is and the process exits without it;
// otherwise a finalize that has not returned after FINALIZE_LIMIT ends the
// process (status 1) with a message.
//
// Messages: send() and receive() move one message each way (a payload above
// 1 GiB in 1 GiB pieces); receive_frame() waits for the next frame from a
// peer. Every wait spins for SPIN_BUDGET, then sleeps between looks for an
// eighth of the time it has waited so far (nap_after: MIN_SLEEP to MAX_SLEEP),
// so an answer is seen at most about 12 % late, and a long wait costs a few
// wake-ups (MPI's own blocking calls would spin a core for the whole wait);
// it gives up with PeerLost as soon as the peer is lost. A payload's wait
// spins longer, for as long as its bytes would take at BULK_SPIN_RATE (bytes
// move only while this process is inside an MPI call: this Open MPI has no
// progress thread), so a bulk transfer is not stalled by naps.
//
// Liveness: every HEARTBEAT_INTERVAL the heartbeat thread sends a heartbeat
// to each peer it beats for and takes in every peer's; a watched peer silent
// for the heartbeat timeout is lost (why: lost()), for good, and nothing is
// sent to it again. A failed MPI call on a peer's messages loses that peer too.
// Rank 0 beats for every rank from start() and watches a remote child from
// its READY; a remote child beats for rank 0 from start() and watches it from
// the first heartbeat it hears (rank 0 may start its transport later).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "simpler/ipc/spin_wait.h"
#include "simpler/remote/mpi/mpi_api.h"
#include "simpler/task_interface/buffer.h"

namespace simpler {

// A peer that is gone (or whose link failed); what() says why.
class PeerLost : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum MessageTag : int {
    TAG_FRAME = 1,
    TAG_PAYLOAD = 2,
    TAG_HEARTBEAT = 3,
};

class MpiTransport {
public:
    static constexpr std::chrono::milliseconds HEARTBEAT_INTERVAL{200};
    static constexpr std::chrono::milliseconds DEFAULT_HEARTBEAT_TIMEOUT{2500};
    static constexpr std::chrono::microseconds SPIN_BUDGET{100};
    static constexpr std::chrono::microseconds MIN_SLEEP{10};
    static constexpr std::chrono::microseconds MAX_SLEEP{2000};
    static constexpr int SLEEP_FRACTION = 8;
    static constexpr uint64_t BULK_SPIN_RATE = uint64_t{1} << 30;  // bytes per second
    // The spin budget of a wait for a message of `nbytes`.
    [[nodiscard]] static constexpr std::chrono::nanoseconds spin_budget(uint64_t nbytes) noexcept {
        const std::chrono::nanoseconds bulk{static_cast<int64_t>(nbytes * 1000 / (BULK_SPIN_RATE / 1'000'000))};
        return bulk > SPIN_BUDGET ? bulk : std::chrono::nanoseconds(SPIN_BUDGET);
    }
    // How long a wait that has lasted `waited` sleeps before its next look.
    [[nodiscard]] static constexpr std::chrono::microseconds nap_after(std::chrono::nanoseconds waited) noexcept {
        const auto nap = std::chrono::duration_cast<std::chrono::microseconds>(waited / SLEEP_FRACTION);
        return nap < MIN_SLEEP ? MIN_SLEEP : nap > MAX_SLEEP ? MAX_SLEEP : nap;
    }
    static constexpr std::chrono::seconds FINALIZE_LIMIT{30};

    // The process's transport (never destroyed: MPI outlives every user).
    static MpiTransport& process();

    // Initializes MPI once (later calls only update the timeout). std::runtime_error
    // when the MPI shim or its MPI does not load (mpi_library.h: what, why, how to
    // get MPI), MPI cannot start or was finalized, or gives less than MPI_THREAD_MULTIPLE.
    void start(std::chrono::milliseconds heartbeat_timeout = DEFAULT_HEARTBEAT_TIMEOUT);
    [[nodiscard]] bool started() const noexcept { return started_.load(std::memory_order_acquire); }
    [[nodiscard]] int rank() const noexcept { return rank_; }
    [[nodiscard]] int size() const noexcept { return size_; }
    // Stops the heartbeats and finalizes MPI; idempotent.
    void finalize() noexcept;

    // Heartbeats to `peer` from now on.
    void beat(int peer);
    // Counts `peer`'s silence from now on (beats for it too).
    void watch(int peer);
    // Counts `peer`'s silence from the first heartbeat heard from it (beats for it too).
    void watch_once_heard(int peer);
    // Neither (it said goodbye).
    void unwatch(int peer);
    // Why `peer` is lost; empty while it is not.
    [[nodiscard]] std::string lost(int peer) const;
    void mark_lost(int peer, const std::string& why);
    // The job lost a rank this process did not watch (the L4 says so in its SHUTDOWN).
    void note_rank_lost_elsewhere() noexcept { job_lost_rank_.store(true, std::memory_order_release); }
    [[nodiscard]] bool job_lost_rank() const noexcept { return job_lost_rank_.load(std::memory_order_acquire); }

    // One message to `peer`; PeerLost when it is lost or the send fails.
    void send(int peer, int tag, const void* data, size_t nbytes);
    // One message of exactly `nbytes` from `peer`; PeerLost as above, and for
    // a message of another length (the link can no longer be trusted).
    void receive(int peer, int tag, void* data, size_t nbytes);
    // One view's packed bytes (view_runs.h) as one TAG_PAYLOAD message, straight
    // from the backing at `base` when the view is one run, else packed in `scratch`.
    void send_view(int peer, const uint8_t* base, const Tensor& view, std::vector<uint8_t>& scratch);
    // The same, received and unpacked into the backing at `base`; with a null
    // `base` the bytes are taken in and dropped (the link stays in step).
    void receive_view(int peer, uint8_t* base, const Tensor& view, std::vector<uint8_t>& scratch);
    // The next TAG_FRAME message from `peer`; empty when `until` passes first.
    std::vector<std::byte> receive_frame(int peer, ipc::Deadline until = ipc::NO_DEADLINE);

    // Payload bytes moved with `peer` (TAG_PAYLOAD messages), each way.
    [[nodiscard]] uint64_t payload_bytes_sent(int peer) const;
    [[nodiscard]] uint64_t payload_bytes_received(int peer) const;

private:
    struct Peer {
        bool beat = false;           // heartbeats go to it
        bool watched = false;        // its silence counts
        bool watch_when_heard = false;
        ipc::Clock::time_point last_heard{};
        std::string lost;
        SimplerMpiHandle heartbeat_request = 0;  // the last heartbeat sent, while in flight
        char heartbeat_byte = 0;
        uint64_t sent = 0;
        uint64_t received = 0;
    };
    MpiTransport() = default;
    void heartbeat_loop();
    Peer& peer_locked(int peer);
    void check_peer(int peer) const;  // PeerLost when lost or out of range
    // send() and receive(): one message moved in pieces, each waited for.
    void move(int peer, int tag, char* data, size_t nbytes, bool sending);
    // Waits (spin, then sleep) until done() or `until`; PeerLost when `peer` is lost.
    template <class Done>
    bool await(int peer, ipc::Deadline until, std::chrono::nanoseconds spin, Done&& done);

    std::atomic<bool> started_{false};
    std::atomic<bool> job_lost_rank_{false};
    bool finalized_ = false;
    int rank_ = 0;
    int size_ = 1;
    const SimplerMpiApi* mpi_ = nullptr;  // the shim's calls, from start()
    SimplerMpiHandle comm_ = 0;           // the private duplicate of MPI_COMM_WORLD
    std::chrono::milliseconds timeout_ = DEFAULT_HEARTBEAT_TIMEOUT;
    mutable std::mutex mu_;  // guards peers_, timeout_, stop_
    std::map<int, Peer> peers_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread heartbeats_;
};

}  // namespace simpler
