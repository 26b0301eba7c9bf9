#include "simpler/engine/child_handlers.h"

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace simpler {

namespace {

ipc::TaskOutcome serve_install(const ChildHandlers& h, std::span<const std::byte> blob) {
    if (blob.size() < INSTALL_HEADER_BYTES)
        return {ipc::TaskError::BAD_ARGUMENTS,
                "install message: " + std::to_string(blob.size()) + " bytes is shorter than its 8-byte callable id"};
    uint64_t callable = 0;
    std::memcpy(&callable, blob.data(), INSTALL_HEADER_BYTES);
    if (!h.install) return {ipc::TaskError::TASK_FAILED, "this child takes no callables registered after it started"};
    std::string why;
    try {
        why = h.install(callable, blob.subspan(INSTALL_HEADER_BYTES));
    } catch (const std::exception& e) {
        why = e.what();
        if (why.empty()) why = "the install handler failed";
    }
    if (why.empty()) return {};
    return {ipc::TaskError::TASK_FAILED, why};
}

}  // namespace

std::vector<std::byte> install_blob(uint64_t callable, std::span<const std::byte> payload) {
    std::vector<std::byte> blob(INSTALL_HEADER_BYTES + payload.size());
    std::memcpy(blob.data(), &callable, INSTALL_HEADER_BYTES);
    if (!payload.empty()) std::memcpy(blob.data() + INSTALL_HEADER_BYTES, payload.data(), payload.size());
    return blob;
}

ipc::TaskHandler serve_with_control(ChildHandlers handlers) {
    auto h = std::make_shared<ChildHandlers>(std::move(handlers));
    return [h](const ipc::TaskView& task) -> ipc::TaskOutcome {
        if (task.callable_id == INSTALL_CALLABLE) return serve_install(*h, task.blob);
        if (task.callable_id != FORGET_CALLABLE) return h->run(task);
        if (task.blob.size() % sizeof(CanonicalIdentity) != 0)
            return {ipc::TaskError::BAD_ARGUMENTS, "forget message: " + std::to_string(task.blob.size()) +
                                                       " bytes is not a whole number of 32-byte identities"};
        std::vector<CanonicalIdentity> ids(task.blob.size() / sizeof(CanonicalIdentity));
        if (!ids.empty()) std::memcpy(ids.data(), task.blob.data(), task.blob.size());
        if (h->forget) h->forget(ids);
        return {};
    };
}

}  // namespace simpler
