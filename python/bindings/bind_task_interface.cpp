// Binds the wire and chip argument types (src/simpler/task_interface/) directly
// (the argument lists that carry them: bind_task_args.cpp):
// the same names as in C++, construction field by field (zero-filling, then the
// C++ validator), read-only fields, __eq__/__hash__ from the C++ operators. No
// binding turns bytes into a BufferDescriptor, Tensor or ChipTensor; the only
// bytes-to-values path is read_blob, which validates every tensor.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "checked_args.h"
#include "simpler/backing/owner_path_table.h"
#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/tensor.h"
#include "simpler/task_interface/tensor_arg_type.h"
#include "simpler/task_interface/view_geometry.h"
#include "value_eq.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::access_mode_name;
using simpler::AccessMode;
using simpler::address_space_name;
using simpler::AddressSpace;
using simpler::BACKEND_ADDRESS_BODY_BYTES;
using simpler::backend_kind_name;
using simpler::BackendKind;
using simpler::BufferDescriptor;
using simpler::CanonicalIdentity;
using simpler::ChipTensor;
using simpler::data_type_name;
using simpler::DataType;
using simpler::descriptor_address;
using simpler::element_size;
using simpler::make_address_descriptor;
using simpler::make_buffer_descriptor;
using simpler::make_tensor;
using simpler::MAX_TENSOR_DIMS;
using simpler::OWNER_INSTANCE_ID_BYTES;
using simpler::row_major_strides;
using simpler::Tensor;
using simpler::TensorArgType;
using simpler::throw_if_invalid;
using simpler::validate_chip_tensor;
using simpler::bindings::dims_of;
using simpler::bindings::DimsArg;
using simpler::bindings::enum_of;
using simpler::bindings::EnumArg;
using simpler::bindings::IntArg;
using simpler::bindings::obj_of;
using simpler::bindings::ObjArg;
using simpler::bindings::u32_of;
using simpler::bindings::u64_of;

namespace {

nb::tuple dims_tuple(const uint32_t* v, uint32_t n) {
    nb::list out;
    for (uint32_t i = 0; i < n && i < MAX_TENSOR_DIMS; ++i) out.append(v[i]);
    return nb::tuple(out);
}

std::string hex(const uint8_t* p, size_t n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

CanonicalIdentity make_identity(const nb::bytes& owner, uint64_t buffer_id, uint32_t generation) {
    if (owner.size() != OWNER_INSTANCE_ID_BYTES)
        throw std::invalid_argument("CanonicalIdentity.owner_instance_id: must be exactly 8 bytes (got " +
                                    std::to_string(owner.size()) + ")");
    if (buffer_id == 0) throw std::invalid_argument("CanonicalIdentity.buffer_id: must be >= 1 (0 is reserved)");
    if (generation == 0) throw std::invalid_argument("CanonicalIdentity.generation: must be non-zero");
    CanonicalIdentity id{};
    std::memcpy(id.owner_instance_id, owner.c_str(), OWNER_INSTANCE_ID_BYTES);
    id.buffer_id = buffer_id;
    id.generation = generation;
    return id;
}

std::string identity_repr(const CanonicalIdentity& id) { return "CanonicalIdentity(" + id.to_string() + ")"; }

std::string body_repr(const BufferDescriptor& d) {
    if (d.backend_kind == static_cast<uint8_t>(BackendKind::POSIX_SHM))
        return "name='" + std::string(reinterpret_cast<const char*>(d.body), d.body_len) + "'";
    if (d.body_len == BACKEND_ADDRESS_BODY_BYTES) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "base=0x%llx", static_cast<unsigned long long>(descriptor_address(d)));
        return buf;
    }
    return "body=" + hex(d.body, d.body_len);
}

std::string descriptor_repr(const BufferDescriptor& d) {
    return std::string("BufferDescriptor(") + backend_kind_name(d.backend_kind) + ", " + d.identity.to_string() + ", " +
           address_space_name(d.address_space) + ", " + access_mode_name(d.access) +
           ", nbytes=" + std::to_string(d.nbytes) + ", " + body_repr(d) + ", owner " + simpler::owner_path_of(d) + ")";
}

std::string dims_repr(const uint32_t* v, uint32_t n) {
    std::string s = "(";
    for (uint32_t i = 0; i < n && i < MAX_TENSOR_DIMS; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (n == 1 ? ",)" : ")");
}

uint64_t tensor_hash(const Tensor& t) {
    uint64_t h = t.buffer.identity.hash() ^ (t.byte_offset * 0x9e3779b97f4a7c15ULL) ^ (uint64_t{t.dtype} << 56);
    for (uint32_t i = 0; i < MAX_TENSOR_DIMS; ++i) h = (h ^ t.shapes[i]) * 0x100000001b3ULL ^ t.strides[i];
    return h;
}

}  // namespace

void bind_task_interface(nb::module_& m) {
    nb::enum_<DataType>(m, "DataType", "Element type of a view (values frozen by the ABI)")
        .value("FLOAT32", DataType::FLOAT32)
        .value("FLOAT16", DataType::FLOAT16)
        .value("INT32", DataType::INT32)
        .value("INT16", DataType::INT16)
        .value("INT8", DataType::INT8)
        .value("UINT8", DataType::UINT8)
        .value("BFLOAT16", DataType::BFLOAT16)
        .value("INT64", DataType::INT64)
        .value("UINT64", DataType::UINT64)
        .value("UINT16", DataType::UINT16)
        .value("UINT32", DataType::UINT32)
        .value("BOOL", DataType::BOOL)
        .value("FP8E4M3FN", DataType::FP8E4M3FN)
        .value("FP8E8M0", DataType::FP8E8M0)
        .value("FP4E2M1", DataType::FP4E2M1)
        .value("FLOAT64", DataType::FLOAT64);
    m.def(
        "element_size", [](EnumArg<DataType> t) { return element_size(enum_of(t, "element_size.dtype")); }, "dtype"_a,
        nb::sig("def element_size(dtype: DataType) -> int"), "Element size in bytes of a DataType.");

    nb::enum_<AddressSpace>(m, "AddressSpace",
                            "Where a backing's bytes live: HOST memory, or DEVICE memory of one chip.")
        .value("HOST", AddressSpace::HOST)
        .value("DEVICE", AddressSpace::DEVICE);
    nb::enum_<AccessMode>(m, "AccessMode", "What a backing grants")
        .value("READ", AccessMode::READ)
        .value("WRITE", AccessMode::WRITE)
        .value("READWRITE", AccessMode::READWRITE);
    nb::enum_<BackendKind>(m, "BackendKind",
                           "How a backing's bytes are found (values frozen by the ABI): POSIX_SHM, FORK_SHM, FORK_COW, "
                           "VMM_WINDOW, REMOTE_SIDECAR, DEVICE_MALLOC.")
        .value("FORK_SHM", BackendKind::FORK_SHM)
        .value("POSIX_SHM", BackendKind::POSIX_SHM)
        .value("VMM_WINDOW", BackendKind::VMM_WINDOW)
        .value("REMOTE_SIDECAR", BackendKind::REMOTE_SIDECAR)
        .value("DEVICE_MALLOC", BackendKind::DEVICE_MALLOC)
        .value("FORK_COW", BackendKind::FORK_COW);
    nb::enum_<TensorArgType>(m, "TensorArgType", "Per-argument tag driving dependency inference")
        .value("INPUT", TensorArgType::INPUT)
        .value("OUTPUT", TensorArgType::OUTPUT)
        .value("INOUT", TensorArgType::INOUT)
        .value("OUTPUT_EXISTING", TensorArgType::OUTPUT_EXISTING)
        .value("NO_DEP", TensorArgType::NO_DEP);

    nb::class_<CanonicalIdentity>(m, "CanonicalIdentity",
                                  "The 32-byte identity of one backing; == and hash read owner_instance_id, "
                                  "buffer_id and generation only.")
        .def(
            "__init__",
            [](CanonicalIdentity* self, const nb::bytes& owner, IntArg buffer_id, IntArg generation) {
                new (self) CanonicalIdentity(make_identity(owner, u64_of(buffer_id, "CanonicalIdentity.buffer_id"),
                                                           u32_of(generation, "CanonicalIdentity.generation")));
            },
            "owner_instance_id"_a, "buffer_id"_a, "generation"_a,
            nb::sig("def __init__(self, owner_instance_id: bytes, buffer_id: int, generation: int) -> None"))
        .def_prop_ro(
            "owner_instance_id",
            [](const CanonicalIdentity& id) {
                return nb::bytes(reinterpret_cast<const char*>(id.owner_instance_id), OWNER_INSTANCE_ID_BYTES);
            },
            "The owner nonce: 8 bytes naming the process instance that made the backing.")
        .def_prop_ro(
            "buffer_id", [](const CanonicalIdentity& id) { return id.buffer_id; },
            "The buffer's number within its owner (>= 1).")
        .def_prop_ro(
            "generation", [](const CanonicalIdentity& id) { return id.generation; },
            "The buffer's generation (non-zero): a freed and re-made buffer is a new one.")
        .def(
            "__eq__", [](const CanonicalIdentity& a, const CanonicalIdentity& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__hash__", [](const CanonicalIdentity& id) { return static_cast<Py_hash_t>(id.hash()); })
        .def("__repr__", &identity_repr)
        .def("__str__", &CanonicalIdentity::to_string);

    nb::class_<BufferDescriptor>(m, "BufferDescriptor",
                                 "How to find a backing: identity, backend and its body, size and grant.")
        .def(
            "__init__",
            [](BufferDescriptor* self, ObjArg<CanonicalIdentity> identity_arg, EnumArg<BackendKind> backend_arg,
               EnumArg<AccessMode> access_arg, IntArg nbytes_arg, const nb::bytes& body,
               std::optional<EnumArg<AddressSpace>> address_space, IntArg path_id_arg) {
                const CanonicalIdentity& identity = obj_of(identity_arg, "BufferDescriptor.identity");
                const BackendKind backend = enum_of(backend_arg, "BufferDescriptor.backend_kind");
                const AccessMode access = enum_of(access_arg, "BufferDescriptor.access");
                const uint64_t nbytes = u64_of(nbytes_arg, "BufferDescriptor.nbytes");
                const uint32_t owner_worker_path_id = u32_of(path_id_arg, "BufferDescriptor.owner_worker_path_id");
                const std::optional<AddressSpace> chosen =
                    address_space ? std::optional(enum_of(*address_space, "BufferDescriptor.address_space"))
                                  : std::nullopt;
                AddressSpace space = chosen.value_or(
                    backend == BackendKind::VMM_WINDOW || backend == BackendKind::DEVICE_MALLOC ? AddressSpace::DEVICE
                                                                                                : AddressSpace::HOST);
                new (self) BufferDescriptor(make_buffer_descriptor(
                    identity, backend, space, access, nbytes,
                    {reinterpret_cast<const uint8_t*>(body.c_str()), body.size()}, owner_worker_path_id));
            },
            "identity"_a, "backend_kind"_a, "access"_a, "nbytes"_a, "body"_a = nb::bytes(""),
            "address_space"_a = nb::none(), "owner_worker_path_id"_a = 0u,
            nb::sig("def __init__(self, identity: CanonicalIdentity, backend_kind: BackendKind, access: AccessMode, "
                    "nbytes: int, body: bytes = b'', address_space: AddressSpace | None = None, "
                    "owner_worker_path_id: int = 0) -> None"),
            "Fills the fields, zeroes the rest and validates (ValueError names the field and rule). "
            "address_space defaults to the backend's (DEVICE for VMM_WINDOW / DEVICE_MALLOC).")
        .def_static(
            "for_address",
            [](const CanonicalIdentity& identity, BackendKind backend, AccessMode access, uint64_t nbytes,
               uint64_t base,
               uint32_t path_id) { return make_address_descriptor(identity, backend, access, nbytes, base, path_id); },
            "identity"_a, "backend_kind"_a, "access"_a, "nbytes"_a, "base"_a, "owner_worker_path_id"_a = 0u,
            "A descriptor for an address-bearing backend (FORK_SHM, FORK_COW, VMM_WINDOW, DEVICE_MALLOC): "
            "base stored as 8 bytes little-endian.")
        .def_prop_ro(
            "magic", [](const BufferDescriptor& d) { return d.magic; },
            "The descriptor's magic word (docs/internals/abi.md): a decoder refuses any other.")
        .def_prop_ro(
            "address_space", [](const BufferDescriptor& d) { return static_cast<AddressSpace>(d.address_space); },
            "HOST or DEVICE: where the bytes live.")
        .def_prop_ro(
            "access", [](const BufferDescriptor& d) { return static_cast<AccessMode>(d.access); },
            "What the backing grants: READ, WRITE or READWRITE.")
        .def_prop_ro(
            "backend_kind", [](const BufferDescriptor& d) { return static_cast<BackendKind>(d.backend_kind); },
            "How to find the bytes: the backend the body is of.")
        .def_prop_ro(
            "identity", [](const BufferDescriptor& d) { return d.identity; }, "The backing's canonical identity.")
        .def_prop_ro(
            "nbytes", [](const BufferDescriptor& d) { return d.nbytes; },
            "The backing's size in bytes: no view reaches past it.")
        .def_prop_ro(
            "owner_worker_path_id", [](const BufferDescriptor& d) { return d.owner_worker_path_id; },
            "The interned path of the Worker that owns the backing (0: none).")
        .def_prop_ro(
            "body_len", [](const BufferDescriptor& d) { return d.body_len; }, "How many bytes of the body are used.")
        .def_prop_ro(
            "body",
            [](const BufferDescriptor& d) { return nb::bytes(reinterpret_cast<const char*>(d.body), d.body_len); },
            "The backend's body: a POSIX shm name, or an 8-byte base address.")
        .def_prop_ro(
            "address",
            [](const BufferDescriptor& d) -> std::optional<uint64_t> {
                if (d.body_len != BACKEND_ADDRESS_BODY_BYTES ||
                    d.backend_kind == static_cast<uint8_t>(BackendKind::POSIX_SHM))
                    return std::nullopt;
                return descriptor_address(d);
            },
            "The base of an address-bearing backend; None for POSIX_SHM and REMOTE_SIDECAR.")
        .def(
            "__eq__", [](const BufferDescriptor& a, const BufferDescriptor& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__hash__", [](const BufferDescriptor& d) { return static_cast<Py_hash_t>(d.identity.hash()); })
        .def("__repr__", &descriptor_repr);

    nb::class_<Tensor>(m, "Tensor",
                       "The L3+ task argument: a buffer descriptor plus a strided view; carries no address.")
        .def(
            "__init__",
            [](Tensor* self, ObjArg<BufferDescriptor> buffer, DimsArg shapes, EnumArg<DataType> dtype,
               std::optional<DimsArg> strides, IntArg byte_offset) {
                const BufferDescriptor& b = obj_of(buffer, "Tensor.buffer");
                std::vector<uint32_t> s = dims_of(shapes, "Tensor.shapes");
                const DataType t = enum_of(dtype, "Tensor.dtype");
                std::vector<uint32_t> st = strides ? dims_of(*strides, "Tensor.strides") : std::vector<uint32_t>{};
                new (self) Tensor(make_tensor(b, s, t, st, u64_of(byte_offset, "Tensor.byte_offset")));
            },
            "buffer"_a, "shapes"_a, "dtype"_a, "strides"_a = nb::none(), "byte_offset"_a = 0u,
            nb::sig(
                "def __init__(self, buffer: BufferDescriptor, shapes: collections.abc.Sequence[int], dtype: DataType, "
                "strides: collections.abc.Sequence[int] | None = None, byte_offset: int = 0) -> None"),
            "strides are element strides (row-major when None); byte_offset is in bytes. Validates: "
            "ValueError names the field and rule.")
        .def_prop_ro(
            "buffer", [](const Tensor& t) { return t.buffer; }, "The descriptor of the backing the view is of.")
        .def_prop_ro(
            "byte_offset", [](const Tensor& t) { return t.byte_offset; },
            "Where the view starts in the backing, in bytes (a multiple of the element size).")
        .def_prop_ro(
            "ndims", [](const Tensor& t) { return t.ndims; }, "The view's number of dimensions.")
        .def_prop_ro(
            "shapes", [](const Tensor& t) { return dims_tuple(t.shapes, t.ndims); }, "The view's shape.")
        .def_prop_ro(
            "strides", [](const Tensor& t) { return dims_tuple(t.strides, t.ndims); },
            "The view's strides, in elements (every stride > 0).")
        .def_prop_ro(
            "dtype", [](const Tensor& t) { return static_cast<DataType>(t.dtype); }, "The view's element type.")
        .def_prop_ro("extent_bytes", &Tensor::extent_bytes, "Bytes from the view's first element to one past its last.")
        .def(
            "__eq__", [](const Tensor& a, const Tensor& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__hash__", [](const Tensor& t) { return static_cast<Py_hash_t>(tensor_hash(t)); })
        .def("__repr__", [](const Tensor& t) {
            return std::string("Tensor(") + descriptor_repr(t.buffer) + ", shapes=" + dims_repr(t.shapes, t.ndims) +
                   ", strides=" + dims_repr(t.strides, t.ndims) + ", dtype=" + data_type_name(t.dtype) +
                   ", byte_offset=" + std::to_string(t.byte_offset) + ")";
        });

    nb::class_<ChipTensor>(m, "ChipTensor", "A task argument as the chip runtime receives it: resolved address + view.")
        .def(
            "__init__",
            [](ChipTensor* self, IntArg addr_arg, IntArg size_arg, DimsArg shapes, EnumArg<DataType> dtype_arg,
               std::optional<DimsArg> strides, IntArg start_offset_arg, EnumArg<AddressSpace> space_arg) {
                const uint64_t addr = u64_of(addr_arg, "ChipTensor.addr");
                const uint64_t size = u64_of(size_arg, "ChipTensor.size");
                std::vector<uint32_t> s = dims_of(shapes, "ChipTensor.shapes");
                const DataType dtype = enum_of(dtype_arg, "ChipTensor.dtype");
                const uint64_t start_offset = u64_of(start_offset_arg, "ChipTensor.start_offset");
                const AddressSpace space = enum_of(space_arg, "ChipTensor.address_space");
                if (s.empty() || s.size() > MAX_TENSOR_DIMS)
                    throw std::invalid_argument("ChipTensor.ndims: must be in 1..5 (got " + std::to_string(s.size()) +
                                                ")");
                std::vector<uint32_t> st = strides ? dims_of(*strides, "ChipTensor.strides") : std::vector<uint32_t>{};
                if (!st.empty() && st.size() != s.size())
                    throw std::invalid_argument("ChipTensor.strides: must have one stride per dimension");
                ChipTensor t{};
                t.buffer = {addr, size};
                t.start_offset = start_offset;
                t.ndims = static_cast<uint32_t>(s.size());
                t.dtype = static_cast<uint8_t>(dtype);
                t.address_space = static_cast<uint8_t>(space);
                std::copy(s.begin(), s.end(), t.shapes);
                if (!st.empty())
                    std::copy(st.begin(), st.end(), t.strides);
                else if (row_major_strides(s, t.strides) >= 0)
                    throw std::invalid_argument("ChipTensor.strides: row-major stride does not fit u32");
                throw_if_invalid(validate_chip_tensor(t));
                new (self) ChipTensor(t);
            },
            "addr"_a, "size"_a, "shapes"_a, "dtype"_a, "strides"_a = nb::none(), "start_offset"_a = 0u,
            "address_space"_a = AddressSpace::HOST,
            nb::sig("def __init__(self, addr: int, size: int, shapes: collections.abc.Sequence[int], dtype: DataType, "
                    "strides: collections.abc.Sequence[int] | None = None, start_offset: int = 0, "
                    "address_space: AddressSpace = simpler._core.AddressSpace.HOST) -> None"),
            "start_offset is in elements.")
        .def_prop_ro(
            "addr", [](const ChipTensor& t) { return t.buffer.addr; },
            "The resolved address of the buffer in the chip's process.")
        .def_prop_ro(
            "size", [](const ChipTensor& t) { return t.buffer.size; }, "The buffer's size in bytes.")
        .def_prop_ro(
            "start_offset", [](const ChipTensor& t) { return t.start_offset; },
            "Where the view starts, in elements from addr.")
        .def_prop_ro(
            "ndims", [](const ChipTensor& t) { return t.ndims; }, "The view's number of dimensions.")
        .def_prop_ro(
            "shapes", [](const ChipTensor& t) { return dims_tuple(t.shapes, t.ndims); }, "The view's shape.")
        .def_prop_ro(
            "strides", [](const ChipTensor& t) { return dims_tuple(t.strides, t.ndims); },
            "The view's strides, in elements.")
        .def_prop_ro(
            "dtype", [](const ChipTensor& t) { return static_cast<DataType>(t.dtype); }, "The view's element type.")
        .def_prop_ro(
            "address_space", [](const ChipTensor& t) { return static_cast<AddressSpace>(t.address_space); },
            "HOST or DEVICE: where addr points.")
        .def(
            "__eq__", [](const ChipTensor& a, const ChipTensor& b) { return std::memcmp(&a, &b, 70) == 0; },
            nb::is_operator(), nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__hash__",
             [](const ChipTensor& t) {
                 return static_cast<Py_hash_t>((t.buffer.addr * 0x9e3779b97f4a7c15ULL) ^ t.start_offset ^
                                               (uint64_t{t.shapes[0]} << 32));
             })
        .def("__repr__", [](const ChipTensor& t) {
            char addr[32];
            std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(t.buffer.addr));
            return std::string("ChipTensor(addr=") + addr + ", size=" + std::to_string(t.buffer.size) +
                   ", start_offset=" + std::to_string(t.start_offset) + ", shapes=" + dims_repr(t.shapes, t.ndims) +
                   ", strides=" + dims_repr(t.strides, t.ndims) + ", dtype=" + data_type_name(t.dtype) + ", " +
                   address_space_name(t.address_space) + ")";
        });
}
