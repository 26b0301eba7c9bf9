// One conformance suite for every host backend (POSIX_SHM, FORK_SHM,
// FORK_COW): the owner's descriptor, the consumer's view of the bytes in a
// forked child, write visibility, views, and the lifecycle.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <sys/stat.h>

#include "process_fixture.h"
#include "simpler/backing/fork_owner.h"
#include "simpler/backing/import_registry.h"
#include "simpler/backing/posix_shm_owner.h"
#include "simpler/task_interface/task_args_wire.h"

namespace simpler {
namespace {

struct PosixShmBackend {
    static constexpr BackendKind KIND = BackendKind::POSIX_SHM;
    static constexpr bool CHILD_WRITES_REACH_OWNER = true;
    static std::unique_ptr<BackingOwner> create(uint64_t n) { return PosixShmOwner::create(n); }
};
struct ForkShmBackend {
    static constexpr BackendKind KIND = BackendKind::FORK_SHM;
    static constexpr bool CHILD_WRITES_REACH_OWNER = true;
    static std::unique_ptr<BackingOwner> create(uint64_t n) { return ForkOwner::create_shared(n); }
};
struct ForkCowBackend {
    static constexpr BackendKind KIND = BackendKind::FORK_COW;
    static constexpr bool CHILD_WRITES_REACH_OWNER = false;
    static std::unique_ptr<BackingOwner> create(uint64_t n) { return ForkOwner::create_cow(n); }
};

template <typename B>
class HostBackingConformance : public test::LeakCheckedTest {};
using HostBackends = ::testing::Types<PosixShmBackend, ForkShmBackend, ForkCowBackend>;
TYPED_TEST_SUITE(HostBackingConformance, HostBackends);

constexpr uint32_t M = 6, N = 8;  // a 6x8 float matrix, element (i, j) = i * 100 + j

void fill_matrix(BackingOwner& o) {
    auto* f = reinterpret_cast<float*>(o.data());
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) f[i * N + j] = static_cast<float>(i * 100 + j);
}

float at(const MappedArg& a, std::initializer_list<uint32_t> idx) {
    uint64_t e = 0;
    uint32_t d = 0;
    for (uint32_t i : idx) e += uint64_t{i} * a.strides[d++];
    float v;
    std::memcpy(&v, a.data + e * sizeof(float), sizeof v);
    return v;
}

TYPED_TEST(HostBackingConformance, DescriptorNamesTheBackendAndValidates) {
    auto owner = TypeParam::create(256);
    const BufferDescriptor& d = owner->descriptor();
    EXPECT_TRUE(validate_buffer_descriptor(d).ok());
    EXPECT_EQ(d.backend_kind, static_cast<uint8_t>(TypeParam::KIND));
    EXPECT_EQ(d.address_space, static_cast<uint8_t>(AddressSpace::HOST));
    EXPECT_EQ(d.nbytes, 256u);
    EXPECT_TRUE(process_identity_minter().check_live(d.identity).live());
}

TYPED_TEST(HostBackingConformance, ChildReadsTheOwnersBytes) {
    auto owner = TypeParam::create(M * N * sizeof(float));
    fill_matrix(*owner);
    const uint32_t shapes[2] = {M, N};
    const Tensor t = make_tensor(owner->descriptor(), shapes, DataType::FLOAT32);
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        const MappedArg a = reg.map_arg(t);
        for (uint32_t i = 0; i < M; ++i)
            for (uint32_t j = 0; j < N; ++j)
                if (at(a, {i, j}) != static_cast<float>(i * 100 + j)) return 1;
        return 0;
    });
    EXPECT_EQ(rc, 0);
}

TYPED_TEST(HostBackingConformance, ChildWritesReachTheOwnerOnlyThroughSharedBackings) {
    auto owner = TypeParam::create(64);
    std::memset(owner->data(), 0, 64);
    const BufferDescriptor d = owner->descriptor();
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        const ImportedBacking& b = reg.import_backing(d);
        if (d.access == static_cast<uint8_t>(AccessMode::READ)) {
            // A COW page is private to the child: the write stays here.
            if (!owner->data()) return 3;
            std::memset(owner->data(), 0x5a, 64);
            return 0;
        }
        std::memset(reinterpret_cast<void*>(b.base), 0x5a, 64);
        return 0;
    });
    ASSERT_EQ(rc, 0);
    const uint8_t expect = TypeParam::CHILD_WRITES_REACH_OWNER ? 0x5a : 0x00;
    for (int i = 0; i < 64; ++i) ASSERT_EQ(owner->data()[i], expect) << "byte " << i;
}

TYPED_TEST(HostBackingConformance, ViewsReadBackTheRightElements) {
    auto owner = TypeParam::create(M * N * sizeof(float));
    fill_matrix(*owner);
    const BufferDescriptor d = owner->descriptor();
    const uint32_t contiguous_shape[2] = {M, N};
    const uint32_t transposed_shape[2] = {N, M}, transposed_strides[2] = {1, N};
    const uint32_t sub_shape[2] = {2, 3}, sub_strides[2] = {N, 1};
    const uint32_t step_shape[2] = {3, 4}, step_strides[2] = {2 * N, 2};
    const Tensor contiguous = make_tensor(d, contiguous_shape, DataType::FLOAT32);
    const Tensor transposed = make_tensor(d, transposed_shape, DataType::FLOAT32, transposed_strides);
    const Tensor sub = make_tensor(d, sub_shape, DataType::FLOAT32, sub_strides, (2 * N + 4) * sizeof(float));
    const Tensor stepped = make_tensor(d, step_shape, DataType::FLOAT32, step_strides, 1 * sizeof(float));
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        const MappedArg c = reg.map_arg(contiguous), t = reg.map_arg(transposed), s = reg.map_arg(sub),
                        p = reg.map_arg(stepped);
        if (at(c, {5, 7}) != 507.f) return 1;
        for (uint32_t i = 0; i < N; ++i)
            for (uint32_t j = 0; j < M; ++j)
                if (at(t, {i, j}) != static_cast<float>(j * 100 + i)) return 2;
        for (uint32_t i = 0; i < 2; ++i)
            for (uint32_t j = 0; j < 3; ++j)
                if (at(s, {i, j}) != static_cast<float>((2 + i) * 100 + 4 + j)) return 3;
        for (uint32_t i = 0; i < 3; ++i)
            for (uint32_t j = 0; j < 4; ++j)
                if (at(p, {i, j}) != static_cast<float>(2 * i * 100 + 1 + 2 * j)) return 4;
        if (reg.stats().maps > 1) return 5;  // four views, one backing, at most one map
        // The same bytes through the chip path.
        ChipStorageTaskArgs args{};
        const Tensor all[2] = {sub, stepped};
        reg.materialize_args(all, {}, args);
        const uint32_t idx[2] = {1, 2};
        float v;
        std::memcpy(&v, reinterpret_cast<void*>(args.tensors[0].element_address(idx)), sizeof v);
        if (v != 306.f) return 6;
        return 0;
    });
    EXPECT_EQ(rc, 0);
}

TYPED_TEST(HostBackingConformance, WriteTagIsRefusedBeforeAnythingRunsOnlyForCow) {
    auto owner = TypeParam::create(64);
    const uint32_t shapes[1] = {16};
    const Tensor t = make_tensor(owner->descriptor(), shapes, DataType::FLOAT32);
    TaskArgs args;
    if (TypeParam::KIND == BackendKind::FORK_COW) {
        EXPECT_THROW(args.add_tensor(t, TensorArgType::OUTPUT_EXISTING), std::invalid_argument);
        EXPECT_EQ(args.tensor_count(), 0u);
        // Nor can a COW descriptor be built with a write grant.
        EXPECT_THROW(make_address_descriptor(owner->identity(), BackendKind::FORK_COW, AccessMode::READWRITE, 64,
                                             descriptor_address(owner->descriptor())),
                     std::invalid_argument);
        EXPECT_THROW(ForkOwner::create(BackendKind::FORK_COW, 64, AccessMode::READWRITE, nullptr, nullptr, 0),
                     std::invalid_argument);
    } else {
        EXPECT_NO_THROW(args.add_tensor(t, TensorArgType::OUTPUT_EXISTING));
    }
}

TYPED_TEST(HostBackingConformance, CloseRefusesWhileExportedThenSucceedsAndIsIdempotent) {
    auto owner = TypeParam::create(64);
    owner->add_export();
    EXPECT_THROW(owner->close(), ExportsAliveError);
    EXPECT_FALSE(owner->closed());
    EXPECT_NE(owner->data(), nullptr);
    owner->drop_export();
    EXPECT_NO_THROW(owner->close());
    EXPECT_TRUE(owner->closed());
    EXPECT_NO_THROW(owner->close());
    EXPECT_EQ(owner->data(), nullptr);
    EXPECT_FALSE(process_identity_minter().check_live(owner->identity()).live());
}

TYPED_TEST(HostBackingConformance, ConsumerThatAttachesAndExitsLeavesTheOwnerIntact) {
    auto owner = TypeParam::create(64);
    std::memset(owner->data(), 0x11, 64);
    const BufferDescriptor d = owner->descriptor();
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        reg.import_backing(d);
        reg.close();
        return 0;  // the child's copy of `owner` is never closed: it just exits
    });
    ASSERT_EQ(rc, 0);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(owner->data()[i], 0x11);
    owner->data()[0] = 0x22;  // still writable
    EXPECT_EQ(owner->data()[0], 0x22);
    // A second consumer can still attach.
    const int rc2 = test::run_in_child([&] {
        ImportRegistry reg;
        return reinterpret_cast<uint8_t*>(reg.import_backing(d).base)[0] == 0x22 ? 0 : 1;
    });
    EXPECT_EQ(rc2, 0);
}

TYPED_TEST(HostBackingConformance, ChildClosingItsCopyOfTheOwnerReleasesNothing) {
    auto owner = TypeParam::create(64);
    std::memset(owner->data(), 0x33, 64);
    const BufferDescriptor d = owner->descriptor();
    const int rc = test::run_in_child([&] {
        owner->close();  // the child's copy: unmaps there only
        return 0;
    });
    ASSERT_EQ(rc, 0);
    EXPECT_TRUE(process_identity_minter().check_live(d.identity).live());
    ImportRegistry reg;
    EXPECT_EQ(reinterpret_cast<uint8_t*>(reg.import_backing(d).base)[63], 0x33);
}

}  // namespace
}  // namespace simpler

namespace simpler {
namespace {

class OwnerCreation : public test::LeakCheckedTest {};

TEST_F(OwnerCreation, RefusedCreationReleasesItsIdentity) {
    IdentityMinter minter;
    watch(minter);
    EXPECT_THROW(PosixShmOwner::create(0, AccessMode::READWRITE, &minter), std::invalid_argument);
    EXPECT_THROW(PosixShmOwner::create(64, static_cast<AccessMode>(7), &minter), std::invalid_argument);
    EXPECT_THROW(ForkOwner::create(BackendKind::FORK_COW, 64, AccessMode::WRITE, &minter, nullptr, 0),
                 std::invalid_argument);
    EXPECT_EQ(minter.live_count(), 0u);
}

}  // namespace
}  // namespace simpler
