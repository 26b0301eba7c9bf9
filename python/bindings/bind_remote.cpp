// Bindings of the remote transport (simpler.tree.remote): loading MPI (through its
// shim, remote/mpi/mpi_library.h), MPI start and end, the
// relays of an L4's remote L3 children, and a remote L3's server loop. Built
// with an MPI only; without one, remote_available() is False and the rest is absent.
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "python_handlers.h"
#include "remote_children.h"

#ifdef SIMPLER_HAVE_MPI
#include "simpler/remote/mpi/mpi_library.h"
#include "simpler/remote/mpi/mpi_transport.h"
#include "simpler/remote/mpi/remote_relay.h"
#include "simpler/remote/mpi/remote_server.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;

#ifdef SIMPLER_HAVE_MPI
namespace {

using simpler::MpiTransport;

std::chrono::milliseconds millis(const char* what, double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0 || seconds > 1e6)
        throw std::invalid_argument(std::string(what) + ": a number of seconds > 0 and at most 1e6 (got " +
                                    std::to_string(seconds) + ")");
    return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000.0)));
}

std::string error_text(nb::python_error& e) {
    std::string out = e.what();
    e.discard_as_unraisable("simpler remote server");
    return out;
}

}  // namespace
#endif

void bind_remote(nb::module_& m) {
#ifdef SIMPLER_HAVE_MPI
    m.def("remote_available", [] { return true; }, "Whether this build has the MPI transport for remote Workers.");
    m.def("set_mpi_shim_candidate", &simpler::set_mpi_shim_candidate, "path"_a,
          "Registers the MPI shim (libsimpler_mpi.so) this process loads unless SIMPLER_MPI_SHIM names one; the "
          "package registers its installed copy at import.");
    m.def(
        "mpi_library",
        [] {
            (void)simpler::mpi_library();  // RuntimeError: what did not load, why, how to get MPI
            return simpler::mpi_library_description();
        },
        "Loads MPI in this process (once), without starting it: the shim and the MPI it runs, or RuntimeError "
        "naming the library that did not load, why, where the shim was looked for and how to get MPI.");
    m.def(
        "remote_start",
        [](double heartbeat_timeout) {
            MpiTransport& t = MpiTransport::process();
            t.start(millis("heartbeat_timeout", heartbeat_timeout));
            if (t.rank() == 0)
                for (int r = 1; r < t.size(); ++r) t.beat(r);  // every rank hears rank 0 from its start
            return std::make_pair(t.rank(), t.size());
        },
        "heartbeat_timeout"_a,
        "Starts MPI in this process once (MPI_THREAD_MULTIPLE) and the heartbeats; returns (rank, size). A "
        "watched rank silent for heartbeat_timeout seconds is lost.");
    m.def(
        "remote_finalize", [] { MpiTransport::process().finalize(); },
        "Stops the heartbeats and finalizes MPI (once; MPI cannot start again in this process).");
    m.def("remote_started", [] { return MpiTransport::process().started(); });
    m.def(
        "remote_payload_bytes",
        [](int rank) {
            const MpiTransport& t = MpiTransport::process();
            return std::make_pair(t.payload_bytes_sent(rank), t.payload_bytes_received(rank));
        },
        "rank"_a, "(sent, received): the tensor bytes this process moved to and from `rank`.");
    m.def(
        "remote_dismiss",
        [](int rank) {
            const std::vector<std::byte> frame = simpler::encode_text_frame(simpler::FrameType::SHUTDOWN, 0, 0, 0, {});
            nb::gil_scoped_release release;
            MpiTransport::process().send(rank, simpler::TAG_FRAME, frame.data(), frame.size());
        },
        "rank"_a, "Tells a rank that waits for its HELLO that it is not needed (it exits).");
    m.def(
        "remote_lost", [](int rank) { return MpiTransport::process().lost(rank); }, "rank"_a,
        "Why `rank` is lost; '' while it is not.");

    nb::class_<RemoteChildren>(m, "RemoteChildren",
                               "The remote L3 children of a Worker: (rank, path, hello) each, the last next-level "
                               "children of its EngineWorker, started by init() (HELLO, then READY).")
        .def(
            "__init__",
            [](RemoteChildren* self, std::vector<std::tuple<int, std::string, std::string>> children,
               uint32_t first_index, double start_timeout, double close_timeout) {
                std::vector<simpler::RemoteChild> specs;
                for (auto& [rank, path, hello] : children) specs.push_back({rank, std::move(path), std::move(hello)});
                const auto start = millis("start_timeout", start_timeout);
                const auto close = millis("close_timeout", close_timeout);
                new (self) RemoteChildren{[specs = std::move(specs), first_index, start, close](uint32_t index) {
                                              return simpler::make_remote_relay(specs.at(index - first_index),
                                                                                MpiTransport::process(), start, close);
                                          },
                                          static_cast<uint32_t>(children.size())};
            },
            "children"_a, "first_index"_a, "start_timeout"_a, "close_timeout"_a)
        .def_prop_ro("count", [](const RemoteChildren& r) { return r.count; });

    nb::class_<simpler::RemoteServer>(m, "RemoteServer", "A remote L3 Worker's end of its link to the L4 (rank 0).")
        .def("__init__",
             [](simpler::RemoteServer* self) {
                 MpiTransport& t = MpiTransport::process();
                 if (!t.started()) throw std::logic_error("RemoteServer: call remote_start() first");
                 new (self) simpler::RemoteServer(t, 0);
             })
        .def(
            "await_hello",
            [](simpler::RemoteServer& s) {
                nb::gil_scoped_release release;
                return s.await_hello();
            },
            "The L4's HELLO text ('' when it sent SHUTDOWN instead: this rank is not needed).")
        .def(
            "ready", [](simpler::RemoteServer& s, const std::string& why) { s.ready(why); }, "why"_a,
            "Answers the HELLO: '' started, else why not.")
        .def(
            "serve",
            [](simpler::RemoteServer& s, const nb::object& run, const nb::object& forget) {
                simpler::RemoteServeHandlers h;
                h.run = [run](uint64_t callable, std::span<const std::byte> blob,
                              const simpler::CallConfig& config) -> simpler::ipc::TaskOutcome {
                    nb::gil_scoped_acquire gil;
                    try {
                        return simpler::bindings::outcome_of(
                            run(callable, nb::bytes(blob.data(), blob.size()), nb::bytes(&config, sizeof config)));
                    } catch (nb::python_error& e) {
                        return {simpler::ipc::TaskError::TASK_FAILED, error_text(e)};
                    }
                };
                h.forget = [forget](std::span<const simpler::CanonicalIdentity> ids) {
                    nb::gil_scoped_acquire gil;
                    try {
                        forget(std::vector<simpler::CanonicalIdentity>(ids.begin(), ids.end()));
                    } catch (nb::python_error& e) {
                        (void)error_text(e);
                    }
                };
                nb::gil_scoped_release release;
                return s.serve(h);
            },
            "run"_a, "forget"_a,
            "Serves TASK frames with run(callable, blob, config) -> None | FailureReport | failure text, FORGET "
            "frames with "
            "forget(identities), until SHUTDOWN (0) or the L4 is lost (1, ended_why says why).")
        .def("bye", &simpler::RemoteServer::bye, "Closes every host copy and says goodbye to the L4.")
        .def_prop_ro("ended_why", &simpler::RemoteServer::ended_why)
        .def_prop_ro("shadow_count", &simpler::RemoteServer::shadow_count);
#else
    m.def("remote_available", [] { return false; }, "Whether this build has the MPI transport for remote Workers.");
#endif
}
