// Binds the chip's build-and-check surface: building a chip library from C++
// source (content-hash cached) and listing the chip orchestrations a set of
// libraries provides, so Worker.register() refuses an unknown name in the
// parent, before any chip child exists. The chips themselves run inside the
// Worker's chip children (engine/chip_lane.h); nothing here runs a kernel.
// Also binds the chip's options (ChipServiceConfig, RuntimeConfig,
// StagingMode, DeviceChoice), which a WorkerConfig holds: read/write fields,
// defaults and validate() from C++; and the devices a choice finds
// (find_devices, asked in a throwaway child: engine/device_probe.h). And the
// standard kernels' BLAS: which library a chip loads (chip/blas_library.h).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "simpler/chip/blas_library.h"
#include "simpler/chip/chip_service.h"
#include "simpler/chip/cuda_driver.h"
#include "simpler/chip/device.h"
#include "simpler/chip/device_catalog.h"
#include "simpler/chip/kernel_registry.h"
#include "simpler/chip/library_builder.h"
#include "simpler/chip/opencl_source.h"
#include "simpler/chip/private_cache.h"
#include "simpler/engine/device_probe.h"
#include "value_eq.h"

namespace nb = nanobind;
using namespace nb::literals;

void bind_chip(nb::module_& m) {
    using simpler::chip::ChipServiceConfig;
    using simpler::chip::RuntimeConfig;
    using simpler::chip::StagingMode;
    nb::enum_<StagingMode>(m, "StagingMode",
                           "How a chip reaches host arguments: STAGE copies them into device "
                           "memory and back; ZERO_COPY runs on them in place; CHECKED stages them between "
                           "guard bytes and fails a run that wrote outside the views it may write.")
        .value("STAGE", StagingMode::STAGE)
        .value("ZERO_COPY", StagingMode::ZERO_COPY)
        .value("CHECKED", StagingMode::CHECKED);
    using simpler::chip::DeviceChoice;
    using simpler::chip::DeviceFacts;
    using simpler::chip::DeviceKind;
    nb::enum_<DeviceKind>(m, "DeviceKind",
                          "What a chip drives: SIMULATED (the chip process itself), OPENCL (an OpenCL device "
                          "through the ICD loader, opened in the chip process) or CUDA (an NVIDIA GPU through the "
                          "CUDA driver: find_devices lists them, no chip runs on one yet).")
        .value("SIMULATED", DeviceKind::SIMULATED)
        .value("OPENCL", DeviceKind::OPENCL)
        .value("CUDA", DeviceKind::CUDA);
    nb::class_<DeviceChoice>(m, "DeviceChoice",
                             "Which device a chip drives: its kind, a part of the platform's name (any case; empty: "
                             "every platform) and which of the devices found (index modulo their count; a Worker "
                             "sets it to the chip's index).")
        .def(nb::init<>())
        .def_rw("kind", &DeviceChoice::kind)
        .def_rw("platform", &DeviceChoice::platform)
        .def_rw("index", &DeviceChoice::index)
        .def(
            "__eq__", [](const DeviceChoice& a, const DeviceChoice& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__repr__", [](const DeviceChoice& c) {
            return std::string("DeviceChoice(kind=") + simpler::chip::device_kind_name(c.kind) + ", platform='" +
                   c.platform + "', index=" + std::to_string(c.index) + ")";
        });
    nb::class_<DeviceFacts>(m, "DeviceFacts",
                            "One device: its kind, platform, name, the driver's version text, memory in bytes, "
                            "compute units, the kernels it runs at once (0: one per chip core thread), and "
                            "whether kernels may use host memory in place (zero-copy runs).")
        .def_ro("kind", &DeviceFacts::kind, "The DeviceKind: SIMULATED, OPENCL or CUDA.")
        .def_ro("platform", &DeviceFacts::platform, "Who provides the device ('simpler' for the simulated one).")
        .def_ro("name", &DeviceFacts::name, "The device's own name.")
        .def_ro("version", &DeviceFacts::version,
                "What the driver says of itself ('OpenCL 3.0 PoCL ...'; 'CUDA 13.0 driver, compute capability 9.0'; "
                "'' for the simulated device).")
        .def_ro("uuid", &DeviceFacts::uuid,
                "A CUDA device's UUID ('GPU-8f3a...', as nvidia-smi writes it; device_platform may name its "
                "beginning); '' for other kinds.")
        .def_ro("memory_bytes", &DeviceFacts::memory_bytes, "The chip's device heap, in bytes.")
        .def_ro("compute_units", &DeviceFacts::compute_units,
                "CL_DEVICE_MAX_COMPUTE_UNITS; a CUDA device's multiprocessors (SMs); a simulated chip's core "
                "threads.")
        .def_ro("concurrent_kernels", &DeviceFacts::concurrent_kernels,
                "Kernels the device runs at once, each over all its compute units (0: one per chip core thread).")
        .def_ro("unified_host_memory", &DeviceFacts::unified_host_memory,
                "Whether kernels may read and write host memory in place (zero-copy runs).")
        .def("__repr__", [](const DeviceFacts& f) {
            return "DeviceFacts(" + std::string(simpler::chip::device_kind_name(f.kind)) + ", platform='" + f.platform +
                   "', name='" + f.name + "', memory_bytes=" + std::to_string(f.memory_bytes) +
                   ", compute_units=" + std::to_string(f.compute_units) + ")";
        });
    m.def(
        "find_devices",
        [](DeviceKind kind, const std::string& platform) {
            DeviceChoice c;
            c.kind = kind;
            c.platform = platform;
            return simpler::probe_devices(c);
        },
        "kind"_a, "platform"_a = "", nb::call_guard<nb::gil_scoped_release>(),
        "The devices of `kind` whose platform's name contains `platform`, in the order chips take them, asked in a "
        "throwaway child process. RuntimeError naming what is missing (no OpenCL loader, platform or device).");
    m.def(
        "opencl_kernel_names", [](const std::string& source) { return simpler::chip::opencl_kernel_names(source); },
        "source"_a,
        "The names of the __kernel functions an OpenCL C source defines, in order (read without a compiler).");
    m.def(
        "chip_cache_dir",
        [](const std::string& sub) {
            return simpler::chip::private_cache_folder(simpler::chip::requested_cache_dir(), sub);
        },
        "sub"_a = "",
        "Where built chip code is cached (folder `sub` of it, made when absent): $SIMPLER_CACHE_DIR, else "
        "$XDG_CACHE_HOME/simpler, else ~/.cache/simpler, else $XDG_RUNTIME_DIR/simpler, else "
        "/tmp/simpler-cache-<uid>, each used only when this user alone may write it (else, said on stderr, "
        "/tmp/simpler-cache-<uid>). RuntimeError when no private folder can be made.");
    m.def(
        "read_private_file",
        [](const std::string& path) -> std::optional<nb::bytes> {
            const std::optional<std::string> bytes = simpler::chip::read_private_file(path);
            if (!bytes) return std::nullopt;
            return nb::bytes(bytes->data(), bytes->size());
        },
        "path"_a,
        "The bytes of the file at `path` when it is a regular file (a link is not followed) owned by this user "
        "that neither group nor others may write; else None.");
    m.def(
        "write_private_file",
        [](const std::string& path, const nb::bytes& data) {
            const std::string why = simpler::chip::write_private_file(
                path, std::string_view(static_cast<const char*>(data.data()), data.size()));
            if (!why.empty()) throw std::runtime_error(why);
        },
        "path"_a, "data"_a,
        "Writes `data` to `path` through a temporary made by mkstemp beside it (mode 0600), renamed over `path`: "
        "a link planted at that name is replaced, never followed. RuntimeError naming the step that failed.");
    m.def("set_blas_candidate", &simpler::chip::set_blas_candidate, "path"_a,
          "Registers the BLAS a chip loads unless SIMPLER_BLAS names one (chip/blas_library.h); the package "
          "registers the scipy-openblas32 wheel's at import.");
    m.def(
        "blas_library",
        []() -> std::tuple<std::optional<std::string>, std::optional<std::string>> {
            const simpler::chip::BlasLibrary* lib = simpler::chip::blas_library();
            const char* error = simpler::chip::blas_load_error();
            return {lib ? std::optional<std::string>(lib->path) : std::nullopt,
                    error ? std::optional<std::string>(error) : std::nullopt};
        },
        "The BLAS the standard kernels call in this process, loading it on the first call: (the library as "
        "loaded, or None for the portable loops; why the one named did not load, or None).");
    m.def("opencl_built", &simpler::chip::opencl_built,
          "True when this build drives OpenCL devices (the OpenCL headers were found when it was built).");
    m.def("cuda_built", &simpler::chip::cuda_built,
          "True when this build knows CUDA devices (the CUDA headers were found when it was built): "
          "find_devices(DeviceKind.CUDA) lists them; no chip runs on one yet.");
    m.def("set_nvrtc_candidate", &simpler::chip::set_nvrtc_candidate, "path"_a,
          "Registers the NVRTC a CUDA chip loads unless SIMPLER_NVRTC_LIBRARY names one (chip/cuda_driver.h); the "
          "package registers the nvidia-cuda-nvrtc wheel's at import when it is installed.");
    m.def("nvrtc_version", &simpler::chip::nvrtc_version,
          "NVRTC's (major, minor), loading it in this process (NVRTC keeps no device state). RuntimeError saying "
          "what to install when there is none, or that this build knows no CUDA.");
    nb::class_<RuntimeConfig>(m, "RuntimeConfig",
                              "A chip's task runtime: core_threads in [1, 256], ring_slots in "
                              "[2, 1048576].")
        .def(nb::init<>())
        .def_rw("core_threads", &RuntimeConfig::core_threads)
        .def_rw("ring_slots", &RuntimeConfig::ring_slots)
        .def(
            "__eq__", [](const RuntimeConfig& a, const RuntimeConfig& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__repr__", [](const RuntimeConfig& c) {
            return "RuntimeConfig(core_threads=" + std::to_string(c.core_threads) +
                   ", ring_slots=" + std::to_string(c.ring_slots) + ")";
        });
    nb::class_<ChipServiceConfig>(m, "ChipServiceConfig",
                                  "A chip's options: arena_bytes of device memory for staged copies and "
                                  "run temporaries, its runtime, its staging mode, the libraries it loads, the "
                                  "chip orchestration each callable id names, and the device it drives.")
        .def(nb::init<>())
        .def_rw("arena_bytes", &ChipServiceConfig::arena_bytes)
        .def_rw("runtime", &ChipServiceConfig::runtime)
        .def_rw("staging", &ChipServiceConfig::staging)
        .def_rw("libraries", &ChipServiceConfig::libraries)
        .def_rw("orchestrations", &ChipServiceConfig::orchestrations)
        .def_rw("device", &ChipServiceConfig::device)
        .def("validate", &ChipServiceConfig::validate, "ValueError naming the field and the rule it breaks.")
        .def(
            "__eq__", [](const ChipServiceConfig& a, const ChipServiceConfig& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE));
    m.def(
        "build_chip_library",
        [](const std::string& source_path, std::optional<std::vector<std::string>> flags, const std::string& compiler,
           const std::string& cache_dir) {
            simpler::chip::LibraryBuildConfig c;
            if (flags) c.flags = *flags;
            c.compiler = compiler;
            c.cache_dir = cache_dir;
            simpler::chip::LibraryBuild b = simpler::chip::build_library(source_path, c);
            return std::make_tuple(b.path, b.key, b.cache_hit);
        },
        "source_path"_a, "flags"_a = nb::none(), "compiler"_a = "", "cache_dir"_a = "",
        nb::call_guard<nb::gil_scoped_release>(),
        "Compiles one C++ file of chip kernels / orchestrations into a shared library, cached by content hash; "
        "returns (path, key, cache_hit). RuntimeError carries the compiler's diagnostics.");
    m.def(
        "chip_orchestration_names",
        [](const std::vector<std::string>& libraries) {
            simpler::chip::KernelRegistry r;
            simpler::chip::register_standard_library(r);
            for (const std::string& path : libraries) r.load_library(path);
            return r.orchestration_names();
        },
        "libraries"_a,
        "The chip orchestrations a chip offers with the standard set plus these libraries loaded in order "
        "(ValueError / RuntimeError as loading them on a chip would raise).");
}
