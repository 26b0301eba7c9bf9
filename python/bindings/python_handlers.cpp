#include "python_handlers.h"

#include <nanobind/stl/string.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checked_args.h"
#include "simpler/engine/failure_report.h"
#include "simpler/ipc/mailbox_frame.h"

namespace nb = nanobind;

namespace simpler::bindings {

std::string python_error_text(const nb::python_error& e) {
    try {
        nb::object lines =
            nb::module_::import_("traceback").attr("format_exception")(e.type(), e.value(), e.traceback());
        return simpler::bindings::utf8_of(nb::str("").attr("join")(lines));
    } catch (const nb::python_error&) {
        return simpler::bindings::short_type_name(e.type()) + ": " + simpler::bindings::utf8_of(e.value());
    }
}

simpler::ipc::TaskOutcome outcome_of(const nb::object& answer) {
    if (answer.is_none()) return {};
    if (nb::isinstance<simpler::FailureReport>(answer))
        return {simpler::ipc::TaskError::FAILED_BELOW,
                simpler::encode_failure(nb::cast<const simpler::FailureReport&>(answer),
                                        simpler::ipc::ERROR_MESSAGE_BYTES - 1)};
    return {simpler::ipc::TaskError::TASK_FAILED, simpler::bindings::utf8_of(answer)};
}

simpler::ipc::TaskHandler python_handler(const nb::object& dispatch) {
    return [dispatch](const simpler::ipc::TaskView& task) -> simpler::ipc::TaskOutcome {
        try {
            nb::bytes blob(reinterpret_cast<const char*>(task.blob.data()), task.blob.size());
            nb::bytes config(reinterpret_cast<const char*>(task.config.bytes), sizeof task.config.bytes);
            return outcome_of(dispatch(task.callable_id, blob, config));
        } catch (const nb::python_error& e) {
            return {simpler::ipc::TaskError::TASK_FAILED, python_error_text(e)};
        }
    };
}

simpler::ForgetHandler python_forget(nb::object forget, const char* where) {
    return [forget = std::move(forget), where](std::span<const simpler::CanonicalIdentity> ids) {
        try {
            nb::list out;
            for (const simpler::CanonicalIdentity& id : ids) out.append(id);
            forget(out);
        } catch (nb::python_error& e) {
            e.discard_as_unraisable(where);
        }
    };
}

simpler::ForgetHandler python_forget() {
    return python_forget(nb::module_::import_("simpler.model.buffer").attr("forget_imports"),
                         "simpler: forget in a Python child");
}

simpler::InstallHandler python_install(nb::object install) {
    return [install = std::move(install)](uint64_t callable, std::span<const std::byte> payload) -> std::string {
        try {
            nb::bytes bytes(reinterpret_cast<const char*>(payload.data()), payload.size());
            nb::object r = install(callable, bytes);
            if (r.is_none()) return {};
            std::string why = simpler::bindings::utf8_of(r);
            return why.empty() ? std::string("the install handler refused it") : why;
        } catch (const nb::python_error& e) {
            return python_error_text(e);
        }
    };
}

simpler::ChildHandlers next_level_worker_handler(const nb::object& worker_start, uint32_t index) {
    nb::tuple started = nb::cast<nb::tuple>(worker_start(index));
    struct Closer {
        nb::object close;
        explicit Closer(nb::object c) : close(std::move(c)) {}
        Closer(const Closer&) = delete;
        Closer& operator=(const Closer&) = delete;
        ~Closer() {
            try {
                close();
            } catch (const nb::python_error& e) {
                std::fprintf(stderr, "simpler: closing a next-level Worker failed: %s\n", python_error_text(e).c_str());
            }
        }
    };
    auto closer = std::make_shared<Closer>(nb::borrow(started[1]));
    simpler::ipc::TaskHandler run = python_handler(started[0]);
    return {[run = std::move(run), closer](const simpler::ipc::TaskView& task) { return run(task); },
            python_forget(nb::borrow(started[2]), "simpler: forget in a next-level Worker")};
}

}  // namespace simpler::bindings
