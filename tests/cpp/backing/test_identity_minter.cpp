#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "process_fixture.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/backing/shm_name.h"
#include "simpler/task_interface/buffer.h"

namespace simpler {
namespace {

TEST(IdentityMinter, FirstIdentityIsBufferOneGenerationOne) {
    IdentityMinter m;
    const CanonicalIdentity a = m.mint();
    const CanonicalIdentity b = m.mint();
    EXPECT_EQ(a.buffer_id, 1u);
    EXPECT_EQ(a.generation, 1u);
    EXPECT_EQ(b.buffer_id, 2u);
    EXPECT_EQ(std::memcmp(a.owner_instance_id, b.owner_instance_id, OWNER_INSTANCE_ID_BYTES), 0);
}

TEST(IdentityMinter, NonceIsNonZeroAndDiffersBetweenMinters) {
    IdentityMinter a, b;
    EXPECT_NE(a.nonce(), OwnerNonce{});
    EXPECT_NE(a.nonce(), b.nonce());
}

TEST(IdentityMinter, ReusedSlotBumpsGeneration) {
    IdentityMinter m;
    const CanonicalIdentity first = m.mint();
    ASSERT_TRUE(m.release(first));
    const CanonicalIdentity second = m.mint();
    EXPECT_EQ(second.buffer_id, first.buffer_id);
    EXPECT_EQ(second.generation, first.generation + 1);
    EXPECT_FALSE(first == second);
}

TEST(IdentityMinter, StaleGenerationIsNotLiveAndTheMessageNamesIt) {
    IdentityMinter m;
    const CanonicalIdentity first = m.mint();
    m.release(first);
    const CanonicalIdentity second = m.mint();
    const Liveness l = m.check_live(first);
    EXPECT_EQ(l.status, LivenessStatus::STALE_GENERATION);
    EXPECT_EQ(l.current_generation, 2u);
    EXPECT_NE(describe_liveness(first, l).find("generation 1"), std::string::npos);
    EXPECT_TRUE(m.check_live(second).live());
}

TEST(IdentityMinter, ReleasedIdentityReportsReleased) {
    IdentityMinter m;
    const CanonicalIdentity id = m.mint();
    m.release(id);
    EXPECT_EQ(m.check_live(id).status, LivenessStatus::RELEASED);
    EXPECT_FALSE(m.release(id));
}

TEST(IdentityMinter, ForeignAndUnknownIdentitiesAreNotLive) {
    IdentityMinter a, b;
    const CanonicalIdentity id = a.mint();
    EXPECT_EQ(b.check_live(id).status, LivenessStatus::NOT_MINTED_HERE);
    CanonicalIdentity unknown = id;
    unknown.buffer_id = 99;
    EXPECT_EQ(a.check_live(unknown).status, LivenessStatus::UNKNOWN_BUFFER);
    CanonicalIdentity future = id;
    future.generation = 7;
    EXPECT_EQ(a.check_live(future).status, LivenessStatus::FUTURE_GENERATION);
}

TEST(IdentityMinter, ForkedChildMintsUnderItsOwnNonce) {
    IdentityMinter m;
    const OwnerNonce parent = m.nonce();
    m.mint();
    const int rc = test::run_in_child([&] {
        const CanonicalIdentity child_id = m.mint();
        OwnerNonce got{};
        std::memcpy(got.data(), child_id.owner_instance_id, got.size());
        if (got == parent) return 1;
        if (child_id.buffer_id != 1) return 2;  // a fresh slot table
        return 0;
    });
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(m.nonce(), parent);
}

TEST(ShmTag, FourLowercaseHexDigitsAreTheTagsTwoBytes) {
    EXPECT_EQ(parse_shm_tag("0a9f"), (ShmTag{0x0a, 0x9f}));
    for (const char* bad : {"", "0a9", "0a9f0", "0A9F", "0a9g", " a9f", "0a9\n"}) {
        try {
            parse_shm_tag(bad);
            ADD_FAILURE() << "'" << bad << "' was taken";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("SIMPLER_SHM_TAG='"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("4 lowercase hex digits"), std::string::npos) << e.what();
        }
    }
}

// In a child: the environment it changes is its own.
TEST(ShmTag, EveryNonceDrawnUnderTheVariableStartsWithTheTagAndItsNamesWithSpAndTheTag) {
    const int rc = test::run_in_child([] {
        if (setenv(SHM_TAG_VARIABLE, "c0de", 1) != 0) return 1;
        IdentityMinter m;
        const CanonicalIdentity id = m.mint();
        if (id.owner_instance_id[0] != 0xc0 || id.owner_instance_id[1] != 0xde) return 2;
        if (shm_name_for(id)->rfind("spc0de", 0) != 0) return 3;
        IdentityMinter other;  // the other six bytes are still drawn
        if (other.nonce() == m.nonce()) return 4;
        const int grandchild = test::run_in_child([&] {  // a fork redraws under the same tag
            const OwnerNonce n = m.nonce();
            return n[0] == 0xc0 && n[1] == 0xde && std::memcmp(n.data(), id.owner_instance_id, n.size()) != 0 ? 0 : 1;
        });
        if (grandchild != 0) return 5;
        if (setenv(SHM_TAG_VARIABLE, "", 1) != 0 || shm_tag_from_environment().has_value()) return 6;
        return 0;
    });
    EXPECT_EQ(rc, 0);
}

TEST(ShmTag, AMalformedVariableRefusesTheMintAndChangesNothing) {
    const int rc = test::run_in_child([] {
        if (setenv(SHM_TAG_VARIABLE, "C0DE", 1) != 0) return 1;
        IdentityMinter m;
        try {
            m.mint();
            return 2;
        } catch (const std::invalid_argument&) {}
        if (unsetenv(SHM_TAG_VARIABLE) != 0) return 3;
        return m.mint().buffer_id == 1 ? 0 : 4;  // nothing was minted by the refused call
    });
    EXPECT_EQ(rc, 0);
}

TEST(ShmName, DerivedNameFitsTheDescriptorBodyRule) {
    CanonicalIdentity id{};
    std::memset(id.owner_instance_id, 0xab, OWNER_INSTANCE_ID_BYTES);
    id.buffer_id = 0xFFFFFFFFull;
    id.generation = 0xFFFF;
    const auto name = shm_name_for(id);
    ASSERT_TRUE(name.has_value());
    EXPECT_LE(name->size(), 32u);
    EXPECT_EQ(name->rfind("spabababab", 0), 0u);
    EXPECT_EQ(name->find('/'), std::string::npos);
    EXPECT_NO_THROW(make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READ, 8,
                                           {reinterpret_cast<const uint8_t*>(name->data()), name->size()}));
}

TEST(ShmName, IdentityTooLargeForANameIsRefused) {
    CanonicalIdentity id{};
    id.buffer_id = 0x100000000ull;
    id.generation = 1;
    EXPECT_FALSE(shm_name_for(id).has_value());
    id.buffer_id = 1;
    id.generation = 0x10000;
    EXPECT_FALSE(shm_name_for(id).has_value());
}

}  // namespace
}  // namespace simpler

namespace simpler {
namespace {

TEST(IdentityMinter, ConcurrentMintAndReleaseNeverHandOutOneIdentityTwice) {
    IdentityMinter m;
    constexpr int THREADS = 4, ROUNDS = 2000;
    std::vector<std::vector<CanonicalIdentity>> held(THREADS);
    std::vector<std::thread> ts;
    for (int t = 0; t < THREADS; ++t)
        ts.emplace_back([&m, &held, t] {
            for (int r = 0; r < ROUNDS; ++r) {
                const CanonicalIdentity id = m.mint();
                if (r % 2 == 0)
                    m.release(id);
                else
                    held[t].push_back(id);
            }
        });
    for (auto& th : ts) th.join();
    std::unordered_set<CanonicalIdentity> live;
    for (const auto& v : held)
        for (const CanonicalIdentity& id : v) EXPECT_TRUE(live.insert(id).second) << id.to_string();
    EXPECT_EQ(m.live_count(), live.size());
}

}  // namespace
}  // namespace simpler
