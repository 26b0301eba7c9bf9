// CowWriteWatch: a FORK_COW region's creator learns that it wrote the region
// after forking (the children would read stale bytes); the write itself lands.
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include "process_fixture.h"
#include "simpler/backing/cow_write_watch.h"
#include "simpler/backing/fork_owner.h"
#include "simpler/backing/fork_region_table.h"

namespace simpler {
namespace {

constexpr uint64_t PAGE = 4096;

uint8_t* map_pages(size_t pages) {
    void* p = mmap(nullptr, pages * PAGE, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

// A volatile store, so the compiler keeps every write the test makes.
void poke(uint8_t* p, uint8_t v) { *static_cast<volatile uint8_t*>(p) = v; }

TEST(CowWriteWatch, AWriteToAWatchedPageLandsAndMarksTheRegionWritten) {
    uint8_t* p = map_pages(4);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, 4 * PAGE);
    const size_t before = cow_watches();
    CowWriteWatch w = start_cow_write_watch(address(p), 4 * PAGE, /*owns_pages=*/true);
    EXPECT_EQ(cow_watches(), before + 1);
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < 4 * PAGE; i += 512) sum = static_cast<uint8_t>(sum + p[i]);  // reads do not count
    EXPECT_FALSE(cow_written(w));
    poke(p + 2 * PAGE + 7, 5);
    EXPECT_EQ(p[2 * PAGE + 7], 5);
    EXPECT_TRUE(cow_written(w));
    poke(p + 3 * PAGE, 6);  // every page is writable again after the first write
    EXPECT_EQ(p[3 * PAGE], 6);
    stop_cow_write_watch(w);
    EXPECT_EQ(cow_watches(), before);
    EXPECT_FALSE(cow_written(w));
    munmap(p, 4 * PAGE);
}

TEST(CowWriteWatch, PartialEdgePagesAreComparedNotProtected) {
    // Adopted memory from byte 100 of page 0 to byte 300 of page 3: pages 1 and
    // 2 are protected, the edges compared (the rest of pages 0 and 3 stays free to write).
    uint8_t* p = map_pages(4);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, 4 * PAGE);
    uint8_t* begin = p + 100;
    const uint64_t nbytes = 3 * PAGE + 200;
    CowWriteWatch w = start_cow_write_watch(address(begin), nbytes, /*owns_pages=*/false);
    poke(p + 50, 9);  // outside the region: nobody's business
    poke(p + 3 * PAGE + 400, 9);
    EXPECT_FALSE(cow_written(w));
    poke(begin, 7);  // the head edge
    EXPECT_TRUE(cow_written(w));
    poke(begin, 1);  // the same bytes again: what a child holds
    EXPECT_FALSE(cow_written(w));
    poke(p + 3 * PAGE + 299, 7);  // the tail edge
    EXPECT_TRUE(cow_written(w));
    poke(p + 3 * PAGE + 299, 1);
    EXPECT_FALSE(cow_written(w));
    poke(p + PAGE + 1, 3);  // a whole page inside
    EXPECT_TRUE(cow_written(w));
    stop_cow_write_watch(w);
    munmap(p, 4 * PAGE);
}

TEST(CowWriteWatch, ARegionWithinOnePageIsComparedWhole) {
    uint8_t* p = map_pages(1);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, PAGE);
    CowWriteWatch w = start_cow_write_watch(address(p + 8), 32, /*owns_pages=*/false);
    poke(p + 40, 2);  // just past it
    EXPECT_FALSE(cow_written(w));
    poke(p + 39, 2);
    EXPECT_TRUE(cow_written(w));
    stop_cow_write_watch(w);
    munmap(p, PAGE);
}

TEST(CowWriteWatch, ReadOnlyMemoryIsNotProtectedOrMadeWritable) {
    uint8_t* p = map_pages(3);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(mprotect(p, 3 * PAGE, PROT_READ), 0);
    CowWriteWatch w = start_cow_write_watch(address(p), 3 * PAGE, /*owns_pages=*/false);
    EXPECT_FALSE(cow_written(w));
    stop_cow_write_watch(w);
    // Still read-only: a write in a child ends it.
    const int status = test::run_in_child([p] {
        poke(p, 1);
        return 0;
    });
    EXPECT_EQ(status, 98);  // died of the fault
    munmap(p, 3 * PAGE);
}

TEST(CowWriteWatch, AForkedChildsWriteIsNotAbsorbed) {
    // The child inherits the protected pages and a copy of the table; the
    // entry is its parent's, so the child's write is a plain fault.
    uint8_t* p = map_pages(2);
    ASSERT_NE(p, nullptr);
    CowWriteWatch w = start_cow_write_watch(address(p), 2 * PAGE, /*owns_pages=*/true);
    const int status = test::run_in_child([p, &w] {
        if (cow_watches() != 0) return 1;
        if (cow_written(w)) return 2;
        poke(p, 1);
        return 0;
    });
    EXPECT_EQ(status, 98);  // died of the fault
    EXPECT_FALSE(cow_written(w));
    stop_cow_write_watch(w);
    munmap(p, 2 * PAGE);
}

TEST(CowWriteWatch, AFaultOutsideEveryWatchIsPassedOn) {
    uint8_t* watched = map_pages(1);
    uint8_t* other = map_pages(1);
    ASSERT_NE(watched, nullptr);
    ASSERT_NE(other, nullptr);
    CowWriteWatch w = start_cow_write_watch(address(watched), PAGE, /*owns_pages=*/true);
    ASSERT_EQ(mprotect(other, PAGE, PROT_READ), 0);
    const int status = test::run_in_child([other] {
        poke(other, 1);  // read-only, watched by nobody: the default action (or ASan's report)
        return 0;
    });
    EXPECT_EQ(status, 98);  // died of the fault
    EXPECT_FALSE(cow_written(w));
    stop_cow_write_watch(w);
    munmap(watched, PAGE);
    munmap(other, PAGE);
}

TEST(CowWriteWatch, TheRegionTableRefusesAWrittenForkCowRegionUntilItIsDelisted) {
    ForkRegionTable table;
    std::unique_ptr<ForkOwner> cow = ForkOwner::create_cow(3 * PAGE, nullptr, &table);
    std::unique_ptr<ForkOwner> shared = ForkOwner::create_shared(PAGE, AccessMode::READWRITE, nullptr, &table);
    const CanonicalIdentity cow_id = cow->descriptor().identity;
    uint8_t* bytes = static_cast<uint8_t*>(cow->data());
    poke(bytes, 1);  // before the watch: what the children hold
    EXPECT_EQ(table.cow_write_problem(cow_id), "");
    table.watch_cow_writes();
    table.watch_cow_writes();  // once per region
    EXPECT_EQ(table.cow_write_problem(cow_id), "");
    poke(static_cast<uint8_t*>(shared->data()), 2);  // FORK_SHM: children see it, nothing watched
    EXPECT_EQ(table.cow_write_problem(shared->descriptor().identity), "");
    poke(bytes + PAGE, 3);
    EXPECT_EQ(bytes[PAGE], 3);
    const std::string why = table.cow_write_problem(cow_id);
    EXPECT_NE(why.find("wrote this FORK_COW buffer after init()"), std::string::npos) << why;
    EXPECT_NE(why.find("stale"), std::string::npos) << why;
    const size_t watching = cow_watches();
    cow->close();  // delisted: the watch ends before the pages are unmapped
    EXPECT_EQ(cow_watches(), watching - 1);
    EXPECT_EQ(table.cow_write_problem(cow_id), "");
    shared->close();
}

}  // namespace
}  // namespace simpler
