// Binds the backing owners and the import side (src/simpler/backing/):
// BackingOwner (the owner of one host backing, with the buffer protocol over
// its bytes and export accounting, so close() raises BufferError while a view
// is alive), the ImportRegistry (map-once per identity) and MappedArg (the
// Python sub-worker's view of one argument, a read-only buffer for READ
// grants). Refusals raise ImportRefused (a ValueError) whose message starts
// with the ImportRefusal name; ExportsAliveError raises BufferError.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "checked_args.h"
#include "simpler/backing/adopted_owner.h"
#include "simpler/backing/backing_owner.h"
#include "simpler/backing/backing_retention.h"
#include "simpler/backing/fork_owner.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/backing/import_registry.h"
#include "simpler/backing/owner_path_table.h"
#include "simpler/backing/posix_shm_owner.h"
#include "simpler/backing/shm_tracker.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/task_args_wire.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::AccessMode;
using simpler::BackingOwner;
using simpler::BufferDescriptor;
using simpler::CanonicalIdentity;
using simpler::ChipStorageTaskArgs;
using simpler::DataType;
using simpler::ImportRegistry;
using simpler::MAX_TENSOR_DIMS;
using simpler::Tensor;

namespace {

// A MappedArg handed to Python: holds its registry alive and one export of the
// identity for as long as it lives.
struct BoundMappedArg {
    simpler::MappedArg arg;
    nb::object registry_ref;
    ImportRegistry* registry;

    BoundMappedArg(const simpler::MappedArg& a, nb::object ref, ImportRegistry* r)
        : arg(a), registry_ref(std::move(ref)), registry(r) {
        registry->add_export(arg.identity);
    }
    BoundMappedArg(const BoundMappedArg&) = delete;
    BoundMappedArg& operator=(const BoundMappedArg&) = delete;
    ~BoundMappedArg() { registry->drop_export(arg.identity); }
};

// map_args' and map_blob's answer: (list of MappedArg, list of scalars).
nb::tuple mapped_args_tuple(nb::handle self, ImportRegistry& r, std::span<const Tensor> tensors,
                            std::span<const uint64_t> scalars, const nb::bytes& write_mask) {
    const std::span<const uint8_t> mask(reinterpret_cast<const uint8_t*>(write_mask.c_str()), write_mask.size());
    const simpler::MappedArgs args = r.map_args(tensors, scalars, mask);
    nb::list out;
    for (const simpler::MappedArg& a : args.tensors)
        out.append(nb::cast(new BoundMappedArg(a, nb::borrow(self), &r), nb::rv_policy::take_ownership));
    return nb::make_tuple(out, nb::cast(args.scalars));
}

int owner_getbuffer(PyObject* self, Py_buffer* view, int flags) {
    BackingOwner* o = nb::inst_ptr<BackingOwner>(self);
    if (o->closed()) {
        view->obj = nullptr;
        PyErr_SetString(PyExc_BufferError, "the Buffer is closed");
        return -1;
    }
    if (PyBuffer_FillInfo(view, self, o->data(), static_cast<Py_ssize_t>(o->nbytes()), 0, flags) < 0) return -1;
    o->add_export();
    return 0;
}

void owner_releasebuffer(PyObject* self, Py_buffer*) { nb::inst_ptr<BackingOwner>(self)->drop_export(); }

PyType_Slot owner_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(owner_getbuffer)},
                             {Py_bf_releasebuffer, reinterpret_cast<void*>(owner_releasebuffer)},
                             {0, nullptr}};

int mapped_getbuffer(PyObject* self, Py_buffer* view, int flags) {
    BoundMappedArg* m = nb::inst_ptr<BoundMappedArg>(self);
    return PyBuffer_FillInfo(view, self, m->arg.data, static_cast<Py_ssize_t>(m->arg.view_nbytes),
                             m->arg.read_only ? 1 : 0, flags);
}

PyType_Slot mapped_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(mapped_getbuffer)}, {0, nullptr}};

nb::tuple dims(const uint32_t* v, uint32_t n) {
    nb::list out;
    for (uint32_t i = 0; i < n && i < MAX_TENSOR_DIMS; ++i) out.append(v[i]);
    return nb::tuple(out);
}

nb::dict stats_dict(const simpler::ImportStats& s) {
    nb::dict d;
    d["receipts"] = s.receipts;
    d["hits"] = s.hits;
    d["maps"] = s.maps;
    d["unmaps"] = s.unmaps;
    d["reexports"] = s.reexports;
    d["refusals"] = s.refusals;
    return d;
}

std::unique_ptr<BackingOwner> as_owner(std::unique_ptr<BackingOwner> o) { return o; }

}  // namespace

void bind_backing(nb::module_& m) {
    m.def(
        "intern_owner_path", [](const std::string& path) { return simpler::process_owner_paths().intern(path); },
        "path"_a,
        "The owner_worker_path_id of a Worker's tree path ('L4/L3[0]') in this process, interned on first use.");
    m.def("owner_path", &simpler::owner_path_of, "descriptor"_a,
          "Where a descriptor's buffer was made ('L4/L3[0]/chip 1') when this process made it, else '<path#N>'.");
    static nb::object import_refused =
        nb::steal(PyErr_NewExceptionWithDoc("simpler._core.ImportRefused",
                                            "An ImportRegistry refused a descriptor; the message starts with the "
                                            "ImportRefusal name.",
                                            PyExc_ValueError, nullptr));
    m.attr("ImportRefused") = import_refused;
    nb::register_exception_translator(
        [](const std::exception_ptr& p, void* payload) {
            try {
                std::rethrow_exception(p);
            } catch (const simpler::ImportRefused& e) {
                const std::string msg = std::string(simpler::import_refusal_name(e.refusal())) + ": " + e.what();
                PyErr_SetString(static_cast<PyObject*>(payload), msg.c_str());
            } catch (const simpler::ExportsAliveError& e) {
                PyErr_SetString(PyExc_BufferError, e.what());
            }
        },
        import_refused.ptr());

    nb::enum_<simpler::ImportRefusal>(m, "ImportRefusal", "Why an ImportRegistry refused a descriptor")
        .value("NONE", simpler::ImportRefusal::NONE)
        .value("INVALID_DESCRIPTOR", simpler::ImportRefusal::INVALID_DESCRIPTOR)
        .value("REGISTRY_CLOSED", simpler::ImportRefusal::REGISTRY_CLOSED)
        .value("DESCRIPTOR_MISMATCH", simpler::ImportRefusal::DESCRIPTOR_MISMATCH)
        .value("STALE_GENERATION", simpler::ImportRefusal::STALE_GENERATION)
        .value("SHM_MISSING", simpler::ImportRefusal::SHM_MISSING)
        .value("SHM_TOO_SMALL", simpler::ImportRefusal::SHM_TOO_SMALL)
        .value("NOT_A_FORK_REGION", simpler::ImportRefusal::NOT_A_FORK_REGION)
        .value("DEVICE_ON_HOST", simpler::ImportRefusal::DEVICE_ON_HOST)
        .value("DEVICE_WRONG_CHIP", simpler::ImportRefusal::DEVICE_WRONG_CHIP)
        .value("DEVICE_OWNER_UNKNOWN", simpler::ImportRefusal::DEVICE_OWNER_UNKNOWN)
        .value("REMOTE_UNSUPPORTED", simpler::ImportRefusal::REMOTE_UNSUPPORTED)
        .value("OS_ERROR", simpler::ImportRefusal::OS_ERROR)
        .value("WINDOW_OUTSIDE", simpler::ImportRefusal::WINDOW_OUTSIDE)
        .value("WINDOW_NOT_MEMBER", simpler::ImportRefusal::WINDOW_NOT_MEMBER);

    nb::class_<BackingOwner>(m, "BackingOwner",
                             "The owner of one host backing. Supports the buffer protocol over all of its bytes "
                             "(writable: the owner fills its own bytes); close() raises BufferError while any "
                             "export is alive.",
                             nb::type_slots(owner_slots))
        .def_prop_ro(
            "descriptor", [](const BackingOwner& o) { return o.descriptor(); }, "How any process finds this backing.")
        .def_prop_ro(
            "identity", [](const BackingOwner& o) { return o.identity(); }, "The backing's canonical identity.")
        .def_prop_ro("nbytes", &BackingOwner::nbytes, "The backing's size in bytes.")
        .def_prop_ro("backend", &BackingOwner::backend, "POSIX_SHM, FORK_SHM or FORK_COW.")
        .def_prop_ro("access", &BackingOwner::access, "What the backing grants its consumers.")
        .def_prop_ro("closed", &BackingOwner::closed, "Whether close() has run.")
        .def_prop_ro("free_pending", &BackingOwner::free_pending,
                     "Closed, and the free still waits for unfinished tasks that name the buffer.")
        .def_prop_ro("export_count", &BackingOwner::export_count,
                     "How many buffer-protocol views of the bytes are alive (close() waits for 0).")
        .def_prop_ro(
            "shm_name",
            [](const BackingOwner& o) -> std::optional<std::string> {
                if (const auto* p = dynamic_cast<const simpler::PosixShmOwner*>(&o)) return p->name();
                if (const auto* a = dynamic_cast<const simpler::AdoptedOwner*>(&o); a && !a->name().empty())
                    return a->name();
                return std::nullopt;
            },
            "The POSIX shm name (no leading '/'); None for other backends.")
        .def_prop_ro(
            "address", [](const BackingOwner& o) { return reinterpret_cast<uint64_t>(o.data()); },
            "Owner-side address of byte 0 (0 once closed).")
        .def("close", &BackingOwner::close,
             "Releases the backing: idempotent; BufferError while exports are alive (nothing changes, retry "
             "later). Only the creating process unlinks, and only once no unfinished task of this process names "
             "the buffer (at once when none does; free_pending says whether it still waits).")
        .def(
            "wait_freed",
            [](const BackingOwner& o) {
                const simpler::CanonicalIdentity id = o.identity();
                nb::gil_scoped_release unlocked;
                simpler::process_backing_retention().wait_freed(id);
            },
            "Blocks (the GIL released, asleep) until the free of a closed buffer has run; at once when none is "
            "pending.");

    m.def(
        "create_posix_shm",
        [](uint64_t nbytes, AccessMode access, uint32_t owner_worker_path_id) {
            return as_owner(simpler::PosixShmOwner::create(nbytes, access, nullptr, owner_worker_path_id));
        },
        "nbytes"_a, "access"_a = AccessMode::READWRITE, "owner_worker_path_id"_a = 0u,
        "A POSIX shm backing (O_CREAT|O_EXCL, mode 0600, named from its identity).");
    m.def(
        "shm_tracker_pid", [] { return static_cast<int>(simpler::process_shm_tracker().pid()); },
        "The pid of this process's /dev/shm tracker (it unlinks this process's POSIX shm objects when the process "
        "dies), or -1 before the first POSIX shm backing.");
    m.def(
        "create_fork_shm",
        [](uint64_t nbytes, AccessMode access, uint32_t owner_worker_path_id) {
            return as_owner(simpler::ForkOwner::create_shared(nbytes, access, nullptr, nullptr, owner_worker_path_id));
        },
        "nbytes"_a, "access"_a = AccessMode::READWRITE, "owner_worker_path_id"_a = 0u,
        "A pre-fork MAP_SHARED backing: children forked afterwards see and write it at the same address.");
    m.def(
        "create_fork_cow", [](uint64_t nbytes) { return as_owner(simpler::ForkOwner::create_cow(nbytes)); }, "nbytes"_a,
        "A pre-fork private (copy-on-write) backing; grants READ only.");
    m.def(
        "adopt_fork_memory",
        [](simpler::BackendKind backend, uint64_t address, uint64_t nbytes, AccessMode access,
           uint32_t owner_worker_path_id) {
            return as_owner(simpler::AdoptedOwner::adopt_fork(backend, reinterpret_cast<uint8_t*>(address), nbytes,
                                                              access, nullptr, nullptr, owner_worker_path_id));
        },
        "backend"_a, "address"_a, "nbytes"_a, "access"_a, "owner_worker_path_id"_a = 0u,
        "An owner over memory this process did not get from the runtime (FORK_SHM: a MAP_SHARED range; FORK_COW: "
        "a private range, READ only). Never unmaps it: the caller keeps the memory alive until the free has run. "
        "Use Worker.share, which checks what the memory is.");
    m.def(
        "adopt_posix_shm",
        [](const std::string& name, uint64_t object_address, uint64_t nbytes, AccessMode access,
           uint32_t owner_worker_path_id) {
            return as_owner(simpler::AdoptedOwner::adopt_posix_shm(name, reinterpret_cast<uint8_t*>(object_address),
                                                                   nbytes, access, nullptr, owner_worker_path_id));
        },
        "name"_a, "object_address"_a, "nbytes"_a, "access"_a, "owner_worker_path_id"_a = 0u,
        "An owner naming the user's POSIX shm object `name`, mapped in this process from its byte 0 at "
        "object_address. Never unmaps or unlinks it. Use Worker.share, which checks the mapping.");
    m.def(
        "check_identity_live",
        [](simpler::bindings::ObjArg<CanonicalIdentity> identity) {
            const CanonicalIdentity& id = simpler::bindings::obj_of(identity, "check_identity_live.identity");
            return simpler::describe_liveness(id, simpler::process_identity_minter().check_live(id));
        },
        "identity"_a, nb::sig("def check_identity_live(identity: CanonicalIdentity) -> str"),
        "Empty when this process's owner incarnation holds id live; otherwise why not.");

    nb::class_<BoundMappedArg>(m, "MappedArg",
                               "One mapped argument for a Python sub-worker: a buffer of exactly the view's bytes "
                               "(read-only when the grant is READ) plus the geometry.",
                               nb::type_slots(mapped_slots))
        .def_prop_ro(
            "address", [](const BoundMappedArg& a) { return reinterpret_cast<uint64_t>(a.arg.data); },
            "The address in this process of the view's first byte.")
        .def_prop_ro(
            "view_nbytes", [](const BoundMappedArg& a) { return a.arg.view_nbytes; },
            "The view's extent in bytes, from its first element to one past its last.")
        .def_prop_ro(
            "read_only", [](const BoundMappedArg& a) { return a.arg.read_only; },
            "Whether the bytes are mapped read-only (a READ grant, or a view the task does not write).")
        .def_prop_ro(
            "byte_offset", [](const BoundMappedArg& a) { return a.arg.byte_offset; },
            "The view's offset in its backing, in bytes.")
        .def_prop_ro(
            "backing_nbytes", [](const BoundMappedArg& a) { return a.arg.backing_nbytes; },
            "The size of the whole backing, in bytes.")
        .def_prop_ro(
            "ndims", [](const BoundMappedArg& a) { return a.arg.ndims; }, "The view's number of dimensions.")
        .def_prop_ro(
            "shapes", [](const BoundMappedArg& a) { return dims(a.arg.shapes, a.arg.ndims); }, "The view's shape.")
        .def_prop_ro(
            "strides", [](const BoundMappedArg& a) { return dims(a.arg.strides, a.arg.ndims); },
            "The view's strides, in elements.")
        .def_prop_ro(
            "dtype", [](const BoundMappedArg& a) { return static_cast<DataType>(a.arg.dtype); },
            "The view's element type.")
        .def_prop_ro(
            "identity", [](const BoundMappedArg& a) { return a.arg.identity; },
            "The canonical identity of the backing the view is of.")
        .def_prop_ro(
            "buffer", [](nb::handle self) { return nb::steal(PyMemoryView_FromObject(self.ptr())); },
            "A memoryview of exactly the view's bytes (for torch.frombuffer / numpy.frombuffer).")
        .def(
            "numpy",
            [](nb::handle self) { return nb::module_::import_("simpler.model.buffer").attr("mapped_array")(self); },
            "A zero-copy NumPy array of the view with its strides (simpler.model.buffer.mapped_array).");

    nb::class_<ImportRegistry>(m, "ImportRegistry",
                               "The consumer side: resolves descriptors (map-once per identity) for a host endpoint "
                               "or, with chip_index, for that chip.")
        .def(
            "__init__",
            [](ImportRegistry* self, std::optional<uint32_t> chip_index) {
                simpler::ImportRegistryConfig cfg;
                if (chip_index) cfg.endpoint = simpler::Endpoint::chip(*chip_index);
                new (self) ImportRegistry(std::move(cfg));
            },
            "chip_index"_a = nb::none())
        .def(
            "import_backing", [](ImportRegistry& r, const BufferDescriptor& d) { return r.import_backing(d).base; },
            "descriptor"_a, "The backing's base address in this process (mapping it on first receipt).")
        .def(
            "materialize_args",
            [](ImportRegistry& r, const std::vector<Tensor>& tensors, const std::vector<uint64_t>& scalars) {
                auto out = std::make_unique<ChipStorageTaskArgs>();
                r.materialize_args(tensors, scalars, *out);
                return out;
            },
            "tensors"_a, "scalars"_a = std::vector<uint64_t>{},
            "The chip's form of a task's arguments: each tensor resolved to its address in this process (mapping each "
            "backing on first receipt), then the scalars.")
        .def(
            "map_arg",
            [](nb::handle self, const Tensor& t, bool writable) {
                ImportRegistry& r = nb::cast<ImportRegistry&>(self);
                const simpler::MappedArg a = r.map_arg(t, writable);
                return nb::cast(new BoundMappedArg(a, nb::borrow(self), &r), nb::rv_policy::take_ownership);
            },
            "tensor"_a, "writable"_a = true,
            nb::sig("def map_arg(self, tensor: Tensor, writable: bool = True) -> MappedArg"),
            "The view's bytes in this process; read-only (and mapped so) for a READ grant or writable=False.")
        .def(
            "map_args",
            [](nb::handle self, const std::vector<Tensor>& tensors, const std::vector<uint64_t>& scalars,
               const nb::bytes& write_mask) {
                return mapped_args_tuple(self, nb::cast<ImportRegistry&>(self), tensors, scalars, write_mask);
            },
            "tensors"_a, "scalars"_a = std::vector<uint64_t>{}, "write_mask"_a = nb::bytes(""),
            "(list of MappedArg, list of scalars): the MappedArgs form. write_mask: CallConfig's (bit i: tensor i "
            "is written; the others are mapped read-only); empty: every tensor as its grant allows.")
        .def(
            "map_blob",
            [](nb::handle self, const nb::bytes& blob, const nb::bytes& write_mask) {
                const simpler::DecodedTaskArgs d = simpler::read_blob(blob.c_str(), blob.size());
                return mapped_args_tuple(self, nb::cast<ImportRegistry&>(self), d.tensors, d.scalars, write_mask);
            },
            "blob"_a, "write_mask"_a = nb::bytes(""), "map_args of read_blob(blob), the tensors staying in C++.")
        .def("reexport", nb::overload_cast<const Tensor&>(&ImportRegistry::reexport), "tensor"_a,
             "Forwarding: the same Tensor (source identity kept), validated; maps nothing.")
        .def("unregister", &ImportRegistry::unregister, "identity"_a,
             "Drops the cache entry of `identity` and unmaps it; that generation is refused (STALE_GENERATION) from "
             "then on. Refused while a MappedArg of it is alive.")
        .def("forget", &ImportRegistry::forget, "identity"_a,
             "The owner freed the backing: drops the entry and refuses its generation from now on; a mapping a "
             "MappedArg still refers to stays mapped until the last one goes. False when it was not imported.")
        .def("identities", &ImportRegistry::identities, "The identities the cache holds now.")
        .def_prop_ro("kept_for_exports", &ImportRegistry::kept_for_exports,
                     "Forgotten mappings kept alive by MappedArgs that still refer to them.")
        .def("close", &ImportRegistry::close,
             "Unmaps every cached backing and refuses every later import (REGISTRY_CLOSED).")
        .def_prop_ro("closed", &ImportRegistry::closed, "Whether close() has run.")
        .def("__len__", &ImportRegistry::size)
        .def_prop_ro(
            "stats", [](const ImportRegistry& r) { return stats_dict(r.stats()); },
            "Counts since creation: receipts, hits (already mapped), maps, unmaps, reexports, refusals.");
}
