// NodePool: a freed block is the next one of its size class, classes do not
// mix, big or over-aligned requests pass to the upstream resource and come
// back to it, chunks are taken whole and returned at destruction, and the
// pool serves a node-based container as any memory resource would.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <set>

#include "simpler/deps/node_pool.h"

using simpler::NodePool;

namespace {

// Counts what passes to the upstream resource (new/delete underneath).
class CountingResource final : public std::pmr::memory_resource {
public:
    size_t live_bytes = 0;
    size_t allocations = 0;

private:
    void* do_allocate(size_t bytes, size_t alignment) override {
        live_bytes += bytes;
        ++allocations;
        return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    }
    void do_deallocate(void* p, size_t bytes, size_t alignment) override {
        live_bytes -= bytes;
        std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    }
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }
};

}  // namespace

TEST(NodePool, AFreedBlockIsTheNextOfItsClassAndClassesDoNotMix) {
    CountingResource up;
    NodePool pool(&up);
    void* a = pool.allocate(40, 8);
    void* b = pool.allocate(48, 8);  // 33..48 bytes: the same class as 40
    void* c = pool.allocate(64, 8);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % NodePool::STEP, 0u);
    EXPECT_NE(a, b);
    pool.deallocate(a, 40, 8);
    void* d = pool.allocate(64, 8);
    EXPECT_NE(d, a);                     // another class: not the freed 48-byte block
    EXPECT_EQ(pool.allocate(33, 8), a);  // its own class: the block just freed
    pool.deallocate(d, 64, 8);
    pool.deallocate(a, 33, 8);
    pool.deallocate(b, 48, 8);
    pool.deallocate(c, 64, 8);
    EXPECT_EQ(up.allocations, 1u);  // one chunk served them all
    EXPECT_EQ(pool.chunk_bytes(), NodePool::CHUNK);
}

TEST(NodePool, BigAndOverAlignedRequestsGoUpstreamAndBack) {
    CountingResource up;
    NodePool pool(&up);
    void* big = pool.allocate(NodePool::MAX_POOLED + 1, 8);
    EXPECT_EQ(up.live_bytes, NodePool::MAX_POOLED + 1);
    void* aligned = pool.allocate(64, 64);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 64, 0u);
    EXPECT_EQ(up.live_bytes, NodePool::MAX_POOLED + 1 + 64);
    pool.deallocate(big, NodePool::MAX_POOLED + 1, 8);
    pool.deallocate(aligned, 64, 64);
    EXPECT_EQ(up.live_bytes, 0u);
    EXPECT_EQ(pool.chunk_bytes(), 0u);
}

TEST(NodePool, ChunksAreTakenWholeAndReturnedAtDestruction) {
    CountingResource up;
    {
        NodePool pool(&up);
        const size_t per_chunk = NodePool::CHUNK / 512;
        std::set<void*> seen;
        for (size_t i = 0; i < 3 * per_chunk; ++i) EXPECT_TRUE(seen.insert(pool.allocate(512, 16)).second);
        EXPECT_EQ(pool.chunk_bytes(), 3 * NodePool::CHUNK);
        EXPECT_EQ(up.live_bytes, 3 * NodePool::CHUNK);
    }
    EXPECT_EQ(up.live_bytes, 0u);
}

TEST(NodePool, ServesANodeContainerThroughManyInsertsAndErases) {
    NodePool pool;
    std::pmr::multimap<uint64_t, uint64_t> m(&pool);
    std::multimap<uint64_t, uint64_t> reference;
    uint64_t x = 12345;
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 20'000; ++i) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            m.emplace(x % 5000, x);
            reference.emplace(x % 5000, x);
        }
        for (uint64_t k = round; k < 5000; k += 2) {
            m.erase(k);
            reference.erase(k);
        }
        ASSERT_TRUE(std::equal(m.begin(), m.end(), reference.begin(), reference.end()));
    }
    const size_t chunks = pool.chunk_bytes();
    m.clear();
    for (int i = 0; i < 1000; ++i) m.emplace(i, i);  // freed nodes reused: no new chunk
    EXPECT_EQ(pool.chunk_bytes(), chunks);
}
