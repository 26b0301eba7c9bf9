// ChildHandlers: what a child process of a Worker serves with, made inside the
// child right after fork by the Worker's ChildHandlerFactory — the task
// handler, the forget handler that hears the identities of backings their
// owner has freed (the Worker's forget message, FORGET_CALLABLE below), and
// the install handler that takes a callable registered after the child
// started (the install message, INSTALL_CALLABLE below).
//
// A forget handler drops each identity from the child's import cache
// (ImportRegistry::forget: a mapping a host export still refers to stays
// mapped until the export goes, and a late descriptor of that generation is
// refused). A child that forwards to another level (a nested Worker) forgets in
// its own registry and passes the identities on with its own Worker::forget.
// Without one, forgets are received and ignored.
//
// The forget message travels through the lane's mailbox as a task the engine
// publishes itself: callable id FORGET_CALLABLE, a zero call config, and a
// blob of whole 32-byte CanonicalIdentity values (docs/internals/ipc.md). The Worker
// hands that lane no task until the child has answered it; a submit naming
// FORGET_CALLABLE is refused.
//
// The install message travels the same way: callable id INSTALL_CALLABLE, a
// zero call config, and a blob of the new callable's u64 id (little-endian)
// followed by a payload only the child's install handler reads (a chip's is
// chip_install.h's; a Python sub-worker's is simpler.runtime.callables's). The
// handler returns why it could not install the callable (empty: installed);
// the child answers FAILED with that text, and the Worker hands the lane no
// task until the child has answered. A submit naming INSTALL_CALLABLE is
// refused.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "simpler/ipc/serve_tasks.h"
#include "simpler/task_interface/identity.h"

namespace simpler {

inline constexpr uint64_t FORGET_CALLABLE = ~uint64_t{0};
inline constexpr uint64_t INSTALL_CALLABLE = ~uint64_t{0} - 1;
// The install blob's header: the new callable's id.
inline constexpr size_t INSTALL_HEADER_BYTES = sizeof(uint64_t);

using ForgetHandler = std::function<void(std::span<const CanonicalIdentity> identities)>;
// Installs callable `callable` from `payload`; returns why it could not (empty: installed).
using InstallHandler = std::function<std::string(uint64_t callable, std::span<const std::byte> payload)>;

struct ChildHandlers {
    ipc::TaskHandler run;
    ForgetHandler forget;    // empty: forgets are ignored
    InstallHandler install;  // empty: every install is refused (the child takes no late callables)

    ChildHandlers() = default;
    ChildHandlers(ipc::TaskHandler r, ForgetHandler f, InstallHandler i = {})
        : run(std::move(r)), forget(std::move(f)), install(std::move(i)) {}
    // A task handler alone (a child that caches nothing).
    template <class F>
        requires std::invocable<F&, const ipc::TaskView&> && (!std::same_as<std::decay_t<F>, ChildHandlers>)
    ChildHandlers(F f) : run(std::move(f)) {}  // NOLINT(google-explicit-constructor): a handler is a ChildHandlers
};

// Makes, inside child `index` right after fork, what it serves with.
using ChildHandlerFactory = std::function<ChildHandlers(uint32_t index)>;

// A next-level child that is no process of this host (a remote L3 Worker): a
// relay thread of the Worker serves its lane in this process with `handlers`,
// which carry each task to the child and its result back. `lost` says, once
// the child is gone for good, why (empty while it is reachable); the relay
// thread asks after every idle spell and after every task, and the Worker then
// loses the lane with that text. The Worker also asks, under its engine mutex,
// when a task of the lane fails (so the lane is lost before the failure
// reaches wait()): `lost` must be callable from any thread.
struct RelayLane {
    ChildHandlers handlers;
    std::function<std::string()> lost;
};

// Makes, in the Worker's own process at init() (after every fork), the relay
// of next-level child `index`; an exception fails init().
using RelayLaneFactory = std::function<RelayLane(uint32_t index)>;

// The blob of an install message: `callable` (the header), then `payload`.
std::vector<std::byte> install_blob(uint64_t callable, std::span<const std::byte> payload);

// The task handler serve_tasks runs in the child: FORGET_CALLABLE goes to
// `handlers.forget` (a blob that is not whole identities is BAD_ARGUMENTS),
// INSTALL_CALLABLE to `handlers.install` (a blob shorter than its header is
// BAD_ARGUMENTS; a refusal, or an exception the handler throws, TASK_FAILED
// with its text), every other callable to `handlers.run`.
ipc::TaskHandler serve_with_control(ChildHandlers handlers);

}  // namespace simpler
