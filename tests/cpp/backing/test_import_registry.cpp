#include <gtest/gtest.h>

#include <cstring>
#include <sys/mman.h>

#include "process_fixture.h"
#include "simpler/backing/device_owner_table.h"
#include "simpler/backing/device_wrappers.h"
#include "simpler/backing/fork_owner.h"
#include "simpler/backing/fork_region_table.h"
#include "simpler/backing/import_registry.h"
#include "simpler/backing/owner_path_table.h"
#include "simpler/backing/posix_shm_owner.h"

namespace simpler {
namespace {

class ImportRegistryTest : public test::LeakCheckedTest {};

ImportRefusal refusal_of(ImportRegistry& reg, const BufferDescriptor& d) { return reg.try_import(d).refusal; }

void expect_refused(ImportRegistry& reg, const BufferDescriptor& d, ImportRefusal want, const std::string& text) {
    const ImportResult r = reg.try_import(d);
    EXPECT_EQ(r.refusal, want) << import_refusal_name(r.refusal) << ": " << r.message;
    EXPECT_NE(r.message.find(text), std::string::npos) << r.message;
    try {
        reg.import_backing(d);
        ADD_FAILURE() << "import_backing did not throw";
    } catch (const ImportRefused& e) {
        EXPECT_EQ(e.refusal(), want);
    }
}

BufferDescriptor with_nbytes(const BufferDescriptor& d, uint64_t nbytes) {
    return make_buffer_descriptor(d.identity, static_cast<BackendKind>(d.backend_kind),
                                  static_cast<AddressSpace>(d.address_space), static_cast<AccessMode>(d.access), nbytes,
                                  {d.body, d.body_len});
}

TEST_F(ImportRegistryTest, ThousandReceiptsOfOneDescriptorMapOnce) {
    auto owner = PosixShmOwner::create(4096);
    const BufferDescriptor d = owner->descriptor();
    const int rc = test::run_in_child([&] {
        int mmaps = 0;
        ImportRegistryConfig cfg;
        cfg.syscalls.mmap = [&mmaps](void* a, size_t n, int prot, int flags, int fd, off_t off) {
            ++mmaps;
            return ::mmap(a, n, prot, flags, fd, off);
        };
        ImportRegistry reg(cfg);
        const uint64_t first = reg.import_backing(d).base;
        for (int i = 1; i < 1000; ++i)
            if (reg.import_backing(d).base != first) return 1;  // the same mapping every time
        if (mmaps != 1) return 2;
        if (reg.stats().maps != 1 || reg.stats().receipts != 1000 || reg.stats().hits != 999) return 3;
        return 0;
    });
    EXPECT_EQ(rc, 0);
}

TEST_F(ImportRegistryTest, DifferentDescriptorUnderAKnownIdentityIsRefused) {
    auto owner = PosixShmOwner::create(4096);
    ImportRegistry reg;
    reg.import_backing(owner->descriptor());
    expect_refused(reg, with_nbytes(owner->descriptor(), 1024), ImportRefusal::DESCRIPTOR_MISMATCH,
                   "different descriptor");
}

TEST_F(ImportRegistryTest, ShmSmallerThanNbytesIsRefused) {
    auto owner = PosixShmOwner::create(4096);
    ImportRegistry reg;
    expect_refused(reg, with_nbytes(owner->descriptor(), 8192), ImportRefusal::SHM_TOO_SMALL,
                   "smaller than nbytes 8192");
    EXPECT_EQ(reg.stats().maps, 0u);
}

TEST_F(ImportRegistryTest, MissingShmIsRefusedNamingTheGeneration) {
    auto owner = PosixShmOwner::create(64);
    const BufferDescriptor d = owner->descriptor();
    owner->close();
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        const ImportResult r = reg.try_import(d);
        if (r.refusal != ImportRefusal::SHM_MISSING) return 1;
        const std::string gen = "generation " + std::to_string(d.identity.generation);
        return r.message.find(gen) != std::string::npos ? 0 : 2;
    });
    EXPECT_EQ(rc, 0);
}

TEST_F(ImportRegistryTest, StaleDescriptorOfAReusedSlotIsRefusedNamingTheGeneration) {
    IdentityMinter minter;
    watch(minter);
    auto first = PosixShmOwner::create(64, AccessMode::READWRITE, &minter);
    const BufferDescriptor stale = first->descriptor();
    first->close();
    auto second = PosixShmOwner::create(64, AccessMode::READWRITE, &minter);
    ASSERT_EQ(second->identity().buffer_id, stale.identity.buffer_id);
    ASSERT_EQ(second->identity().generation, 2u);
    // Refused by its owner: the owner's minter knows the slot moved on.
    {
        ImportRegistryConfig cfg;
        cfg.owner_minter = &minter;
        ImportRegistry reg(cfg);
        expect_refused(reg, stale, ImportRefusal::STALE_GENERATION, "generation 1");
    }
    // Refused by a consumer that has seen the newer generation.
    const BufferDescriptor live = second->descriptor();
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        reg.import_backing(live);
        const ImportResult r = reg.try_import(stale);
        if (r.refusal != ImportRefusal::STALE_GENERATION) return 1;
        return r.message.find("generation 1") != std::string::npos ? 0 : 2;
    });
    EXPECT_EQ(rc, 0);
}

TEST_F(ImportRegistryTest, NewerGenerationEvictsTheOlderMapping) {
    IdentityMinter minter;
    watch(minter);
    auto first = PosixShmOwner::create(64, AccessMode::READWRITE, &minter);
    const BufferDescriptor old_d = first->descriptor();
    ImportRegistryConfig cfg;
    cfg.owner_minter = &minter;
    ImportRegistry reg(cfg);
    reg.import_backing(old_d);
    first->close();
    auto second = PosixShmOwner::create(64, AccessMode::READWRITE, &minter);
    reg.import_backing(second->descriptor());
    EXPECT_EQ(reg.size(), 1u);
    EXPECT_EQ(reg.stats().unmaps, 1u);
    EXPECT_EQ(refusal_of(reg, old_d), ImportRefusal::STALE_GENERATION);
}

TEST_F(ImportRegistryTest, UnregisteredGenerationIsRefusedAfterwards) {
    auto owner = PosixShmOwner::create(64);
    ImportRegistry reg;
    reg.import_backing(owner->descriptor());
    EXPECT_TRUE(reg.unregister(owner->identity()));
    EXPECT_EQ(reg.stats().unmaps, 1u);
    EXPECT_FALSE(reg.unregister(owner->identity()));
    expect_refused(reg, owner->descriptor(), ImportRefusal::STALE_GENERATION, "was released");
}

TEST_F(ImportRegistryTest, DeviceBackingIsRefusedOnAHostEndpoint) {
    DeviceOwnerTable owners;
    const DeviceBacking b =
        wrap_device_pointer(BackendKind::DEVICE_MALLOC, 0x1000, 256, AccessMode::READWRITE, 0, owners);
    ImportRegistryConfig cfg;
    cfg.device_owners = &owners;
    ImportRegistry reg(cfg);
    expect_refused(reg, b.descriptor, ImportRefusal::DEVICE_ON_HOST, "host endpoint");
    release_device_backing(b, owners);
}

TEST_F(ImportRegistryTest, DeviceBackingResolvesOnlyOnItsOwnerChip) {
    DeviceOwnerTable owners;
    const DeviceBacking b =
        wrap_device_pointer(BackendKind::DEVICE_MALLOC, 0x2000, 256, AccessMode::READWRITE, 1, owners);
    ImportRegistryConfig on_owner;
    on_owner.endpoint = Endpoint::chip(1);
    on_owner.device_owners = &owners;
    ImportRegistry owner_reg(on_owner);
    EXPECT_EQ(owner_reg.import_backing(b.descriptor).base, 0x2000u);
    EXPECT_EQ(owner_reg.stats().maps, 0u);

    ImportRegistryConfig on_other = on_owner;
    on_other.endpoint = Endpoint::chip(0);
    ImportRegistry other_reg(on_other);
    expect_refused(other_reg, b.descriptor, ImportRefusal::DEVICE_WRONG_CHIP, "owned by chip 1");

    ImportRegistryConfig no_table;
    no_table.endpoint = Endpoint::chip(1);
    ImportRegistry blind(no_table);
    expect_refused(blind, b.descriptor, ImportRefusal::DEVICE_OWNER_UNKNOWN, "no owner chip");
    release_device_backing(b, owners);
}

TEST_F(ImportRegistryTest, WindowBackingResolvesOnAnyChipWhoseWindowHeapsHoldIt) {
    DeviceOwnerTable owners;
    const DeviceBacking b = wrap_device_pointer(BackendKind::VMM_WINDOW, 0x2000, 256, AccessMode::READWRITE, 1, owners);
    ImportRegistryConfig on_peer;
    on_peer.endpoint = Endpoint::chip(0);  // not the owner: a peer of the domain
    on_peer.window_range = [](uint64_t addr, uint64_t nbytes) { return addr >= 0x1000 && addr + nbytes <= 0x3000; };
    ImportRegistry peer(on_peer);
    EXPECT_EQ(peer.import_backing(b.descriptor).base, 0x2000u);
    EXPECT_EQ(peer.stats().maps, 0u);

    ImportRegistryConfig narrow = on_peer;
    narrow.window_range = [](uint64_t addr, uint64_t nbytes) { return addr >= 0x1000 && addr + nbytes <= 0x2080; };
    ImportRegistry outside(narrow);
    expect_refused(outside, b.descriptor, ImportRefusal::WINDOW_OUTSIDE, "outside the window heaps of chip 0");

    ImportRegistryConfig none;
    none.endpoint = Endpoint::chip(1);
    ImportRegistry blind(none);
    expect_refused(blind, b.descriptor, ImportRefusal::WINDOW_OUTSIDE, "outside the window heaps of chip 1");

    ImportRegistryConfig host = on_peer;
    host.endpoint = Endpoint::host();
    ImportRegistry on_host(host);
    expect_refused(on_host, b.descriptor, ImportRefusal::DEVICE_ON_HOST, "cannot resolve on a host endpoint");
    release_device_backing(b, owners);
}

TEST_F(ImportRegistryTest, RemoteSidecarIsNotSupportedHere) {
    CanonicalIdentity id = process_identity_minter().mint();
    const BufferDescriptor d =
        make_buffer_descriptor(id, BackendKind::REMOTE_SIDECAR, AddressSpace::HOST, AccessMode::READ, 64, {});
    ImportRegistry reg;
    expect_refused(reg, d, ImportRefusal::REMOTE_UNSUPPORTED, "not supported here");
    process_identity_minter().release(id);
}

TEST_F(ImportRegistryTest, ForkAddressOutsideAPreForkRegionIsRefused) {
    CanonicalIdentity id = process_identity_minter().mint();
    const BufferDescriptor d = make_address_descriptor(id, BackendKind::FORK_SHM, AccessMode::READWRITE, 64, 0x4000);
    ImportRegistry reg;
    expect_refused(reg, d, ImportRefusal::NOT_A_FORK_REGION, "not a pre-fork region");
    process_identity_minter().release(id);
}

TEST_F(ImportRegistryTest, ForkRegionCreatedAfterTheForkIsRefusedInTheChild) {
    // The child is forked before the region exists and learns its descriptor
    // through a pipe afterwards: the address means nothing in the child.
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(pipefd[1]);
        BufferDescriptor d{};
        if (read(pipefd[0], &d, sizeof d) != static_cast<ssize_t>(sizeof d)) _exit(1);
        ImportRegistry reg;
        _exit(reg.try_import(d).refusal == ImportRefusal::NOT_A_FORK_REGION ? 0 : 2);
    }
    close(pipefd[0]);
    auto owner = ForkOwner::create_shared(64);
    const BufferDescriptor d = owner->descriptor();
    ASSERT_EQ(write(pipefd[1], &d, sizeof d), static_cast<ssize_t>(sizeof d));
    close(pipefd[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(ImportRegistryTest, InvalidDescriptorIsRefusedBeforeAnyFieldIsUsed) {
    auto owner = PosixShmOwner::create(64);
    BufferDescriptor d = owner->descriptor();
    d.magic = 0;
    ImportRegistry reg;
    expect_refused(reg, d, ImportRefusal::INVALID_DESCRIPTOR, "magic");
}

TEST_F(ImportRegistryTest, ClosedRegistryRefusesAndCloseIsIdempotent) {
    auto owner = PosixShmOwner::create(64);
    ImportRegistry reg;
    reg.import_backing(owner->descriptor());
    reg.close();
    reg.close();
    EXPECT_EQ(reg.stats().unmaps, 1u);
    expect_refused(reg, owner->descriptor(), ImportRefusal::REGISTRY_CLOSED, "closed");
}

TEST_F(ImportRegistryTest, MaterializeArgsFillsChipStorage) {
    auto owner = PosixShmOwner::create(1024);
    const BufferDescriptor d = owner->descriptor();
    const uint32_t shapes[2] = {4, 8};
    const Tensor a = make_tensor(d, shapes, DataType::FLOAT16, {}, 64);
    const Tensor b = make_tensor(d, shapes, DataType::FLOAT32, {}, 512);
    const Tensor tensors[2] = {a, b};
    const uint64_t scalars[1] = {42};
    ImportRegistry reg;
    auto out = std::make_unique<ChipStorageTaskArgs>();
    reg.materialize_args(tensors, scalars, *out);
    ASSERT_EQ(out->tensor_count, 2);
    ASSERT_EQ(out->scalar_count, 1);
    EXPECT_EQ(out->scalars[0], 42u);
    const uint64_t base = reg.import_backing(d).base;
    EXPECT_EQ(out->tensors[0].buffer.addr, base);
    EXPECT_EQ(out->tensors[1].buffer.addr, base);  // every view keeps the backing's addr
    EXPECT_EQ(out->tensors[0].buffer.size, 1024u);
    EXPECT_EQ(out->tensors[0].start_offset, 32u);   // 64 B / 2
    EXPECT_EQ(out->tensors[1].start_offset, 128u);  // 512 B / 4
    EXPECT_EQ(out->tensors[1].strides[0], 8u);
    EXPECT_EQ(out->tensors[0].address_space, static_cast<uint8_t>(AddressSpace::HOST));
    EXPECT_TRUE(validate_chip_tensor(out->tensors[1]).ok());
    EXPECT_EQ(reg.stats().maps, 1u);
}

TEST_F(ImportRegistryTest, MappedArgIsReadOnlyForReadGrants) {
    auto ro = PosixShmOwner::create(64, AccessMode::READ);
    auto rw = PosixShmOwner::create(64, AccessMode::READWRITE);
    const uint32_t shapes[1] = {4};
    ImportRegistry reg;
    const MappedArg a = reg.map_arg(make_tensor(ro->descriptor(), shapes, DataType::INT32, {}, 16));
    const MappedArg b = reg.map_arg(make_tensor(rw->descriptor(), shapes, DataType::INT32));
    EXPECT_TRUE(a.read_only);
    EXPECT_FALSE(b.read_only);
    EXPECT_EQ(a.view_nbytes, 16u);
    EXPECT_EQ(a.byte_offset, 16u);
    EXPECT_EQ(a.data, reinterpret_cast<uint8_t*>(reg.import_backing(ro->descriptor()).base) + 16);
    EXPECT_EQ(a.identity, ro->identity());
}

TEST_F(ImportRegistryTest, ReexportKeepsTheIdentityAndMapsNothing) {
    auto owner = PosixShmOwner::create(256);
    const uint32_t shapes[1] = {8};
    const Tensor t = make_tensor(owner->descriptor(), shapes, DataType::FLOAT32, {}, 32);
    ImportRegistry reg;
    const Tensor fwd = reg.reexport(t);
    EXPECT_EQ(fwd.buffer.identity, t.buffer.identity);
    EXPECT_TRUE(fwd == t);
    EXPECT_EQ(reg.stats().maps, 0u);
    EXPECT_EQ(reg.size(), 0u);
    EXPECT_EQ(reg.stats().reexports, 1u);
}

TEST(OwnerPathTable, InternsFromOneAndRendersForeignIdsAsPlaceholders) {
    OwnerPathTable paths;
    IdentityMinter minter, other;
    EXPECT_EQ(paths.intern("l3/chip[0]"), 1u);
    EXPECT_EQ(paths.intern("l3/sub[1]"), 2u);
    EXPECT_EQ(paths.intern("l3/chip[0]"), 1u);
    EXPECT_EQ(paths.render(2), "l3/sub[1]");
    EXPECT_EQ(paths.render(9), "<path#9>");
    auto mine = PosixShmOwner::create(8, AccessMode::READWRITE, &minter, 1);
    auto theirs = PosixShmOwner::create(8, AccessMode::READWRITE, &other, 1);
    EXPECT_EQ(paths.render(mine->descriptor(), minter), "l3/chip[0]");
    EXPECT_EQ(paths.render(theirs->descriptor(), minter), "<path#1>");
}

}  // namespace
}  // namespace simpler

namespace simpler {
namespace {

TEST_F(ImportRegistryTest, LiveExportsBlockUnregisterAndCloseUntilDropped) {
    auto owner = PosixShmOwner::create(64);
    ImportRegistry reg;
    reg.import_backing(owner->descriptor());
    reg.add_export(owner->identity());
    EXPECT_THROW(reg.unregister(owner->identity()), ExportsAliveError);
    EXPECT_THROW(reg.close(), ExportsAliveError);
    EXPECT_EQ(reg.size(), 1u);
    EXPECT_FALSE(reg.closed());
    reg.drop_export(owner->identity());
    EXPECT_NO_THROW(reg.close());
    EXPECT_EQ(reg.stats().unmaps, 1u);
}

}  // namespace
}  // namespace simpler

namespace simpler {
namespace {

TEST_F(ImportRegistryTest, ForkOwnerRefusesToCloseWhileThisProcessImportsIt) {
    auto owner = ForkOwner::create_shared(64);
    ImportRegistry reg;
    reg.import_backing(owner->descriptor());
    EXPECT_THROW(owner->close(), ExportsAliveError);
    EXPECT_FALSE(owner->closed());
    reg.close();
    EXPECT_NO_THROW(owner->close());
}

TEST_F(ImportRegistryTest, ChildImportsDoNotPinTheParentsRegion) {
    auto owner = ForkOwner::create_shared(64);
    const BufferDescriptor d = owner->descriptor();
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        reg.import_backing(d);
        return 0;
    });
    ASSERT_EQ(rc, 0);
    EXPECT_EQ(process_fork_regions().pins(d.identity), 0u);
    EXPECT_NO_THROW(owner->close());
}

}  // namespace
}  // namespace simpler
