#include "simpler/remote/mpi/remote_server.h"

#include <utility>

#include "simpler/task_interface/task_args_wire.h"

namespace simpler {

RemoteServer::RemoteServer(MpiTransport& transport, int parent) : t_(transport), parent_(parent) {
    t_.watch_once_heard(parent_);
}

RemoteServer::~RemoteServer() { close_shadows(); }

std::string RemoteServer::await_hello() {
    const std::vector<std::byte> m = t_.receive_frame(parent_, ipc::Clock::now() + HELLO_TIMEOUT);
    if (m.empty())
        throw std::runtime_error("remote: no HELLO from rank " + std::to_string(parent_) + " within " +
                                 std::to_string(HELLO_TIMEOUT.count()) + " s");
    const RemoteFrame f = decode_frame(m);
    if (f.type == FrameType::SHUTDOWN) return {};
    if (f.type != FrameType::HELLO)
        throw std::runtime_error(std::string("remote: expected HELLO from rank ") + std::to_string(parent_) + ", got " +
                                 frame_type_name(f.type));
    return std::string(frame_text(f));
}

void RemoteServer::ready(std::string_view why) {
    const std::vector<std::byte> m = encode_text_frame(FrameType::READY, 0, 0, 0, why);
    t_.send(parent_, TAG_FRAME, m.data(), m.size());
}

PosixShmOwner* RemoteServer::shadow(const BufferDescriptor& sidecar, std::string& why) {
    if (const auto it = shadows_.find(sidecar.identity); it != shadows_.end()) {
        const BufferDescriptor& d = it->second->descriptor();
        if (d.nbytes != sidecar.nbytes || d.access != sidecar.access) {
            why = "buffer " + sidecar.identity.to_string() + " arrived with nbytes " + std::to_string(sidecar.nbytes) +
                  " and access " + std::to_string(sidecar.access) + ", but earlier with " + std::to_string(d.nbytes) +
                  " and " + std::to_string(d.access);
            return nullptr;
        }
        return it->second.get();
    }
    try {
        std::unique_ptr<PosixShmOwner> s = PosixShmOwner::create_shadow(sidecar);
        PosixShmOwner* out = s.get();
        shadows_.emplace(sidecar.identity, std::move(s));
        return out;
    } catch (const std::exception& e) {
        why = "no host copy of buffer " + sidecar.identity.to_string() + ": " + e.what();
        return nullptr;
    }
}

void RemoteServer::run_task(const RemoteFrame& frame, const RemoteServeHandlers& handlers) {
    RemoteTask task = decode_task(frame);
    std::string why;
    uint64_t status = 1;  // DONE's word when it failed: 1 why in words, 2 an encoded FailureReport
    std::vector<PosixShmOwner*> shadows(task.tensors.size(), nullptr);
    for (size_t i = 0; i < task.tensors.size(); ++i) {
        Tensor& t = task.tensors[i];
        PosixShmOwner* s = why.empty() ? shadow(t.buffer, why) : nullptr;
        shadows[i] = s;
        // Every payload is taken in, even when the task cannot run: the link stays in step.
        if (task.flags[i] & SIDECAR_FETCH) t_.receive_view(parent_, s != nullptr ? s->data() : nullptr, t, scratch_);
        if (s != nullptr) t.buffer = s->descriptor();
    }
    if (why.empty()) {
        blob_.resize(blob_size(static_cast<int64_t>(task.tensors.size()), static_cast<int64_t>(task.scalars.size())));
        write_wire_blob(task.tensors, task.scalars, blob_.data());
        try {
            ipc::TaskOutcome outcome = handlers.run(task.callable, blob_, task.config);
            if (outcome.error != ipc::TaskError::NONE) {
                why = outcome.message.empty() ? std::string("the task failed") : std::move(outcome.message);
                if (outcome.error == ipc::TaskError::FAILED_BELOW) status = 2;
            }
        } catch (const std::exception& e) {
            why = e.what();
        }
    }
    uint32_t written = 0;
    if (why.empty())
        for (uint8_t f : task.flags) written += (f & SIDECAR_WRITE_BACK) ? 1 : 0;
    const std::vector<std::byte> done =
        encode_text_frame(FrameType::DONE, task.seq, why.empty() ? 0 : status, written, why);
    t_.send(parent_, TAG_FRAME, done.data(), done.size());
    if (written == 0) return;
    for (size_t i = 0; i < task.tensors.size(); ++i)
        if (task.flags[i] & SIDECAR_WRITE_BACK) t_.send_view(parent_, shadows[i]->data(), task.tensors[i], scratch_);
}

int RemoteServer::serve(const RemoteServeHandlers& handlers) {
    try {
        for (;;) {
            const std::vector<std::byte> m = t_.receive_frame(parent_);
            const RemoteFrame f = decode_frame(m);
            switch (f.type) {
                case FrameType::TASK: run_task(f, handlers); break;
                case FrameType::FORGET: {
                    const std::vector<CanonicalIdentity> ids = decode_forget(f);
                    for (const CanonicalIdentity& id : ids) {
                        const auto it = shadows_.find(id);
                        if (it == shadows_.end()) continue;
                        try {
                            it->second->close();
                        } catch (const std::exception&) {
                            continue;  // exported here still; it goes with the server
                        }
                        shadows_.erase(it);
                    }
                    if (handlers.forget) handlers.forget(ids);
                    break;
                }
                case FrameType::SHUTDOWN:
                    if (f.word != 0) t_.note_rank_lost_elsewhere();
                    return 0;
                default:
                    throw RemoteFrameError(std::string("remote: unexpected ") + frame_type_name(f.type) +
                                           " frame from rank " + std::to_string(parent_));
            }
        }
    } catch (const PeerLost& e) {
        ended_why_ = "rank " + std::to_string(parent_) + " (the L4) was lost: " + e.what();
    } catch (const RemoteFrameError& e) {
        ended_why_ = e.what();
        t_.mark_lost(parent_, ended_why_);
    }
    return 1;
}

void RemoteServer::bye() {
    close_shadows();
    if (!t_.lost(parent_).empty()) return;
    const std::vector<std::byte> m = encode_text_frame(FrameType::BYE, 0, 0, 0, {});
    try {
        t_.send(parent_, TAG_FRAME, m.data(), m.size());
    } catch (const PeerLost&) {
        // gone already: nothing waits for the goodbye
    }
    t_.unwatch(parent_);
}

void RemoteServer::close_shadows() noexcept {
    for (auto& [id, s] : shadows_) {
        try {
            s->close();
        } catch (const std::exception&) {
            // an export still alive: the destructor unlinks at exit
        }
    }
    shadows_.clear();
}

}  // namespace simpler
