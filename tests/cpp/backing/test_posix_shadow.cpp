// PosixShmOwner::create_shadow: a host-local POSIX shm stand-in for a backing of
// another host keeps the source's identity, access, nbytes and owner path
// under a name of this process's own ("sp<nonce>-s<n>"), maps through an
// ImportRegistry like any shm object, is unlinked by close(), and neither
// mints nor releases an identity in the process minter.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstring>
#include <memory>
#include <string>

#include "process_fixture.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/backing/import_registry.h"
#include "simpler/backing/posix_shm_owner.h"
#include "simpler/backing/shm_name.h"

using namespace simpler;

namespace {

// A descriptor of another host's backing, as a remote task names it.
BufferDescriptor foreign_source(uint64_t nbytes, AccessMode access, uint64_t buffer_id = 17) {
    CanonicalIdentity id{};
    for (size_t i = 0; i < OWNER_INSTANCE_ID_BYTES; ++i) id.owner_instance_id[i] = static_cast<uint8_t>(0x5a ^ i);
    id.buffer_id = buffer_id;
    id.generation = 3;
    return make_buffer_descriptor(id, BackendKind::REMOTE_SIDECAR, AddressSpace::HOST, access, nbytes, {}, 41);
}

bool shm_exists(const std::string& name) {
    struct stat st{};
    return ::stat(("/dev/shm/" + name).c_str(), &st) == 0;
}

class PosixShadowTest : public test::LeakCheckedTest {};

TEST_F(PosixShadowTest, KeepsTheSourceIdentityUnderANameOfThisProcess) {
    for (AccessMode access : {AccessMode::READ, AccessMode::WRITE, AccessMode::READWRITE}) {
        const BufferDescriptor src = foreign_source(5000, access);
        auto shadow = PosixShmOwner::create_shadow(src);
        const BufferDescriptor& d = shadow->descriptor();
        EXPECT_TRUE(validate_buffer_descriptor(d).ok());
        EXPECT_EQ(d.identity, src.identity);
        EXPECT_EQ(d.access, static_cast<uint8_t>(access));
        EXPECT_EQ(d.nbytes, 5000u);
        EXPECT_EQ(d.owner_worker_path_id, 41u);
        EXPECT_EQ(shadow->backend(), BackendKind::POSIX_SHM);
        EXPECT_EQ(d.address_space, static_cast<uint8_t>(AddressSpace::HOST));
        const std::string prefix = test::shm_prefix_of(process_identity_minter());
        EXPECT_EQ(shadow->name().rfind(prefix + "-s", 0), 0u) << shadow->name() << " vs " << prefix;
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(d.body), d.body_len), shadow->name());
        // The owner maps it writable whatever it grants.
        ASSERT_NE(shadow->data(), nullptr);
        shadow->data()[4999] = 1;
        shadow->close();
    }
}

TEST_F(PosixShadowTest, TwoShadowsOfOneIdentityHaveDistinctNames) {
    const BufferDescriptor src = foreign_source(64, AccessMode::READWRITE);
    auto a = PosixShmOwner::create_shadow(src);
    auto b = PosixShmOwner::create_shadow(src);
    EXPECT_NE(a->name(), b->name());
    EXPECT_EQ(a->identity(), b->identity());
    EXPECT_TRUE(shm_exists(a->name()));
    EXPECT_TRUE(shm_exists(b->name()));
    a->data()[0] = 1;
    b->data()[0] = 2;
    EXPECT_EQ(a->data()[0], 1);  // two objects, not one
    a->close();
    EXPECT_FALSE(shm_exists(a->name()));
    EXPECT_TRUE(shm_exists(b->name()));
    b->close();
}

TEST_F(PosixShadowTest, AnImportRegistryMapsTheBytesTheOwnerWrote) {
    auto shadow = PosixShmOwner::create_shadow(foreign_source(4096, AccessMode::READWRITE));
    for (size_t i = 0; i < 4096; ++i) shadow->data()[i] = static_cast<uint8_t>(i * 7 + 1);
    {
        ImportRegistry registry;
        const ImportResult r = registry.try_import(shadow->descriptor());
        ASSERT_TRUE(r.ok()) << r.message;
        EXPECT_EQ(r.backing->nbytes, 4096u);
        EXPECT_TRUE(r.backing->mapped);
        const auto* bytes = reinterpret_cast<const uint8_t*>(r.backing->base);
        ASSERT_NE(bytes, shadow->data());  // a mapping of its own
        EXPECT_EQ(std::memcmp(bytes, shadow->data(), 4096), 0);
        // And the other way: a consumer's write reaches the owner.
        reinterpret_cast<uint8_t*>(r.backing->base)[100] = 0xab;
        EXPECT_EQ(shadow->data()[100], 0xab);
        registry.close();
    }
    shadow->close();
}

TEST_F(PosixShadowTest, CloseUnlinksTheObject) {
    auto shadow = PosixShmOwner::create_shadow(foreign_source(128, AccessMode::READ));
    const std::string name = shadow->name();
    ASSERT_TRUE(shm_exists(name));
    shadow->close();
    EXPECT_TRUE(shadow->closed());
    EXPECT_FALSE(shm_exists(name));
    ImportRegistry registry;
    EXPECT_EQ(registry.try_import(shadow->descriptor()).refusal, ImportRefusal::SHM_MISSING);
}

TEST_F(PosixShadowTest, TheDestructorUnlinksTooAndNothingIsLeftBehind) {
    std::string name;
    {
        auto shadow = PosixShmOwner::create_shadow(foreign_source(128, AccessMode::READWRITE));
        name = shadow->name();
        ASSERT_TRUE(shm_exists(name));
    }
    EXPECT_FALSE(shm_exists(name));
}

TEST_F(PosixShadowTest, NothingIsMintedOrReleasedInTheProcessMinter) {
    IdentityMinter& minter = process_identity_minter();
    // The source's identity is one this process minted and still holds: a
    // shadow that released its identity on close would end that holder's life.
    const CanonicalIdentity held = minter.mint();
    const size_t live = minter.live_count();
    const BufferDescriptor src =
        make_buffer_descriptor(held, BackendKind::REMOTE_SIDECAR, AddressSpace::HOST, AccessMode::READWRITE, 256, {});
    auto shadow = PosixShmOwner::create_shadow(src);
    EXPECT_EQ(minter.live_count(), live) << "create_shadow minted an identity";
    EXPECT_EQ(shadow->identity(), held);
    shadow->close();
    EXPECT_EQ(minter.live_count(), live) << "a shadow's close released an identity";
    EXPECT_TRUE(minter.check_live(held).live()) << "a shadow's close released its source's identity";
    // The next mint is a fresh slot: nothing was handed back for reuse.
    const CanonicalIdentity next = minter.mint();
    EXPECT_NE(next.buffer_id, held.buffer_id);
    EXPECT_TRUE(minter.release(next));
    EXPECT_TRUE(minter.release(held));
}

TEST_F(PosixShadowTest, AZeroByteSourceIsRefused) {
    // make_buffer_descriptor refuses nbytes 0 itself; a raw one reaches create_shadow's own check.
    BufferDescriptor src = foreign_source(64, AccessMode::READWRITE);
    src.nbytes = 0;
    EXPECT_THROW((void)PosixShmOwner::create_shadow(src), std::invalid_argument);
}

}  // namespace
