// validate_buffer_descriptor: every rule of docs/internals/abi.md "Validation", in order. Each
// test feeds one violating value and asserts the specific refusal, then the
// nearest valid value and asserts it passes.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "fixtures.h"

using namespace simpler;

namespace {

BufferDescriptor address_descriptor(BackendKind kind, AccessMode access = AccessMode::READWRITE) {
    return make_address_descriptor(test_identity(), kind, access, 4096, 0x7f0000001000ULL);
}

void expect_refused(const BufferDescriptor& d, const char* field, const std::string& rule_part) {
    ValidationError e = validate_buffer_descriptor(d);
    ASSERT_FALSE(e.ok()) << "expected a refusal on " << field;
    EXPECT_STREQ(e.type, "BufferDescriptor");
    EXPECT_STREQ(e.field, field) << e.message();
    EXPECT_NE(e.message().find(rule_part), std::string::npos) << e.message();
}

void expect_valid(const BufferDescriptor& d) {
    ValidationError e = validate_buffer_descriptor(d);
    EXPECT_TRUE(e.ok()) << e.message();
}

}  // namespace

TEST(BufferDescriptor, ValidPosixShmPasses) { expect_valid(shm_descriptor()); }

TEST(BufferDescriptor, WrongMagicIsRefused) {
    BufferDescriptor d = shm_descriptor();
    d.magic = 0x5343;
    expect_refused(d, "magic", "0x5342");
    EXPECT_NE(validate_buffer_descriptor(d).message().find("got 0x5343"), std::string::npos);
    d.magic = 0x5342;
    expect_valid(d);
}

TEST(BufferDescriptor, UnknownAddressSpaceIsRefused) {
    BufferDescriptor d = shm_descriptor();
    d.address_space = 2;
    expect_refused(d, "address_space", "HOST(0) or DEVICE(1)");
    d.address_space = 0;
    expect_valid(d);
}

TEST(BufferDescriptor, UnknownAccessIsRefused) {
    BufferDescriptor d = shm_descriptor();
    d.access = 3;
    expect_refused(d, "access", "READ(0), WRITE(1) or READWRITE(2)");
    d.access = 2;
    expect_valid(d);
}

TEST(BufferDescriptor, UnknownBackendIsRefused) {
    BufferDescriptor d = shm_descriptor();
    for (int kind : {6, 7, 200, 255}) {
        d.backend_kind = static_cast<uint8_t>(kind);
        expect_refused(d, "backend_kind", "known BackendKind");
    }
    d.backend_kind = static_cast<uint8_t>(BackendKind::POSIX_SHM);
    expect_valid(d);
}

TEST(BufferDescriptor, BodyLenPast32IsRefused) {
    BufferDescriptor d = shm_descriptor();
    d.body_len = 33;
    expect_refused(d, "body_len", "<= 32");
    // The nearest valid: a 32-byte name filling the body.
    d.body_len = 32;
    for (auto& c : d.body) c = 'x';
    expect_valid(d);
}

TEST(BufferDescriptor, GenerationZeroIsRefused) {
    BufferDescriptor d = shm_descriptor();
    d.identity.generation = 0;
    expect_refused(d, "identity.generation", "non-zero");
    d.identity.generation = 1;
    expect_valid(d);
}

TEST(BufferDescriptor, HostBackendOnDeviceSpaceIsRefused) {
    for (BackendKind kind : {BackendKind::FORK_SHM, BackendKind::FORK_COW}) {
        BufferDescriptor d = address_descriptor(kind, AccessMode::READ);
        d.address_space = 1;
        expect_refused(d, "address_space", "must be HOST");
        d.address_space = 0;
        expect_valid(d);
    }
    BufferDescriptor d = shm_descriptor();
    d.address_space = 1;
    expect_refused(d, "address_space", "must be HOST");
}

TEST(BufferDescriptor, DeviceBackendOnHostSpaceIsRefused) {
    for (BackendKind kind : {BackendKind::VMM_WINDOW, BackendKind::DEVICE_MALLOC}) {
        BufferDescriptor d = address_descriptor(kind);
        EXPECT_EQ(d.address_space, 1);
        d.address_space = 0;
        expect_refused(d, "address_space", "must be DEVICE");
        d.address_space = 1;
        expect_valid(d);
    }
}

TEST(BufferDescriptor, RemoteSidecarMayBeEitherSpace) {
    BufferDescriptor d = make_buffer_descriptor(test_identity(), BackendKind::REMOTE_SIDECAR, AddressSpace::DEVICE,
                                                AccessMode::READ, 64, {});
    expect_valid(d);
    d.address_space = 0;
    expect_valid(d);
}

TEST(BufferDescriptor, ForkCowGrantingWriteIsRefused) {
    for (AccessMode bad : {AccessMode::WRITE, AccessMode::READWRITE}) {
        BufferDescriptor d = address_descriptor(BackendKind::FORK_COW, AccessMode::READ);
        d.access = static_cast<uint8_t>(bad);
        expect_refused(d, "access", "FORK_COW must grant READ only");
    }
    expect_valid(address_descriptor(BackendKind::FORK_COW, AccessMode::READ));
    EXPECT_THROW(address_descriptor(BackendKind::FORK_COW, AccessMode::WRITE), std::invalid_argument);
}

TEST(BufferDescriptor, AddressBodyMustBeExactly8Bytes) {
    for (BackendKind kind :
         {BackendKind::FORK_SHM, BackendKind::FORK_COW, BackendKind::VMM_WINDOW, BackendKind::DEVICE_MALLOC}) {
        BufferDescriptor d = address_descriptor(kind, AccessMode::READ);
        d.body_len = 7;
        d.body[7] = 0;  // keep the tail zero so the length rule is what fails
        expect_refused(d, "body_len", "exactly 8");
        d.body_len = 9;
        expect_refused(d, "body_len", "exactly 8");
        expect_valid(address_descriptor(kind, AccessMode::READ));
    }
}

TEST(BufferDescriptor, AddressBodyMustBeNonZero) {
    BufferDescriptor d = address_descriptor(BackendKind::DEVICE_MALLOC);
    for (size_t i = 0; i < 8; ++i) d.body[i] = 0;
    expect_refused(d, "body", "non-zero");
    d.body[7] = 1;  // the nearest non-zero base (1 << 56)
    expect_valid(d);
    EXPECT_EQ(descriptor_address(d), 1ULL << 56);
}

TEST(BufferDescriptor, PosixShmNameRules) {
    BufferDescriptor d = shm_descriptor();
    d.body_len = 0;
    for (auto& c : d.body) c = 0;
    expect_refused(d, "body_len", "1..32 bytes");
    d.body_len = 1;
    d.body[0] = '/';
    expect_refused(d, "body", "not '/'");
    d.body[0] = 0x20;  // space: just below the printable range
    expect_refused(d, "body", "printable");
    d.body[0] = 0x7f;  // DEL: just above it
    expect_refused(d, "body", "printable");
    d.body[0] = 0x21;
    expect_valid(d);
    d.body[0] = 0x7e;
    expect_valid(d);
}

TEST(BufferDescriptor, RemoteSidecarBodyMustBeEmpty) {
    BufferDescriptor d = make_buffer_descriptor(test_identity(), BackendKind::REMOTE_SIDECAR, AddressSpace::HOST,
                                                AccessMode::READ, 64, {});
    d.body_len = 1;
    d.body[0] = 'x';
    expect_refused(d, "body_len", "must be 0 for REMOTE_SIDECAR");
}

TEST(BufferDescriptor, NonZeroBytesPastBodyLenAreRefused) {
    BufferDescriptor d = shm_descriptor(64, AccessMode::READ, "abc");
    d.body[31] = 1;
    expect_refused(d, "body", "zero past body_len");
    EXPECT_EQ(validate_buffer_descriptor(d).slot, 31);
    d.body[31] = 0;
    d.body[3] = 'd';  // the nearest valid: make it part of the name
    d.body_len = 4;
    expect_valid(d);

    BufferDescriptor a = address_descriptor(BackendKind::FORK_SHM);
    a.body[8] = 0xff;
    expect_refused(a, "body", "zero past body_len");
}

TEST(BufferDescriptor, PadsAndPathIdAreNotValidated) {
    BufferDescriptor d = shm_descriptor();
    d._pad0[0] = 0xff;
    d._pad1[1] = 0xff;
    d.identity._pad[11] = 0xff;
    d.owner_worker_path_id = 0xdeadbeef;
    expect_valid(d);
}

TEST(BufferDescriptor, FirstFailingCheckWins) {
    BufferDescriptor d = shm_descriptor();
    d.magic = 0;
    d.access = 9;
    d.identity.generation = 0;
    EXPECT_STREQ(validate_buffer_descriptor(d).field, "magic");
    d.magic = BUFFER_DESCRIPTOR_MAGIC;
    EXPECT_STREQ(validate_buffer_descriptor(d).field, "access");
    d.access = 0;
    EXPECT_STREQ(validate_buffer_descriptor(d).field, "identity.generation");
}

TEST(BufferDescriptor, ConstructorZeroesPadsAndThrowsValueErrorOnBadInput) {
    BufferDescriptor d = shm_descriptor();
    for (uint8_t b : d._pad0) EXPECT_EQ(b, 0);
    for (uint8_t b : d.identity._pad) EXPECT_EQ(b, 0);
    const uint8_t slash[] = {'a', '/', 'b'};
    EXPECT_THROW(
        make_buffer_descriptor(test_identity(), BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READ, 8, slash),
        std::invalid_argument);
    const uint8_t too_long[33] = {};
    EXPECT_THROW(make_buffer_descriptor(test_identity(), BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READ,
                                        8, too_long),
                 std::invalid_argument);
}

TEST(BufferDescriptor, EqualityIgnoresPadsAndPathId) {
    BufferDescriptor a = shm_descriptor();
    BufferDescriptor b = a;
    b._pad0[1] = 3;
    b.identity._pad[0] = 9;
    b.owner_worker_path_id = 42;
    EXPECT_EQ(a, b);
    b.nbytes += 1;
    EXPECT_FALSE(a == b);
}

TEST(CanonicalIdentity, EqualityAndHashReadOnlyTheNamedFields) {
    CanonicalIdentity a = test_identity(3, 2);
    CanonicalIdentity b = a;
    b._pad[5] = 0x55;
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.hash(), b.hash());
    EXPECT_EQ(std::hash<CanonicalIdentity>{}(a), std::hash<CanonicalIdentity>{}(b));
    b.generation = 3;
    EXPECT_FALSE(a == b);
    EXPECT_NE(a.hash(), b.hash());
    b = a;
    b.owner_instance_id[0] ^= 1;
    EXPECT_FALSE(a == b);
    EXPECT_EQ(a.to_string(), "a1b2c3d4e5f60718:3@g2");
}
