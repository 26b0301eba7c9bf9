// ImportRegistry::forget, how an owner's free reaches a consumer: the entry
// goes and a late descriptor of that generation is refused; a mapping a host
// export still refers to stays mapped (out of the cache) until the last export
// goes, and close() refuses meanwhile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "process_fixture.h"
#include "simpler/backing/import_registry.h"
#include "simpler/backing/posix_shm_owner.h"

namespace simpler {
namespace {

class ImportForgetTest : public test::LeakCheckedTest {};

Tensor bytes_of(const BufferDescriptor& d, uint32_t n) {
    const uint32_t shapes[] = {n}, strides[] = {1};
    return make_tensor(d, shapes, DataType::UINT8, strides, 0);
}

bool holds(const ImportRegistry& reg, const CanonicalIdentity& id) {
    const std::vector<CanonicalIdentity> ids = reg.identities();
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST_F(ImportForgetTest, ForgetDropsTheEntryAndRefusesTheGenerationLater) {
    auto owner = PosixShmOwner::create(64);
    ImportRegistry reg;
    reg.import_backing(owner->descriptor());
    ASSERT_TRUE(holds(reg, owner->identity()));
    EXPECT_TRUE(reg.forget(owner->identity()));
    EXPECT_FALSE(holds(reg, owner->identity()));
    EXPECT_EQ(reg.size(), 0u);
    EXPECT_EQ(reg.stats().unmaps, 1u);
    EXPECT_EQ(reg.kept_for_exports(), 0u);
    EXPECT_FALSE(reg.forget(owner->identity()));
    const ImportResult late = reg.try_import(owner->descriptor());
    EXPECT_EQ(late.refusal, ImportRefusal::STALE_GENERATION) << late.message;
}

TEST_F(ImportForgetTest, ForgetOfANeverImportedIdentityStillRefusesItLater) {
    auto owner = PosixShmOwner::create(64);
    ImportRegistry reg;
    EXPECT_FALSE(reg.forget(owner->identity()));
    EXPECT_EQ(reg.try_import(owner->descriptor()).refusal, ImportRefusal::STALE_GENERATION);
}

TEST_F(ImportForgetTest, AnExportedMappingOutlivesTheForgetUntilItsLastExport) {
    auto owner = PosixShmOwner::create(64);
    std::memset(owner->data(), 0x5a, 64);
    ImportRegistry reg;
    const MappedArg arg = reg.map_arg(bytes_of(owner->descriptor(), 64));
    reg.add_export(owner->identity());
    reg.add_export(owner->identity());
    EXPECT_TRUE(reg.forget(owner->identity()));  // never refuses
    EXPECT_FALSE(holds(reg, owner->identity()));
    EXPECT_EQ(reg.kept_for_exports(), 1u);
    EXPECT_EQ(reg.stats().unmaps, 0u);
    owner->close();  // the owner's bytes go; the consumer's mapping keeps its pages
    EXPECT_EQ(static_cast<const uint8_t*>(arg.data)[63], 0x5a);
    EXPECT_THROW(reg.close(), ExportsAliveError);
    reg.drop_export(owner->identity());
    EXPECT_EQ(reg.kept_for_exports(), 1u);
    EXPECT_EQ(reg.stats().unmaps, 0u);
    reg.drop_export(owner->identity());
    EXPECT_EQ(reg.kept_for_exports(), 0u);
    EXPECT_EQ(reg.stats().unmaps, 1u);
    reg.close();
}

TEST_F(ImportForgetTest, UnregisterStillRefusesWhileExported) {
    auto owner = PosixShmOwner::create(64);
    ImportRegistry reg;
    reg.import_backing(owner->descriptor());
    reg.add_export(owner->identity());
    EXPECT_THROW(reg.unregister(owner->identity()), ExportsAliveError);
    EXPECT_TRUE(holds(reg, owner->identity()));
    reg.drop_export(owner->identity());
}

}  // namespace
}  // namespace simpler
