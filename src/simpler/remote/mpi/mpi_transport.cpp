#include "simpler/remote/mpi/mpi_transport.h"

#include <sys/prctl.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "simpler/remote/mpi/mpi_library.h"
#include "simpler/remote/view_runs.h"

namespace simpler {

namespace {

constexpr size_t PIECE = size_t{1} << 30;  // bytes per MPI message of a large payload

constexpr int MPI_OK = 0;  // MPI_SUCCESS in every MPI

std::string mpi_error_text(const SimplerMpiApi& mpi, int rc) {
    char text[512];
    mpi.error_text(rc, text, sizeof text);
    return text;
}

std::string seconds(std::chrono::milliseconds ms) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
    return s;
}

}  // namespace

MpiTransport& MpiTransport::process() {
    static auto* t = new MpiTransport();  // never destroyed: the heartbeat thread may outlive static destructors
    return *t;
}

void MpiTransport::start(std::chrono::milliseconds heartbeat_timeout) {
    std::unique_lock lock(mu_);
    timeout_ = heartbeat_timeout;
    if (started_.load(std::memory_order_relaxed)) return;
    if (finalized_) throw std::runtime_error("remote: MPI was finalized in this process and cannot start again");
    const SimplerMpiApi& mpi = mpi_library();
    int provided = 0;
    int multiple = 0;
    if (const int rc = mpi.init_thread_multiple(&provided, &multiple); rc != MPI_OK)
        throw std::runtime_error("remote: MPI_Init_thread failed: " + mpi_error_text(mpi, rc));
    if (provided < multiple)
        throw std::runtime_error("remote: this MPI gives thread level " + std::to_string(provided) +
                                 "; simpler needs MPI_THREAD_MULTIPLE (" + std::to_string(multiple) + ")");
    if (const int rc = mpi.dup_world(&comm_, &rank_, &size_); rc != MPI_OK)
        throw std::runtime_error("remote: duplicating MPI_COMM_WORLD failed: " + mpi_error_text(mpi, rc));
    mpi_ = &mpi;
    stop_ = false;
    heartbeats_ = std::thread(&MpiTransport::heartbeat_loop, this);
    started_.store(true, std::memory_order_release);
}

void MpiTransport::finalize() noexcept {
    {
        std::lock_guard lock(mu_);
        if (!started_.load(std::memory_order_relaxed)) return;
        stop_ = true;
    }
    wake_.notify_all();
    if (heartbeats_.joinable()) heartbeats_.join();
    std::lock_guard lock(mu_);
    finalized_ = true;
    started_.store(false, std::memory_order_release);
    if (job_lost_rank()) return;  // MPI_Finalize would wait for the lost rank for ever
    for (auto& [rank, p] : peers_)
        if (p.heartbeat_request != 0) mpi_->cancel_free(&p.heartbeat_request, 0);
    mpi_->comm_free(&comm_);
    std::atomic<bool> done{false};
    std::thread watchdog([&done] {
        const ipc::Clock::time_point until = ipc::Clock::now() + FINALIZE_LIMIT;
        while (!done.load(std::memory_order_acquire)) {
            if (ipc::Clock::now() >= until) {
                std::fprintf(stderr, "simpler: MPI_Finalize did not return within %lld s; exiting without it\n",
                             static_cast<long long>(FINALIZE_LIMIT.count()));
                std::_Exit(1);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    mpi_->finalize();
    done.store(true, std::memory_order_release);
    watchdog.join();
}

MpiTransport::Peer& MpiTransport::peer_locked(int peer) { return peers_[peer]; }

void MpiTransport::beat(int peer) {
    std::lock_guard lock(mu_);
    peer_locked(peer).beat = true;
}

void MpiTransport::watch(int peer) {
    std::lock_guard lock(mu_);
    Peer& p = peer_locked(peer);
    p.beat = p.watched = true;
    p.last_heard = ipc::Clock::now();
}

void MpiTransport::watch_once_heard(int peer) {
    std::lock_guard lock(mu_);
    Peer& p = peer_locked(peer);
    p.beat = p.watch_when_heard = true;
}

void MpiTransport::unwatch(int peer) {
    std::lock_guard lock(mu_);
    Peer& p = peer_locked(peer);
    p.beat = p.watched = p.watch_when_heard = false;
}

std::string MpiTransport::lost(int peer) const {
    std::lock_guard lock(mu_);
    const auto it = peers_.find(peer);
    return it == peers_.end() ? std::string() : it->second.lost;
}

void MpiTransport::mark_lost(int peer, const std::string& why) {
    std::lock_guard lock(mu_);
    Peer& p = peer_locked(peer);
    if (p.lost.empty()) p.lost = why.empty() ? "lost" : why;
    job_lost_rank_.store(true, std::memory_order_release);
    p.beat = p.watched = p.watch_when_heard = false;
}

void MpiTransport::check_peer(int peer) const {
    if (!started()) throw PeerLost("MPI is not running in this process");
    if (peer < 0 || peer >= size_)
        throw PeerLost("rank " + std::to_string(peer) + " is not in this job of " + std::to_string(size_) + " ranks");
    if (std::string why = lost(peer); !why.empty()) throw PeerLost(why);
}

template <class Done>
bool MpiTransport::await(int peer, ipc::Deadline until, std::chrono::nanoseconds spin, Done&& done) {
    // A nap of tens of microseconds would otherwise overrun by the default 50 us timer slack.
    thread_local const bool precise_naps = ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL) == 0;
    static_cast<void>(precise_naps);
    const ipc::Clock::time_point start = ipc::Clock::now();
    for (;;) {
        if (done()) return true;
        const ipc::Clock::time_point now = ipc::Clock::now();
        if (now >= until) return false;
        if (now - start < spin) continue;
        if (std::string why = lost(peer); !why.empty()) throw PeerLost(why);
        std::this_thread::sleep_for(nap_after(now - start));
    }
}

void MpiTransport::move(int peer, int tag, char* data, size_t nbytes, bool sending) {
    check_peer(peer);
    const char* what = sending ? "sending to" : "receiving from";
    size_t left = nbytes;
    do {
        const size_t n = std::min(left, PIECE);
        SimplerMpiHandle req = 0;
        int got = static_cast<int>(n);
        int rc = sending ? mpi_->isend(data, static_cast<int>(n), peer, tag, comm_, &req)
                         : mpi_->irecv(data, static_cast<int>(n), peer, tag, comm_, &req);
        bool ok = rc == MPI_OK;
        try {
            if (ok)
                ok = await(peer, ipc::NO_DEADLINE, spin_budget(n),
                           [&] {
                               int flag = 0;
                               rc = mpi_->test(&req, &flag, sending ? nullptr : &got);
                               return rc != MPI_OK || flag != 0;
                           }) &&
                     rc == MPI_OK;
        } catch (const PeerLost&) {
            if (req != 0) mpi_->cancel_free(&req, sending ? 0 : 1);
            throw;
        }
        if (!ok || static_cast<size_t>(got) != n) {
            const std::string why =
                ok ? "rank " + std::to_string(peer) + " sent " + std::to_string(got) + " bytes where " +
                         std::to_string(n) + " were due"
                   : std::string(what) + " rank " + std::to_string(peer) + " failed: " + mpi_error_text(*mpi_, rc);
            mark_lost(peer, why);
            throw PeerLost(why);
        }
        data += n;
        left -= n;
    } while (left > 0);
    if (tag == TAG_PAYLOAD) {
        std::lock_guard lock(mu_);
        (sending ? peer_locked(peer).sent : peer_locked(peer).received) += nbytes;
    }
}

void MpiTransport::send(int peer, int tag, const void* data, size_t nbytes) {
    // MPI_Isend reads the buffer only; move() takes it as char* for both ways.
    move(peer, tag, static_cast<char*>(const_cast<void*>(data)), nbytes,
         true);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
}

void MpiTransport::receive(int peer, int tag, void* data, size_t nbytes) {
    move(peer, tag, static_cast<char*>(data), nbytes, false);
}

void MpiTransport::send_view(int peer, const uint8_t* base, const Tensor& view, std::vector<uint8_t>& scratch) {
    const uint64_t nbytes = view_payload_bytes(view);
    if (view_is_one_run(view)) {
        send(peer, TAG_PAYLOAD, base + view.byte_offset, nbytes);
        return;
    }
    scratch.resize(nbytes);
    pack_view(base, view, scratch.data());
    send(peer, TAG_PAYLOAD, scratch.data(), nbytes);
}

void MpiTransport::receive_view(int peer, uint8_t* base, const Tensor& view, std::vector<uint8_t>& scratch) {
    const uint64_t nbytes = view_payload_bytes(view);
    if (base != nullptr && view_is_one_run(view)) {
        receive(peer, TAG_PAYLOAD, base + view.byte_offset, nbytes);
        return;
    }
    scratch.resize(nbytes);
    receive(peer, TAG_PAYLOAD, scratch.data(), nbytes);
    if (base != nullptr) unpack_view(base, view, scratch.data());
}

std::vector<std::byte> MpiTransport::receive_frame(int peer, ipc::Deadline until) {
    check_peer(peer);
    SimplerMpiHandle message = 0;
    int source = 0;
    int count = 0;
    int rc = MPI_OK;
    const bool arrived = await(peer, until, SPIN_BUDGET, [&] {
        int flag = 0;
        rc = mpi_->improbe(peer, TAG_FRAME, comm_, &flag, &message, &source, &count);
        return rc != MPI_OK || flag != 0;
    });
    if (!arrived) return {};
    if (rc != MPI_OK) {
        const std::string why = "probing rank " + std::to_string(peer) + " failed: " + mpi_error_text(*mpi_, rc);
        mark_lost(peer, why);
        throw PeerLost(why);
    }
    std::vector<std::byte> out(static_cast<size_t>(std::max(count, 0)));
    rc = mpi_->mrecv(out.data(), count, &message);
    if (rc != MPI_OK) {
        const std::string why =
            "receiving a frame from rank " + std::to_string(peer) + " failed: " + mpi_error_text(*mpi_, rc);
        mark_lost(peer, why);
        throw PeerLost(why);
    }
    return out;
}

uint64_t MpiTransport::payload_bytes_sent(int peer) const {
    std::lock_guard lock(mu_);
    const auto it = peers_.find(peer);
    return it == peers_.end() ? 0 : it->second.sent;
}

uint64_t MpiTransport::payload_bytes_received(int peer) const {
    std::lock_guard lock(mu_);
    const auto it = peers_.find(peer);
    return it == peers_.end() ? 0 : it->second.received;
}

void MpiTransport::heartbeat_loop() {
    std::unique_lock lock(mu_);
    while (!stop_) {
        // Take in every heartbeat that arrived.
        for (;;) {
            int flag = 0;
            SimplerMpiHandle message = 0;
            int source = 0;
            int count = 0;
            if (mpi_->improbe(-1, TAG_HEARTBEAT, comm_, &flag, &message, &source, &count) != MPI_OK || !flag) break;
            char byte = 0;
            mpi_->mrecv(&byte, 1, &message);
            Peer& p = peer_locked(source);
            p.last_heard = ipc::Clock::now();
            if (p.watch_when_heard) {
                p.watched = true;
                p.watch_when_heard = false;
            }
        }
        const ipc::Clock::time_point now = ipc::Clock::now();
        for (auto& [rank, p] : peers_) {
            if (!p.lost.empty()) continue;
            if (p.watched && now - p.last_heard > timeout_) {
                p.lost = "no heartbeat for " +
                         seconds(std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_heard)) +
                         " (its process died or was killed, or its host is gone)";
                p.beat = p.watched = false;
                job_lost_rank_.store(true, std::memory_order_release);
                continue;
            }
            if (!p.beat) continue;
            // One heartbeat in flight per peer: a peer that takes none in is not sent more.
            if (p.heartbeat_request != 0) {
                int flag = 0;
                mpi_->test(&p.heartbeat_request, &flag, nullptr);
                if (!flag) continue;
            }
            mpi_->isend(&p.heartbeat_byte, 1, rank, TAG_HEARTBEAT, comm_, &p.heartbeat_request);
        }
        wake_.wait_for(lock, HEARTBEAT_INTERVAL);
    }
}

}  // namespace simpler
