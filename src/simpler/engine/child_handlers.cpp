#include "simpler/engine/child_handlers.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace simpler {

ipc::TaskHandler serve_with_forget(ChildHandlers handlers) {
    auto h = std::make_shared<ChildHandlers>(std::move(handlers));
    return [h](const ipc::TaskView& task) -> ipc::TaskOutcome {
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
