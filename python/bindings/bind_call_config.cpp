// Binds CallConfig (simpler/task_interface/call_config.h) as
// simpler._core.CallConfig: block_dim (u32; ValueError outside it) and
// zero_copy and checked (bools) read/write, to_bytes() / from_bytes() of the whole 64 bytes
// (the engine's masks included; from_bytes refuses any other length
// with ValueError), == over all 64 bytes, and a repr.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "checked_args.h"
#include "simpler/task_interface/call_config.h"
#include "value_eq.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::CallConfig;
using simpler::bindings::bool_of;
using simpler::bindings::BoolArg;
using simpler::bindings::IntArg;

namespace {

uint32_t block_dim_of(IntArg v) {
    return static_cast<uint32_t>(
        simpler::bindings::uint_of(v.h, "CallConfig.block_dim", -1, UINT32_MAX, "must fit u32"));
}

}  // namespace

void bind_call_config(nb::module_& m) {
    nb::class_<CallConfig>(
        m, "CallConfig",
        "The 64 bytes of call configuration a task member carries to its child (docs/internals/abi.md): "
        "block_dim, the most core threads a chip orchestration tiles for (0: all); zero_copy, run "
        "on host arguments in place instead of staging them; checked, stage between guard bytes and "
        "fail the task on a write outside the views it may write (wins over zero_copy).")
        .def(
            "__init__",
            [](CallConfig* self, IntArg block_dim, BoolArg zero_copy, BoolArg checked) {
                new (self) CallConfig{};
                self->block_dim = block_dim_of(block_dim);
                self->zero_copy = bool_of(zero_copy, "CallConfig.zero_copy") ? 1 : 0;
                self->checked = bool_of(checked, "CallConfig.checked") ? 1 : 0;
            },
            "block_dim"_a = 0, "zero_copy"_a = false, "checked"_a = false,
            nb::sig("def __init__(self, block_dim: int = 0, zero_copy: bool = False, checked: bool = False) -> None"))
        .def_prop_rw(
            "block_dim", [](const CallConfig& c) { return c.block_dim; },
            [](CallConfig& c, IntArg v) { c.block_dim = block_dim_of(v); },
            nb::for_setter(nb::sig("def block_dim(self, arg: int, /) -> None")),
            "The most core threads the chip orchestration tiles for (0: all of them).")
        .def_prop_rw(
            "zero_copy", [](const CallConfig& c) { return c.zero_copy != 0; },
            [](CallConfig& c, BoolArg v) { c.zero_copy = bool_of(v, "CallConfig.zero_copy") ? 1 : 0; },
            nb::for_setter(nb::sig("def zero_copy(self, arg: bool, /) -> None")),
            "Run the kernels on the host bytes in place instead of staging them to device memory.")
        .def_prop_rw(
            "checked", [](const CallConfig& c) { return c.checked != 0; },
            [](CallConfig& c, BoolArg v) { c.checked = bool_of(v, "CallConfig.checked") ? 1 : 0; },
            nb::for_setter(nb::sig("def checked(self, arg: bool, /) -> None")),
            "Stage the task between guard bytes and fail it on a write outside the views it may write (wins over "
            "zero_copy).")
        .def(
            "to_bytes", [](const CallConfig& c) { return nb::bytes(reinterpret_cast<const char*>(&c), sizeof c); },
            "The 64 bytes as the task carries them (docs/internals/abi.md).")
        .def(
            "writes", [](const CallConfig& c, size_t index) { return simpler::writes_tensor(c, index); }, "index"_a,
            "Whether the engine's write mask says the task writes tensor `index` (False past the mask's 256 bits).")
        .def(
            "writes_only", [](const CallConfig& c, size_t index) { return simpler::writes_only_tensor(c, index); },
            "index"_a,
            "Whether the task writes tensor `index` without reading it (OUTPUT / OUTPUT_EXISTING: the engine's "
            "write-only mask; False past its 192 bits).")
        .def(
            "no_dep", [](const CallConfig& c, size_t index) { return simpler::no_dep_tensor(c, index); }, "index"_a,
            "Whether tensor `index`'s tag was NO_DEP (its write-only bit without its write bit; False past the "
            "write-only mask's 192 bits).")
        .def_static(
            "from_bytes",
            [](const nb::bytes& data) {
                if (data.size() != sizeof(CallConfig))
                    throw std::invalid_argument("CallConfig.from_bytes: must be " + std::to_string(sizeof(CallConfig)) +
                                                " bytes (got " + std::to_string(data.size()) + ")");
                return simpler::call_config_from_bytes(data.c_str());
            },
            "data"_a, "The CallConfig whose 64 bytes to_bytes() wrote; ValueError for data of another length.")
        .def(
            "__eq__", [](const CallConfig& a, const CallConfig& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__repr__", [](const CallConfig& c) {
            return "CallConfig(block_dim=" + std::to_string(c.block_dim) +
                   ", zero_copy=" + (c.zero_copy != 0 ? "True" : "False") +
                   ", checked=" + (c.checked != 0 ? "True" : "False") + ")";
        });
}
