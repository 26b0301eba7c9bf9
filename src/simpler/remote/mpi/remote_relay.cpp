#include "simpler/remote/mpi/remote_relay.h"

#include <memory>
#include <utility>
#include <vector>

#include "simpler/backing/import_registry.h"
#include "simpler/engine/failure_report.h"
#include "simpler/ipc/mailbox_frame.h"
#include "simpler/remote/remote_frame.h"
#include "simpler/task_interface/task_args_wire.h"

namespace simpler {

namespace {

using ipc::TaskError;
using ipc::TaskOutcome;

// A remote child is a level-3 Worker (add_remote_workers is a level-4 Worker's).
constexpr uint32_t REMOTE_WORKER_LEVEL = 3;

class Relay {
public:
    Relay(RemoteChild child, MpiTransport& t, std::chrono::milliseconds close_timeout)
        : child_(std::move(child)), t_(t), close_timeout_(close_timeout) {}
    Relay(const Relay&) = delete;
    Relay& operator=(const Relay&) = delete;

    ~Relay() {
        if (!t_.lost(child_.rank).empty()) return;
        try {
            // word 1: the job lost a rank, so the child must not wait for it in MPI_Finalize
            send_frame(encode_text_frame(FrameType::SHUTDOWN, 0, t_.job_lost_rank() ? 1 : 0, 0, {}));
            const ipc::Deadline until = ipc::Clock::now() + close_timeout_;
            for (;;) {
                std::vector<std::byte> m = t_.receive_frame(child_.rank, until);
                if (m.empty()) break;  // no goodbye in time; its own heartbeat watch ends it
                if (decode_frame(m).type == FrameType::BYE) break;
            }
        } catch (const std::exception&) {
            // A child that went away while closing has nothing left to say.
        }
        t_.unwatch(child_.rank);
    }

    void start(std::chrono::milliseconds timeout) {
        send_frame(encode_text_frame(FrameType::HELLO, 0, 0, 0, child_.hello));
        std::vector<std::byte> m = t_.receive_frame(child_.rank, ipc::Clock::now() + timeout);
        if (m.empty())
            throw std::runtime_error(name() + " did not start within " + std::to_string(timeout.count()) +
                                     " ms (no READY): is that rank running this program, and did it reach init()?");
        const RemoteFrame f = decode_frame(m);
        if (f.type != FrameType::READY)
            throw std::runtime_error(name() + " answered its HELLO with a " + frame_type_name(f.type) + " frame");
        if (std::string_view why = frame_text(f); !why.empty())
            throw std::runtime_error(name() + " did not start: " + std::string(why));
        t_.watch(child_.rank);
    }

    TaskOutcome run(const ipc::TaskView& task) {
        if (std::string why = t_.lost(child_.rank); !why.empty()) return lost_outcome(why);
        TaskArgsView view;
        if (const ValidationError e = TaskArgsView::open(task.blob.data(), task.blob.size(), view); !e.ok())
            return {TaskError::BAD_ARGUMENTS, e.message()};
        const CallConfig config = call_config_from_bytes(task.config.bytes);
        const auto n = static_cast<size_t>(view.tensor_count());
        tensors_.resize(n);
        wire_.resize(n);
        flags_.resize(n);
        bases_.resize(n);
        for (size_t i = 0; i < n; ++i) {
            Tensor& t = tensors_[i];
            if (const ValidationError e = view.tensor(static_cast<int32_t>(i), t); !e.ok())
                return {TaskError::BAD_ARGUMENTS, e.message()};
            const auto backend = static_cast<BackendKind>(t.buffer.backend_kind);
            if (t.buffer.address_space != static_cast<uint8_t>(AddressSpace::HOST) ||
                backend == BackendKind::REMOTE_SIDECAR)
                return {TaskError::BAD_ARGUMENTS,
                        "argument " + std::to_string(i) + " (buffer " + t.buffer.identity.to_string() + ", " +
                            backend_kind_name(t.buffer.backend_kind) + ") has no bytes on this host to send to " +
                            name() +
                            "; a remote L3 takes host buffers of its L4 (device memory belongs to the L3 that "
                            "allocated it)"};
            try {
                bases_[i] = reinterpret_cast<uint8_t*>(registry_.import_backing(t.buffer).base);
            } catch (const std::exception& e) {
                return {TaskError::BAD_ARGUMENTS, "argument " + std::to_string(i) + ": " + e.what()};
            }
            const bool written = writes_tensor(config, i);
            // A view the task writes without reading (OUTPUT_EXISTING) has nothing worth fetching.
            const bool fetch = !writes_only_tensor(config, i);
            flags_[i] = static_cast<uint8_t>((fetch ? SIDECAR_FETCH : 0) | (written ? SIDECAR_WRITE_BACK : 0));
            wire_[i] = t;
            wire_[i].buffer = sidecar_descriptor(t.buffer);
        }
        scalars_.resize(static_cast<size_t>(view.scalar_count()));
        for (int32_t i = 0; i < view.scalar_count(); ++i) scalars_[static_cast<size_t>(i)] = view.scalar(i);
        const uint64_t seq = ++seq_;
        try {
            send_frame(encode_task_frame(seq, task.callable_id, config, flags_, wire_, scalars_));
            for (size_t i = 0; i < n; ++i)
                if (flags_[i] & SIDECAR_FETCH) t_.send_view(child_.rank, bases_[i], tensors_[i], scratch_);
            return await_done(seq, n);
        } catch (const PeerLost& e) {
            return lost_outcome(e.what());
        }
    }

    void forget(std::span<const CanonicalIdentity> ids) {
        for (const CanonicalIdentity& id : ids) registry_.forget(id);
        if (!t_.lost(child_.rank).empty()) return;
        try {
            send_frame(encode_forget_frame(ids));
        } catch (const PeerLost&) {
            // lost: the lane goes at the next look
        }
    }

    std::string lost() const {
        const std::string why = t_.lost(child_.rank);
        return why.empty() ? why : lost_text(why);
    }

private:
    std::string name() const { return "rank " + std::to_string(child_.rank) + " (" + child_.path + ")"; }
    std::string lost_text(const std::string& why) const { return name() + " was lost: " + why; }
    // The task's failure when the rank is lost with it: the remote L3's part of
    // the report is that the Worker itself died (no task of its own failed).
    TaskOutcome lost_outcome(const std::string& why) const {
        FailedTask lost;
        lost.level = REMOTE_WORKER_LEVEL;
        lost.code = FailureCode::CHILD_DIED;
        lost.text = lost_text(why);
        return {TaskError::FAILED_BELOW,
                encode_failure(FailureReport{{std::move(lost)}}, ipc::ERROR_MESSAGE_BYTES - 1)};
    }

    void send_frame(const std::vector<std::byte>& frame) {
        t_.send(child_.rank, TAG_FRAME, frame.data(), frame.size());
    }

    TaskOutcome await_done(uint64_t seq, size_t n) {
        const std::vector<std::byte> m = t_.receive_frame(child_.rank);
        RemoteFrame f;
        try {
            f = decode_frame(m);
        } catch (const RemoteFrameError& e) {
            return broken(e.what());
        }
        if (f.type != FrameType::DONE || f.seq != seq)
            return broken(std::string("expected DONE of task ") + std::to_string(seq) + ", got " +
                          frame_type_name(f.type) + " of " + std::to_string(f.seq));
        size_t written = 0;
        for (size_t i = 0; i < n; ++i) written += (flags_[i] & SIDECAR_WRITE_BACK) ? 1 : 0;
        if (f.count != 0 && f.count != written)
            return broken("DONE carries " + std::to_string(f.count) + " payloads for " + std::to_string(written) +
                          " written views");
        const std::string text(frame_text(f));
        if (f.count != 0)
            for (size_t i = 0; i < n; ++i)
                if (flags_[i] & SIDECAR_WRITE_BACK) t_.receive_view(child_.rank, bases_[i], tensors_[i], scratch_);
        if (f.word == 0) return {};
        return {f.word == 2 ? TaskError::FAILED_BELOW : TaskError::TASK_FAILED, text};
    }

    // A frame the protocol cannot explain: the link is no longer trusted.
    TaskOutcome broken(const std::string& what) {
        const std::string why = "sent a bad frame: " + what;
        t_.mark_lost(child_.rank, why);
        return lost_outcome(why);
    }

    RemoteChild child_;
    MpiTransport& t_;
    std::chrono::milliseconds close_timeout_;
    ImportRegistry registry_;
    uint64_t seq_ = 0;
    std::vector<Tensor> tensors_;
    std::vector<Tensor> wire_;
    std::vector<uint8_t> flags_;
    std::vector<uint8_t*> bases_;
    std::vector<uint64_t> scalars_;
    std::vector<uint8_t> scratch_;
};

}  // namespace

RelayLane make_remote_relay(const RemoteChild& child, MpiTransport& transport, std::chrono::milliseconds start_timeout,
                            std::chrono::milliseconds close_timeout) {
    auto relay = std::make_shared<Relay>(child, transport, close_timeout);
    relay->start(start_timeout);
    return RelayLane{ChildHandlers([relay](const ipc::TaskView& task) { return relay->run(task); },
                                   [relay](std::span<const CanonicalIdentity> ids) { relay->forget(ids); }),
                     [relay] { return relay->lost(); }};
}

}  // namespace simpler
