// OwnedBackingTable: a descriptor agrees with its owner's record or is refused
// naming what disagrees; foreign descriptors pass unless they name this
// process's bytes.
#include "simpler/backing/owned_backing_table.h"

#include <gtest/gtest.h>

#include <cstring>

#include "simpler/backing/fork_owner.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/backing/posix_shm_owner.h"

using namespace simpler;

namespace {

BufferDescriptor with_identity(BufferDescriptor d, const CanonicalIdentity& id) {
    d.identity = id;
    return d;
}

CanonicalIdentity foreign(uint64_t buffer_id) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x5a, sizeof c.owner_instance_id);
    c.buffer_id = buffer_id;
    c.generation = 1;
    return c;
}

}  // namespace

TEST(OwnedBackingTable, AnOwnersOwnDescriptorAndANarrowerGrantPass) {
    auto h = PosixShmOwner::create(256);
    EXPECT_EQ(process_owned_backings().problem(h->descriptor()), "");
    BufferDescriptor narrower = h->descriptor();
    narrower.access = static_cast<uint8_t>(AccessMode::READ);
    EXPECT_EQ(process_owned_backings().problem(narrower), "");
}

TEST(OwnedBackingTable, AWiderGrantOrAnotherSizeIsRefused) {
    auto h = ForkOwner::create_shared(256, AccessMode::READ);
    BufferDescriptor wider = h->descriptor();
    wider.access = static_cast<uint8_t>(AccessMode::READWRITE);
    EXPECT_EQ(
        process_owned_backings().problem(wider),
        "the descriptor grants READWRITE, but its owner granted READ (FORK_SHM, base address 0x" +
            [&] {
                char hex[24];
                std::snprintf(hex, sizeof hex, "%llx",
                              static_cast<unsigned long long>(descriptor_address(h->descriptor())));
                return std::string(hex);
            }() +
            ", 256 B, grants READ)");
    BufferDescriptor bigger = h->descriptor();
    bigger.nbytes = 512;
    EXPECT_NE(process_owned_backings().problem(bigger).find("disagrees with its owner's record (FORK_SHM"),
              std::string::npos);
}

TEST(OwnedBackingTable, AnInventedIdentityOverRealBytesIsRefusedAndAForeignOneElsewherePasses) {
    auto h = PosixShmOwner::create(256);
    const std::string why = process_owned_backings().problem(with_identity(h->descriptor(), foreign(1)));
    EXPECT_NE(why.find("belongs to buffer " + h->identity().to_string()), std::string::npos) << why;
    BufferDescriptor elsewhere = with_identity(h->descriptor(), foreign(2));
    std::memcpy(elsewhere.body, "spelsewhere", 11);
    elsewhere.body_len = 11;
    std::memset(elsewhere.body + 11, 0, DESC_MAX_BYTES - 11);
    EXPECT_EQ(process_owned_backings().problem(elsewhere), "");
}

TEST(OwnedBackingTable, AnUnknownOrClosedIdentityOfThisIncarnationIsRefused) {
    auto h = PosixShmOwner::create(256);
    const BufferDescriptor d = h->descriptor();
    CanonicalIdentity never = d.identity;
    never.buffer_id = 100000;
    // The real name with the wrong identity names another buffer's bytes...
    EXPECT_NE(process_owned_backings().problem(with_identity(d, never)).find("belongs to buffer"), std::string::npos);
    // ...and any other name under an identity this incarnation never minted is refused by the minter.
    BufferDescriptor invented = with_identity(d, never);
    invented.body[invented.body_len - 1] ^= 1;
    EXPECT_NE(process_owned_backings().problem(invented).find("was never minted"), std::string::npos);
    h->close();
    EXPECT_NE(process_owned_backings().problem(d).find("was released"), std::string::npos);
    EXPECT_FALSE(process_owned_backings().contains(d.identity));
}
