// Binds a Worker's options: WorkerConfig (and the ChipLaneConfig it holds)
// with read/write fields; spin, task_timeout and close_grace read and write
// seconds. Defaults and validation are the C++ struct's
// (WorkerConfig::validate; ValueError). Called by bind_engine() where these
// classes belong in the module (the stub keeps its order).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "simpler/engine/worker.h"
#include "simpler/task_interface/field_refusal.h"
#include "value_eq.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::Worker;
using simpler::WorkerConfig;

namespace {

// Seconds as a whole count of `Duration`, rounded away from zero (a positive
// time never becomes 0: none). ValueError for a value no int64 count holds.
template <class Duration>
Duration duration_of(const char* field, double seconds) {
    const double ticks =
        seconds * static_cast<double>(Duration::period::den) / static_cast<double>(Duration::period::num);
    if (!std::isfinite(ticks) || std::fabs(ticks) > 9e18)
        throw std::invalid_argument(std::string("WorkerConfig.") + field +
                                    ": not a representable number of seconds (got " + std::to_string(seconds) + ")");
    return Duration(static_cast<int64_t>(ticks > 0 ? std::ceil(ticks) : std::floor(ticks)));
}

template <class Duration>
double seconds_of(Duration d) {
    return std::chrono::duration<double>(d).count();
}

// None: the adaptive default policy; 0: never spin (every hand-off sleeps on a
// futex); s > 0: spin a fixed s seconds before sleeping (validate() bounds it).
simpler::ipc::SpinPolicy spin_policy_of(std::optional<double> spin_s) {
    if (!spin_s) return simpler::ipc::SpinPolicy{};
    if (*spin_s == 0) return simpler::ipc::never_spin_policy();
    return simpler::ipc::fixed_spin_policy(duration_of<std::chrono::nanoseconds>("spin", *spin_s));
}

std::optional<double> spin_seconds(const simpler::ipc::SpinPolicy& p) {
    if (p.adaptive) return std::nullopt;
    return seconds_of(p.max_spin);
}

}  // namespace

void bind_worker_config(nb::module_& m) {
    // A refused field as a value (field_refusal.h): the Python layer words it from .field and .rule.
    static nb::object field_refused = nb::steal(PyErr_NewExceptionWithDoc(
        "simpler._core.FieldRefused",
        "A config struct refused one field's value: .field is its dotted path (\"WorkerConfig.chip_lane.chip."
        "arena_bytes\"), .rule what it broke (\"must be > 0 (got 0)\"); the message is \"<field>: <rule>\".",
        PyExc_ValueError, nullptr));
    m.attr("FieldRefused") = field_refused;
    nb::register_exception_translator(
        [](const std::exception_ptr& p, void* payload) {
            try {
                std::rethrow_exception(p);
            } catch (const simpler::FieldRefusal& e) {
                auto* type = static_cast<PyObject*>(payload);
                nb::object exc = nb::steal(PyObject_CallFunction(type, "s", e.what()));
                if (!exc.is_valid()) return;  // the call's own error stands
                nb::setattr(exc, "field", nb::str(e.field().c_str()));
                nb::setattr(exc, "rule", nb::str(e.rule().c_str()));
                PyErr_SetObject(type, exc.ptr());
            }
        },
        field_refused.ptr());
    nb::class_<simpler::ChipLaneConfig>(m, "ChipLaneConfig",
                                        "The Worker's simulated chips: the chip each child builds.")
        .def(nb::init<>())
        .def_rw("chip", &simpler::ChipLaneConfig::chip)
        .def(
            "__eq__", [](const simpler::ChipLaneConfig& a, const simpler::ChipLaneConfig& b) { return a == b; },
            nb::is_operator(), nb::sig(simpler::bindings::EQ_SIGNATURE));
    nb::class_<WorkerConfig>(m, "WorkerConfig",
                             "A Worker's options, each default the C++ initializer's. spin and task_timeout are "
                             "seconds; validate() raises ValueError naming the field and the rule.")
        .def(nb::init<>())
        .def_rw("level", &WorkerConfig::level, "3: a host (chips below); 4 to 8: a pod (Workers below).")
        .def_rw("num_chips", &WorkerConfig::num_chips)
        .def_rw("num_sub_workers", &WorkerConfig::num_sub_workers)
        .def_rw("num_workers", &WorkerConfig::num_workers, "Next-level Worker children (a level-4 Worker's L3s).")
        .def_rw("worker_callable_names", &WorkerConfig::worker_callable_names)
        .def_rw("blob_capacity", &WorkerConfig::blob_capacity, "Bytes of each mailbox's argument blob.")
        .def_prop_rw(
            "spin", [](const WorkerConfig& c) { return spin_seconds(c.spin); },
            [](WorkerConfig& c, std::optional<double> s) { c.spin = spin_policy_of(s); }, nb::arg("spin").none(),
            "Every waiter's spin budget in seconds: None adapts (up to 25 us), 0 never spins, 0 < s <= 1 spins "
            "s seconds.")
        .def_prop_rw(
            "task_timeout",
            [](const WorkerConfig& c) -> std::optional<double> {
                if (c.task_timeout.count() == 0) return std::nullopt;
                return seconds_of(c.task_timeout);
            },
            [](WorkerConfig& c, std::optional<double> s) {
                if (s && *s == 0)
                    throw std::invalid_argument("WorkerConfig.task_timeout: must be > 0 seconds (None: no limit)");
                // Deadlines are whole milliseconds: a shorter one would be silently a millisecond.
                if (s && *s > 0 && *s < 1e-3)
                    throw std::invalid_argument(
                        "WorkerConfig.task_timeout: must be at least 0.001 seconds, the finest deadline a task is "
                        "held to (got " +
                        std::to_string(*s) + ")");
                c.task_timeout =
                    s ? duration_of<std::chrono::milliseconds>("task_timeout", *s) : std::chrono::milliseconds{0};
            },
            nb::arg("task_timeout").none(),
            "Seconds a task may run (at least 0.001, rounded up to whole milliseconds); None: no limit. 0, less "
            "than 0.001, NaN and infinity are refused.")
        .def_prop_rw(
            "close_grace", [](const WorkerConfig& c) { return seconds_of(c.close_grace); },
            [](WorkerConfig& c, double s) { c.close_grace = duration_of<std::chrono::milliseconds>("close_grace", s); },
            "Seconds close() waits for a child before it kills it.")
        .def_rw("chip_lane", &WorkerConfig::chip_lane)
        .def_rw("device_memory_bytes", &WorkerConfig::device_memory_bytes, "Per chip, for alloc_child_tensor.")
        .def_rw("window_heap_bytes", &WorkerConfig::window_heap_bytes,
                "Per chip, the shared heap allocate_domain carves windows from.")
        .def_rw("record_edges", &WorkerConfig::record_edges)
        .def_rw("sub_callable_names", &WorkerConfig::sub_callable_names)
        .def_rw("trace", &WorkerConfig::trace)
        .def_rw("trace_capacity", &WorkerConfig::trace_capacity)
        .def_rw("edge_log_capacity", &WorkerConfig::edge_log_capacity,
                "Edges take_edge_log keeps between calls (record_edges); later ones are counted as dropped.")
        .def_rw("max_unfinished", &WorkerConfig::max_unfinished,
                "A submit waits while this many tasks of the Worker are unfinished (0: no limit).")
        .def_rw("chip_conditions", &WorkerConfig::chip_conditions,
                "A chip task whose producers run on other chips goes to its chip at once and waits there for them "
                "(its task_timeout counts from when they are collected); False (the default): it waits in this "
                "process until they finish.")
        .def_rw("path", &WorkerConfig::path,
                "The Worker's place in its tree ('L4/L3[0]'); its chips' device memory carries '<path>/chip i' as "
                "its owner path.")
        .def_rw("global_window_chips", &WorkerConfig::global_window_chips,
                "Level 4: the chips of each local next-level child; one window heap of window_heap_bytes per "
                "(child, chip) is mapped before the forks, for allocate_global_domain.")
        .def_rw("global_window_child_names", &WorkerConfig::global_window_child_names,
                "Level 4: the name of each child in global_window_chips ('L3[0]'), for messages.")
        .def_rw("global_window_devices", &WorkerConfig::global_window_devices,
                "Level 4: the DeviceKind each child in global_window_chips drives (empty: all simulated); "
                "allocate_global_domain refuses a member on a child whose chips drive a device.")
        .def(
            "inherit_global_windows",
            [](WorkerConfig& c, const Worker& parent, uint32_t first_slot) {
                c.global_windows = parent.global_windows();
                c.global_window_slot = first_slot;
            },
            "parent"_a, "first_slot"_a,
            "A level-3 child, in its process right after the fork: its chips reach the parent's global windows, "
            "chip i as member slot first_slot + i.")
        .def("validate", &WorkerConfig::validate, "ValueError naming the field and the rule it breaks.")
        .def(
            "__eq__", [](const WorkerConfig& a, const WorkerConfig& b) { return a.same_options(b); },
            "Every option equal (the C++ handlers and hooks are not options).", nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE));
}
