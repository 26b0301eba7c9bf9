// EngineWorker's device memory and communication domains (engine_binding_parts.h):
// DEVICE_MALLOC blocks on one chip, local and global domains (their window
// buffers as VMM_WINDOW descriptors), and the arena and window statistics.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine_binding_parts.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::AccessMode;
using simpler::Worker;

namespace simpler::bindings {
namespace {

// The window buffer specs of an allocate_domain call: (name, nbytes) pairs.
std::vector<simpler::WindowBufferSpec> window_specs(const std::vector<std::pair<std::string, uint64_t>>& buffers) {
    std::vector<simpler::WindowBufferSpec> specs;
    specs.reserve(buffers.size());
    for (const auto& [name, size] : buffers) specs.push_back({name, size});
    return specs;
}

// What allocate_domain / allocate_global_domain hand Python: {'id', 'bases' (by
// rank), 'offsets' (by buffer), 'buffers' (by rank, by buffer: descriptors)}.
nb::dict domain_dict(const simpler::WindowDomain& d) {
    nb::list per_rank;
    for (const std::vector<simpler::DeviceBacking>& mine : d.buffers) {
        nb::list descs;
        for (const simpler::DeviceBacking& b : mine) descs.append(b.descriptor);
        per_rank.append(descs);
    }
    nb::dict out;
    out["id"] = d.id;
    out["bases"] = d.bases;
    out["offsets"] = d.buffer_offsets;
    out["buffers"] = per_rank;
    return out;
}

// A domain allocate() made with the GIL released (it may wait for a released
// domain of that name to free its windows), as domain_dict() hands it Python.
template <typename Allocate>
nb::dict allocated(Allocate&& allocate) {
    simpler::WindowDomain d;
    {
        nb::gil_scoped_release release;
        d = std::forward<Allocate>(allocate)();
    }
    return domain_dict(d);
}

}  // namespace

void bind_engine_memory(nb::class_<Worker>& cls) {
    cls.def(
           "alloc_device",
           [](Worker& w, uint32_t chip, uint64_t nbytes, AccessMode access) {
               return w.alloc_device(chip, nbytes, access).descriptor;
           },
           "chip"_a, "nbytes"_a, "access"_a = AccessMode::READWRITE,
           "DEVICE_MALLOC memory on one chip: its descriptor (the body is the device pointer).")
        .def("release_device", &Worker::release_device, "identity"_a,
             "Refuses the block at submit from now on; frees it once every earlier task has finished.")
        .def("device_owner", &Worker::device_owner, "identity"_a,
             "The chip a device block or window buffer lives on, or None.")
        .def(
            "allocate_domain",
            [](Worker& w, const std::string& name, const std::vector<uint32_t>& workers, uint64_t window_size,
               const std::vector<std::pair<std::string, uint64_t>>& buffers) {
                return allocated([&] { return w.allocate_domain(name, workers, window_size, window_specs(buffers)); });
            },
            "name"_a, "workers"_a, "window_size"_a, "buffers"_a,
            "A communication domain: {'id', 'bases' (by rank), 'offsets' (by buffer), 'buffers' (by rank, by buffer: "
            "VMM_WINDOW descriptors)}. ValueError for a bad request, RuntimeError when the window heaps have no room; "
            "a refusal allocates nothing. A name whose released domain still holds its windows waits until they are "
            "freed (the tasks submitted before the release have finished).")
        .def(
            "allocate_global_domain",
            [](Worker& w, const std::string& name, const std::vector<uint32_t>& slots, uint64_t window_size,
               const std::vector<std::pair<std::string, uint64_t>>& buffers) {
                return allocated(
                    [&] { return w.allocate_global_domain(name, slots, window_size, window_specs(buffers)); });
            },
            "name"_a, "slots"_a, "window_size"_a, "buffers"_a,
            "As allocate_domain, over member slots of the level-4 Worker's global windows.")
        .def("release_global_domain", &Worker::release_global_domain, "id"_a, "As release_domain, for a global domain.")
        .def(
            "global_window_stats",
            [](const Worker& w) {
                nb::dict d;
                const std::shared_ptr<simpler::WindowMemory> g = w.global_windows();
                const simpler::WindowStats ws = g ? g->total_stats() : simpler::WindowStats{};
                d["window_capacity_bytes"] = ws.capacity_bytes;
                d["window_bytes_in_use"] = ws.bytes_in_use;
                d["live_windows"] = ws.live_windows;
                d["live_domains"] = g ? g->live_domains() : 0;
                return d;
            },
            "The global windows (level 4): capacity and bytes in use over every member slot, live windows and "
            "domains.")
        .def("release_domain", &Worker::release_domain, "id"_a,
             "Refuses the domain's buffers at submit from now on; frees its windows once every earlier task has "
             "finished.")
        .def(
            "device_stats",
            [](Worker& w, uint32_t chip) {
                const simpler::chip::ArenaStats s = w.device_memory().stats(chip);
                nb::dict d;
                d["capacity_bytes"] = s.capacity_bytes;
                d["bytes_in_use"] = s.bytes_in_use;
                d["live_allocations"] = s.live_allocations;
                d["largest_free_block"] = s.largest_free_block;
                const simpler::WindowStats ws = w.window_memory().stats(chip);
                d["window_capacity_bytes"] = ws.capacity_bytes;
                d["window_bytes_in_use"] = ws.bytes_in_use;
                d["live_windows"] = ws.live_windows;
                return d;
            },
            "chip"_a);
}

}  // namespace simpler::bindings
