// DeviceArena: aligned allocation, reuse after free, statistics, and the
// refusals (foreign pointer, interior pointer, double free, exhaustion).
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "simpler/chip/device_arena.h"

using simpler::chip::DeviceArena;

TEST(DeviceArena, AllocatesAlignedWritableBlocksInsideTheMapping) {
    DeviceArena arena(1 << 20);
    void* a = arena.alloc(100);
    void* b = arena.alloc(10, 4096);
    EXPECT_EQ(reinterpret_cast<uint64_t>(a) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uint64_t>(b) % 4096, 0u);
    EXPECT_TRUE(arena.contains(reinterpret_cast<uint64_t>(a), 100));
    std::memset(a, 0xab, 100);
    std::memset(b, 0xcd, 10);
    EXPECT_EQ(static_cast<unsigned char*>(a)[99], 0xab);
    const auto s = arena.stats();
    EXPECT_EQ(s.live_allocations, 2u);
    EXPECT_EQ(s.bytes_in_use, 128u + 64u);
    arena.free(a);
    arena.free(b);
    EXPECT_EQ(arena.stats().bytes_in_use, 0u);
    EXPECT_EQ(arena.stats().peak_bytes_in_use, 192u);
}

TEST(DeviceArena, CoalescesFreedBlocksSoTheWholeArenaCanBeReused) {
    DeviceArena arena(1 << 16);
    void* p[4];
    for (auto& q : p) q = arena.alloc(1 << 14);
    EXPECT_EQ(arena.try_alloc(64), 0u);
    arena.free(p[1]);
    arena.free(p[3]);
    arena.free(p[0]);
    arena.free(p[2]);
    EXPECT_EQ(arena.stats().largest_free_block, uint64_t{1} << 16);
    void* whole = arena.alloc(1 << 16);
    EXPECT_EQ(reinterpret_cast<uint64_t>(whole), arena.base());
}

TEST(DeviceArena, RefusesAForeignPointer) {
    DeviceArena arena(1 << 16);
    int local = 0;
    try {
        arena.free(&local);
        FAIL() << "expected a refusal";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("is not in this arena"), std::string::npos) << e.what();
    }
}

TEST(DeviceArena, RefusesADoubleFree) {
    DeviceArena arena(1 << 16);
    void* a = arena.alloc(64);
    arena.free(a);
    try {
        arena.free(a);
        FAIL() << "expected a refusal";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("double free"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(arena.try_free(reinterpret_cast<uint64_t>(a)));
}

TEST(DeviceArena, RefusesAnInteriorPointerAndKeepsTheBlock) {
    DeviceArena arena(1 << 16);
    auto* a = static_cast<char*>(arena.alloc(256));
    try {
        arena.free(a + 64);
        FAIL() << "expected a refusal";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("inside a live block"), std::string::npos) << e.what();
    }
    EXPECT_EQ(arena.stats().live_allocations, 1u);
    arena.free(a);
}

TEST(DeviceArena, SaysWhenItIsExhausted) {
    DeviceArena arena(1 << 16);
    try {
        arena.alloc(1 << 17);
        FAIL() << "expected a refusal";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
    }
    EXPECT_THROW(arena.alloc(0), std::invalid_argument);
    EXPECT_THROW(arena.alloc(64, 3), std::invalid_argument);
    EXPECT_THROW(DeviceArena(0), std::invalid_argument);
}
