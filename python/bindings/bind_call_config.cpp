// Binds CallConfig (simpler/task_interface/call_config.h) as
// simpler._core.CallConfig: block_dim (u32; ValueError outside it) and
// zero_copy and checked (bools) read/write, to_bytes() / from_bytes() of the whole 64 bytes
// (the engine's write-mask half included; from_bytes refuses any other length
// with ValueError), == over all 64 bytes, and a repr.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "simpler/task_interface/call_config.h"
#include "value_eq.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::CallConfig;

namespace {

uint32_t block_dim_of(int64_t v) {
    if (v < 0 || v > int64_t{UINT32_MAX})
        throw std::invalid_argument("CallConfig.block_dim: must fit u32 (got " + std::to_string(v) + ")");
    return static_cast<uint32_t>(v);
}

}  // namespace

void bind_call_config(nb::module_& m) {
    nb::class_<CallConfig>(m, "CallConfig",
                           "The 64 bytes of call configuration a task member carries to its child (docs/abi.md): "
                           "block_dim, the most core threads a chip orchestration tiles for (0: all); zero_copy, run "
                           "on host arguments in place instead of staging them; checked, stage between guard bytes and "
                           "fail the task on a write outside the views it may write (wins over zero_copy).")
        .def(
            "__init__",
            [](CallConfig* self, int64_t block_dim, bool zero_copy, bool checked) {
                new (self) CallConfig{};
                self->block_dim = block_dim_of(block_dim);
                self->zero_copy = zero_copy ? 1 : 0;
                self->checked = checked ? 1 : 0;
            },
            "block_dim"_a = 0, "zero_copy"_a = false, "checked"_a = false)
        .def_prop_rw(
            "block_dim", [](const CallConfig& c) { return c.block_dim; },
            [](CallConfig& c, int64_t v) { c.block_dim = block_dim_of(v); })
        .def_prop_rw(
            "zero_copy", [](const CallConfig& c) { return c.zero_copy != 0; },
            [](CallConfig& c, bool v) { c.zero_copy = v ? 1 : 0; })
        .def_prop_rw(
            "checked", [](const CallConfig& c) { return c.checked != 0; },
            [](CallConfig& c, bool v) { c.checked = v ? 1 : 0; })
        .def("to_bytes", [](const CallConfig& c) { return nb::bytes(reinterpret_cast<const char*>(&c), sizeof c); })
        .def_static(
            "from_bytes",
            [](const nb::bytes& data) {
                if (data.size() != sizeof(CallConfig))
                    throw std::invalid_argument("CallConfig.from_bytes: must be " + std::to_string(sizeof(CallConfig)) +
                                                " bytes (got " + std::to_string(data.size()) + ")");
                return simpler::call_config_from_bytes(data.c_str());
            },
            "data"_a)
        .def(
            "__eq__", [](const CallConfig& a, const CallConfig& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__repr__", [](const CallConfig& c) {
            return "CallConfig(block_dim=" + std::to_string(c.block_dim) +
                   ", zero_copy=" + (c.zero_copy != 0 ? "True" : "False") +
                   ", checked=" + (c.checked != 0 ? "True" : "False") + ")";
        });
}
