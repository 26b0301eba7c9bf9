// RemoteServer: a remote L3 Worker's side of its link to the L4 — the loop a
// non-zero rank runs (docs/internals/remote.md).
//
// await_hello() returns the configuration the L4 sent; ready() answers it
// (empty: started; else why not, which fails the L4's init()). serve() then
// runs every TASK until SHUTDOWN (returns 0) or until the L4 is lost (returns
// 1): each REMOTE_SIDECAR argument is resolved to this host's shadow of its
// backing (PosixShmOwner::create_shadow: made on first sight, kept by identity
// until the L4 frees the backing), the fetched views' bytes are unpacked into
// it, and the handler runs the task on a blob whose tensors name the shadows
// (the same identity, so everything below keys on it as the L4 does). Then
// DONE goes back with the written views' bytes (none when the task failed).
// A FORGET closes those shadows (their bytes are freed once no task of this
// process names them) and goes to the forget handler. A frame that does not
// decode ends the link: serve() returns 1 after logging why.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "simpler/backing/posix_shm_owner.h"
#include "simpler/ipc/serve_tasks.h"
#include "simpler/remote/mpi/mpi_transport.h"
#include "simpler/remote/remote_frame.h"

namespace simpler {

struct RemoteServeHandlers {
    // Runs the task: error NONE on success; FAILED_BELOW with the rank's
    // Worker's encoded FailureReport; else why it failed, in words.
    std::function<ipc::TaskOutcome(uint64_t callable, std::span<const std::byte> blob, const CallConfig& config)> run;
    std::function<void(std::span<const CanonicalIdentity>)> forget;
};

class RemoteServer {
public:
    explicit RemoteServer(MpiTransport& transport, int parent = 0);
    ~RemoteServer();
    RemoteServer(const RemoteServer&) = delete;
    RemoteServer& operator=(const RemoteServer&) = delete;

    // How long a rank waits for its HELLO (the L4 reaches init() about when it does).
    static constexpr std::chrono::seconds HELLO_TIMEOUT{600};

    // The HELLO text ("" for a SHUTDOWN: not needed); std::runtime_error when
    // the parent is lost, sends another frame first, or none within HELLO_TIMEOUT.
    std::string await_hello();
    void ready(std::string_view why);
    int serve(const RemoteServeHandlers& handlers);
    // Sends BYE (after a SHUTDOWN) and closes every shadow.
    void bye();
    // Why serve() ended when it returned 1.
    [[nodiscard]] const std::string& ended_why() const noexcept { return ended_why_; }
    [[nodiscard]] size_t shadow_count() const noexcept { return shadows_.size(); }

private:
    // The shadow of `sidecar`'s backing, made on first sight; nullptr and `why` when it cannot be.
    PosixShmOwner* shadow(const BufferDescriptor& sidecar, std::string& why);
    void run_task(const RemoteFrame& frame, const RemoteServeHandlers& handlers);
    void close_shadows() noexcept;

    MpiTransport& t_;
    int parent_;
    std::unordered_map<CanonicalIdentity, std::unique_ptr<PosixShmOwner>> shadows_;
    std::vector<uint8_t> scratch_;
    std::vector<std::byte> blob_;
    std::string ended_why_;
};

}  // namespace simpler
