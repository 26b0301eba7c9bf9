#include "simpler/task_interface/buffer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace simpler {

bool operator==(const BufferDescriptor& a, const BufferDescriptor& b) noexcept {
    return a.magic == b.magic && a.address_space == b.address_space && a.access == b.access &&
           a.backend_kind == b.backend_kind && a.identity == b.identity && a.nbytes == b.nbytes &&
           a.body_len == b.body_len && std::memcmp(a.body, b.body, DESC_MAX_BYTES) == 0;
}

bool operator==(const Tensor& a, const Tensor& b) noexcept {
    return a.buffer == b.buffer && a.byte_offset == b.byte_offset && a.ndims == b.ndims &&
           std::memcmp(a.shapes, b.shapes, sizeof a.shapes) == 0 &&
           std::memcmp(a.strides, b.strides, sizeof a.strides) == 0 && a.dtype == b.dtype;
}

namespace {

constexpr const char* kDesc = "BufferDescriptor";
constexpr const char* kTensor = "Tensor";

bool is_address_backend(uint8_t kind) noexcept {
    return kind == static_cast<uint8_t>(BackendKind::FORK_SHM) || kind == static_cast<uint8_t>(BackendKind::FORK_COW) ||
           kind == static_cast<uint8_t>(BackendKind::VMM_WINDOW) ||
           kind == static_cast<uint8_t>(BackendKind::DEVICE_MALLOC);
}

uint8_t required_space(uint8_t kind) noexcept {
    return (kind == static_cast<uint8_t>(BackendKind::VMM_WINDOW) ||
            kind == static_cast<uint8_t>(BackendKind::DEVICE_MALLOC))
               ? static_cast<uint8_t>(AddressSpace::DEVICE)
               : static_cast<uint8_t>(AddressSpace::HOST);
}

ValidationError check_body(const BufferDescriptor& d) noexcept {
    const uint8_t kind = d.backend_kind;
    if (is_address_backend(kind)) {
        if (d.body_len != BACKEND_ADDRESS_BODY_BYTES)
            return ValidationError::fail(kDesc, "body_len", "must be exactly 8 for an address-bearing backend",
                                         d.body_len);
        if (descriptor_address(d) == 0) return ValidationError::fail(kDesc, "body", "address base must be non-zero");
    } else if (kind == static_cast<uint8_t>(BackendKind::POSIX_SHM)) {
        if (d.body_len == 0) return ValidationError::fail(kDesc, "body_len", "POSIX_SHM name must be 1..32 bytes", 0);
        for (uint16_t i = 0; i < d.body_len; ++i) {
            const uint8_t c = d.body[i];
            if (c < 0x21 || c > 0x7E || c == '/')
                return ValidationError::fail(kDesc, "body", "POSIX_SHM name byte must be printable ASCII, not '/'", c,
                                             true)
                    .at_slot(i);
        }
    } else if (kind == static_cast<uint8_t>(BackendKind::REMOTE_SIDECAR)) {
        if (d.body_len != 0)
            return ValidationError::fail(kDesc, "body_len", "must be 0 for REMOTE_SIDECAR", d.body_len);
    }
    return {};
}

}  // namespace

ValidationError diagnose_buffer_descriptor(const BufferDescriptor& d) noexcept {
    if (d.magic != BUFFER_DESCRIPTOR_MAGIC)
        return ValidationError::fail(kDesc, "magic", "must be 0x5342", d.magic, true);
    if (d.address_space > static_cast<uint8_t>(AddressSpace::DEVICE))
        return ValidationError::fail(kDesc, "address_space", "must be HOST(0) or DEVICE(1)", d.address_space);
    if (d.access > static_cast<uint8_t>(AccessMode::READWRITE))
        return ValidationError::fail(kDesc, "access", "must be READ(0), WRITE(1) or READWRITE(2)", d.access);
    if (d.backend_kind >= BACKEND_KIND_COUNT)
        return ValidationError::fail(kDesc, "backend_kind", "must be a known BackendKind (0..5)", d.backend_kind);
    if (d.body_len > DESC_MAX_BYTES) return ValidationError::fail(kDesc, "body_len", "must be <= 32", d.body_len);
    if (d.identity.generation == 0) return ValidationError::fail(kDesc, "identity.generation", "must be non-zero", 0);
    if (d.backend_kind != static_cast<uint8_t>(BackendKind::REMOTE_SIDECAR) &&
        d.address_space != required_space(d.backend_kind))
        return ValidationError::fail(kDesc, "address_space",
                                     required_space(d.backend_kind) == 0
                                         ? "must be HOST for FORK_SHM, FORK_COW and POSIX_SHM"
                                         : "must be DEVICE for VMM_WINDOW and DEVICE_MALLOC",
                                     d.address_space);
    if (d.backend_kind == static_cast<uint8_t>(BackendKind::FORK_COW) &&
        d.access != static_cast<uint8_t>(AccessMode::READ))
        return ValidationError::fail(
            kDesc, "access", "FORK_COW must grant READ only (a child's write never reaches the owner)", d.access);
    if (ValidationError e = check_body(d); !e.ok()) return e;
    for (size_t i = d.body_len; i < DESC_MAX_BYTES; ++i)
        if (d.body[i] != 0)
            return ValidationError::fail(kDesc, "body", "must be zero past body_len", d.body[i], true)
                .at_slot(static_cast<int32_t>(i));
    return {};
}

ValidationError diagnose_tensor(const Tensor& t) noexcept {
    if (ValidationError e = diagnose_buffer_descriptor(t.buffer); !e.ok()) {
        e.type = "Tensor.buffer";  // keep field/rule; name the embedding
        return e;
    }
    if (t.ndims < 1 || t.ndims > MAX_TENSOR_DIMS)
        return ValidationError::fail(kTensor, "ndims", "must be in 1..5", t.ndims);
    const uint32_t elem = data_type_element_size(t.dtype);
    if (elem == 0) return ValidationError::fail(kTensor, "dtype", "must be a known DataType (0..15)", t.dtype);
    if (t.byte_offset % elem != 0)
        return ValidationError::fail(kTensor, "byte_offset", "must be a multiple of the element size", t.byte_offset);
    if (ValidationError e = check_view_shape(kTensor, t.ndims, t.shapes, t.strides, t.dtype); !e.ok()) return e;
    const uint64_t extent = view_extent_bytes(t.shapes, t.strides, t.ndims, elem);
    if (extent == TENSOR_EXTENT_UNREPRESENTABLE)
        return ValidationError::fail(kTensor, "shapes", "view extent overflows 64 bits");
    if (t.byte_offset > t.buffer.nbytes || extent > t.buffer.nbytes - t.byte_offset)
        return ValidationError::fail(kTensor, "byte_offset", "view must end within buffer.nbytes (offset + extent)",
                                     saturating_add(t.byte_offset, extent))
            .with_max(t.buffer.nbytes);
    return {};
}

namespace {

constexpr uint64_t kByteOnes = 0x0101010101010101ULL;
constexpr uint64_t kByteHighs = 0x8080808080808080ULL;

// Any byte of x below n (n <= 128) / above n (n <= 127) / zero. Exact as "any"
// tests: a borrow or carry only leaves a byte that already qualifies.
constexpr uint64_t any_byte_below(uint64_t x, uint64_t n) { return (x - kByteOnes * n) & ~x & kByteHighs; }
constexpr uint64_t any_byte_above(uint64_t x, uint64_t n) { return ((x + kByteOnes * (127 - n)) | x) & kByteHighs; }
constexpr uint64_t any_byte_zero(uint64_t x) { return (x - kByteOnes) & ~x & kByteHighs; }

// kActiveBytes[len][k]: the bytes of body word k (little-endian) below body_len.
struct ActiveMasks {
    uint64_t words[DESC_MAX_BYTES + 1][DESC_MAX_BYTES / 8];
};
constexpr ActiveMasks make_active_masks() {
    ActiveMasks m{};
    for (uint32_t len = 0; len <= DESC_MAX_BYTES; ++len)
        for (uint32_t k = 0; k < DESC_MAX_BYTES / 8; ++k) {
            const uint32_t keep = len <= 8 * k ? 0 : (len - 8 * k < 8 ? len - 8 * k : 8);
            m.words[len][k] = keep == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * keep)) - 1;
        }
    return m;
}
constexpr ActiveMasks kActiveBytes = make_active_masks();

// 0: HOST only, 1: DEVICE only, 2: either (REMOTE_SIDECAR).
constexpr uint8_t kSpaceOf[BACKEND_KIND_COUNT] = {0, 0, 1, 2, 1, 0};
// 0: 8-byte address, 1: shm name, 2: empty.
constexpr uint8_t kBodyOf[BACKEND_KIND_COUNT] = {0, 1, 0, 2, 0, 0};

}  // namespace

bool buffer_descriptor_is_valid(const BufferDescriptor& d) noexcept {
    const uint8_t kind = d.backend_kind;
    if ((d.magic != BUFFER_DESCRIPTOR_MAGIC) | (d.address_space > 1) | (d.access > 2) | (kind >= BACKEND_KIND_COUNT) |
        (d.body_len > DESC_MAX_BYTES) | (d.identity.generation == 0))
        return false;
    bool ok = (kSpaceOf[kind] == 2) | (kSpaceOf[kind] == d.address_space);
    ok &= (kind != static_cast<uint8_t>(BackendKind::FORK_COW)) | (d.access == static_cast<uint8_t>(AccessMode::READ));
    uint64_t words[DESC_MAX_BYTES / 8];
    std::memcpy(words, d.body, sizeof words);
    const uint64_t* active = kActiveBytes.words[d.body_len];
    uint64_t stray = 0;  // non-zero bytes past body_len
    for (uint32_t k = 0; k < DESC_MAX_BYTES / 8; ++k) stray |= words[k] & ~active[k];
    ok &= stray == 0;
    switch (kBodyOf[kind]) {
        case 0: ok &= (d.body_len == BACKEND_ADDRESS_BODY_BYTES) & (words[0] != 0); break;
        case 1: {
            uint64_t bad = 0;  // name bytes outside 0x21..0x7E, or '/'
            for (uint32_t k = 0; k < DESC_MAX_BYTES / 8; ++k) {
                const uint64_t name = (words[k] & active[k]) | (kByteOnes * 'A' & ~active[k]);
                bad |=
                    any_byte_below(name, 0x21) | any_byte_above(name, 0x7E) | any_byte_zero(name ^ (kByteOnes * '/'));
            }
            ok &= (d.body_len >= 1) & (bad == 0);
            break;
        }
        default: ok &= d.body_len == 0; break;
    }
    return ok;
}

bool tensor_is_valid(const Tensor& t) noexcept {
    if (!buffer_descriptor_is_valid(t.buffer)) return false;
    const uint32_t elem = data_type_element_size(t.dtype);  // 0 when unknown; else a power of two
    if ((t.ndims - 1 >= MAX_TENSOR_DIMS) | (elem == 0)) return false;
    if ((t.byte_offset & (elem - 1)) != 0 || !view_dims_well_formed(t.ndims, t.shapes, t.strides)) return false;
    const uint64_t extent = view_extent_bytes(t.shapes, t.strides, t.ndims, elem);
    return (extent != TENSOR_EXTENT_UNREPRESENTABLE) & (t.byte_offset <= t.buffer.nbytes) &
           (extent <= t.buffer.nbytes - t.byte_offset);
}

ValidationError validate_buffer_descriptor(const BufferDescriptor& d) noexcept {
    return buffer_descriptor_is_valid(d) ? ValidationError{} : diagnose_buffer_descriptor(d);
}

ValidationError validate_tensor(const Tensor& t) noexcept {
    return tensor_is_valid(t) ? ValidationError{} : diagnose_tensor(t);
}

BufferDescriptor make_buffer_descriptor(const CanonicalIdentity& identity, BackendKind backend, AddressSpace space,
                                        AccessMode access, uint64_t nbytes, std::span<const uint8_t> body,
                                        uint32_t owner_worker_path_id) {
    if (body.size() > DESC_MAX_BYTES)
        throw std::invalid_argument("BufferDescriptor.body_len: must be <= 32 (got " + std::to_string(body.size()) +
                                    ")");
    BufferDescriptor d{};
    d.magic = BUFFER_DESCRIPTOR_MAGIC;
    d.address_space = static_cast<uint8_t>(space);
    d.access = static_cast<uint8_t>(access);
    d.backend_kind = static_cast<uint8_t>(backend);
    d.identity = identity;
    std::memset(d.identity._pad, 0, sizeof d.identity._pad);
    d.nbytes = nbytes;
    d.owner_worker_path_id = owner_worker_path_id;
    d.body_len = static_cast<uint16_t>(body.size());
    std::copy(body.begin(), body.end(), d.body);
    throw_if_invalid(validate_buffer_descriptor(d));
    return d;
}

BufferDescriptor make_address_descriptor(const CanonicalIdentity& identity, BackendKind backend, AccessMode access,
                                         uint64_t nbytes, uint64_t base, uint32_t owner_worker_path_id) {
    uint8_t body[BACKEND_ADDRESS_BODY_BYTES];
    for (size_t i = 0; i < BACKEND_ADDRESS_BODY_BYTES; ++i) body[i] = static_cast<uint8_t>(base >> (8 * i));
    const auto kind = static_cast<uint8_t>(backend);
    return make_buffer_descriptor(identity, backend, static_cast<AddressSpace>(required_space(kind)), access, nbytes,
                                  body, owner_worker_path_id);
}

uint64_t descriptor_address(const BufferDescriptor& d) noexcept {
    uint64_t base = 0;
    for (size_t i = 0; i < BACKEND_ADDRESS_BODY_BYTES; ++i) base |= uint64_t{d.body[i]} << (8 * i);
    return base;
}

Tensor make_tensor(const BufferDescriptor& buffer, std::span<const uint32_t> shapes, DataType dtype,
                   std::span<const uint32_t> strides, uint64_t byte_offset) {
    if (shapes.empty() || shapes.size() > MAX_TENSOR_DIMS)
        throw std::invalid_argument("Tensor.ndims: must be in 1..5 (got " + std::to_string(shapes.size()) + ")");
    if (!strides.empty() && strides.size() != shapes.size())
        throw std::invalid_argument("Tensor.strides: must have one stride per dimension (got " +
                                    std::to_string(strides.size()) + " strides for " + std::to_string(shapes.size()) +
                                    " shapes)");
    Tensor t{};
    t.buffer = buffer;
    t.byte_offset = byte_offset;
    t.ndims = static_cast<uint32_t>(shapes.size());
    t.dtype = static_cast<uint8_t>(dtype);
    std::copy(shapes.begin(), shapes.end(), t.shapes);
    if (strides.empty()) {
        if (const int32_t bad = row_major_strides(shapes, t.strides); bad >= 0)
            throw std::invalid_argument("Tensor.strides[" + std::to_string(bad) +
                                        "]: row-major stride does not fit u32");
    } else {
        std::copy(strides.begin(), strides.end(), t.strides);
    }
    throw_if_invalid(validate_tensor(t));
    return t;
}

}  // namespace simpler
