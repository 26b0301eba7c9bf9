// RemoteRelay: the L4's side of a remote L3 Worker — the RelayLane a Worker
// serves that child's lane with (engine/child_handlers.h), on the L4's host.
//
// make_remote_relay sends the child's HELLO (its configuration, as text) to
// its rank and waits up to `start_timeout` for READY: an empty READY starts
// the lane and the rank's heartbeats are watched from then on; a READY with
// text (the child could not start: a callable that does not resolve there, a
// bad option) or no READY in time fails with std::runtime_error naming the
// rank and the child.
//
// Each task goes as one TASK frame whose tensors are REMOTE_SIDECAR
// descriptors (the source's identity, access and nbytes), followed by the
// packed bytes of every view the task reads; the relay then waits for DONE and
// writes the bytes of every view the task writes back into the L4's backing
// before it reports the task done (remote_frame.h). The backings are mapped
// once each by the relay's ImportRegistry. A DEVICE or REMOTE_SIDECAR
// argument is refused (BAD_ARGUMENTS): its bytes are not on this host.
// A lost rank fails the task in flight with a message naming the rank, the
// child and why, and every later one at once; lost() then says the same to
// the Worker, which loses the lane. A forget drops the backings from the
// relay's registry and goes on to the child. When the lane closes the relay
// sends SHUTDOWN and waits up to `close_timeout` for BYE.
#pragma once

#include <chrono>
#include <string>

#include "simpler/engine/child_handlers.h"
#include "simpler/remote/mpi/mpi_transport.h"

namespace simpler {

struct RemoteChild {
    int rank = 1;
    std::string path;   // "L4/L3[1]": what messages call the child
    std::string hello;  // its configuration (HELLO text)
};

RelayLane make_remote_relay(const RemoteChild& child, MpiTransport& transport, std::chrono::milliseconds start_timeout,
                            std::chrono::milliseconds close_timeout);

}  // namespace simpler
