// The L3+ wire types: BufferDescriptor ("how to find the backing") and Tensor
// (a descriptor plus a strided view; the element of TaskArgs). Neither carries a
// materialized address. Layouts are pinned below and in docs/internals/abi.md.
//
// Trust: every byte of these structs may have come from another process. The
// validators are the gate and run wherever bytes are decoded (the blob reader)
// and in every constructor (make_buffer_descriptor, make_tensor). They are
// noexcept, return the first failing check as a ValidationError, and never read
// outside the struct. This header does not own backings, identity minting, or
// address resolution: those live in simpler/backing/.
//
// This Tensor is simpler::Tensor; the chip runtime's working tensor is the
// different type simpler::chip::Tensor (chip/tensor.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "simpler/task_interface/buffer_enums.h"
#include "simpler/task_interface/data_type.h"
#include "simpler/task_interface/identity.h"
#include "simpler/task_interface/validation_error.h"
#include "simpler/task_interface/view_geometry.h"

namespace simpler {

inline constexpr uint16_t BUFFER_DESCRIPTOR_MAGIC = 0x5342;
inline constexpr size_t DESC_MAX_BYTES = 32;
inline constexpr size_t BACKEND_ADDRESS_BODY_BYTES = 8;

struct BufferDescriptor {
    uint16_t magic;                  // BUFFER_DESCRIPTOR_MAGIC
    uint8_t address_space;           // raw AddressSpace
    uint8_t access;                  // raw AccessMode: what the backing grants
    uint8_t backend_kind;            // raw BackendKind
    uint8_t _pad0[3];
    CanonicalIdentity identity;
    uint64_t nbytes;                 // size of the backing in bytes
    uint32_t owner_worker_path_id;   // diagnostic only; interned per process
    uint16_t body_len;               // <= DESC_MAX_BYTES
    uint8_t _pad1[2];
    uint8_t body[DESC_MAX_BYTES];    // backend-specific; zero from body_len on

    // Equal when every validated field is equal (magic, address space, access,
    // backend, identity, nbytes, body); _pad fields and the diagnostic
    // owner_worker_path_id are ignored.
    friend bool operator==(const BufferDescriptor& a, const BufferDescriptor& b) noexcept;
};

static_assert(std::is_trivially_copyable_v<BufferDescriptor>);
static_assert(std::is_standard_layout_v<BufferDescriptor>);
static_assert(sizeof(BufferDescriptor) == 88);
static_assert(alignof(BufferDescriptor) == 8);
static_assert(offsetof(BufferDescriptor, magic) == 0);
static_assert(offsetof(BufferDescriptor, address_space) == 2);
static_assert(offsetof(BufferDescriptor, access) == 3);
static_assert(offsetof(BufferDescriptor, backend_kind) == 4);
static_assert(offsetof(BufferDescriptor, _pad0) == 5);
static_assert(offsetof(BufferDescriptor, identity) == 8);
static_assert(offsetof(BufferDescriptor, nbytes) == 40);
static_assert(offsetof(BufferDescriptor, owner_worker_path_id) == 48);
static_assert(offsetof(BufferDescriptor, body_len) == 52);
static_assert(offsetof(BufferDescriptor, _pad1) == 54);
static_assert(offsetof(BufferDescriptor, body) == 56);

struct Tensor {
    BufferDescriptor buffer;
    uint64_t byte_offset;                // bytes; a multiple of the element size
    uint32_t ndims;                      // 1..MAX_TENSOR_DIMS
    uint32_t shapes[MAX_TENSOR_DIMS];    // active > 0; 0 past ndims
    uint32_t strides[MAX_TENSOR_DIMS];   // elements; active > 0; 0 past ndims
    uint8_t dtype;                       // raw DataType
    uint8_t _pad[3];

    // Equal when the buffers are equal and the views are identical.
    friend bool operator==(const Tensor& a, const Tensor& b) noexcept;

    // Span of the view in bytes (saturating), and the backing bytes it reaches:
    // [byte_offset, byte_offset + extent).
    [[nodiscard]] uint64_t extent_bytes() const noexcept {
        return view_extent_bytes(shapes, strides, ndims, data_type_element_size(dtype));
    }
};

static_assert(std::is_trivially_copyable_v<Tensor>);
static_assert(std::is_standard_layout_v<Tensor>);
static_assert(sizeof(Tensor) == 144);
static_assert(alignof(Tensor) == 8);
static_assert(offsetof(Tensor, buffer) == 0);
static_assert(offsetof(Tensor, byte_offset) == 88);
static_assert(offsetof(Tensor, ndims) == 96);
static_assert(offsetof(Tensor, shapes) == 100);
static_assert(offsetof(Tensor, strides) == 120);
static_assert(offsetof(Tensor, dtype) == 140);
static_assert(offsetof(Tensor, _pad) == 141);

// The checks of docs/internals/abi.md "Validation", in that order; the first failure wins.
// Each runs its *_is_valid predicate first and the ordered diagnosis only when
// the predicate refuses, so the success path costs one pass of flag arithmetic.
ValidationError validate_buffer_descriptor(const BufferDescriptor& d) noexcept;
ValidationError validate_tensor(const Tensor& t) noexcept;

// Branch-light predicates: true exactly when the validator above returns ok.
bool buffer_descriptor_is_valid(const BufferDescriptor& d) noexcept;
bool tensor_is_valid(const Tensor& t) noexcept;

// The ordered checks alone, without the predicate in front; tests and the
// fuzzer compare them with the predicates.
ValidationError diagnose_buffer_descriptor(const BufferDescriptor& d) noexcept;
ValidationError diagnose_tensor(const Tensor& t) noexcept;

// Constructors: fill the named fields, zero everything else (pads and tails
// included), validate, and throw std::invalid_argument with the validator's
// message on failure.
BufferDescriptor make_buffer_descriptor(const CanonicalIdentity& identity, BackendKind backend, AddressSpace space,
                                        AccessMode access, uint64_t nbytes, std::span<const uint8_t> body,
                                        uint32_t owner_worker_path_id = 0);

// Address-bearing backends (FORK_SHM, FORK_COW, VMM_WINDOW, DEVICE_MALLOC) store
// their base as 8 bytes little-endian; the address space follows from the backend.
BufferDescriptor make_address_descriptor(const CanonicalIdentity& identity, BackendKind backend, AccessMode access,
                                         uint64_t nbytes, uint64_t base, uint32_t owner_worker_path_id = 0);

// The u64 LE base of an address-bearing descriptor (valid descriptors only).
uint64_t descriptor_address(const BufferDescriptor& d) noexcept;

// strides empty means row-major (innermost 1); throws std::invalid_argument when
// row-major strides do not fit u32, when shapes/strides disagree in length, or
// when the result does not validate.
Tensor make_tensor(const BufferDescriptor& buffer, std::span<const uint32_t> shapes, DataType dtype,
                   std::span<const uint32_t> strides = {}, uint64_t byte_offset = 0);

}  // namespace simpler
