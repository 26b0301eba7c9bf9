// AdoptedOwner: memory the runtime did not allocate, named as a backing. It is
// recorded and resolvable like any owner's, never unmapped or unlinked, and a
// consumer's read-only form of it touches no byte outside it.
#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include "process_fixture.h"
#include "simpler/backing/adopted_owner.h"
#include "simpler/backing/fork_region_table.h"
#include "simpler/backing/import_registry.h"
#include "simpler/backing/owned_backing_table.h"

namespace simpler {
namespace {

constexpr uint64_t PAGE = 4096;

// Anonymous pages of this test's own: `pages` of them, MAP_SHARED or private.
uint8_t* map_pages(size_t pages, bool shared) {
    void* p =
        mmap(nullptr, pages * PAGE, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | (shared ? MAP_SHARED : MAP_PRIVATE), -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

// The permissions /proc/self/maps lists for the page holding addr ("rw-p").
std::string perms_at(const void* addr) {
    const auto a = reinterpret_cast<uint64_t>(addr);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        const uint64_t lo = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
        const uint64_t hi = std::stoull(line.substr(line.find('-') + 1, line.find(' ')), nullptr, 16);
        if (lo <= a && a < hi) return line.substr(line.find(' ') + 1, 4);
    }
    return "";
}

Tensor bytes_view(const BufferDescriptor& d, uint32_t n, uint64_t offset = 0) {
    const uint32_t shapes[] = {n};
    return make_tensor(d, shapes, DataType::UINT8, {}, offset);
}

TEST(AdoptedOwner, CloseReleasesTheRecordButNeverTheBytes) {
    uint8_t* pages = map_pages(2, true);
    ASSERT_NE(pages, nullptr);
    auto owner = AdoptedOwner::adopt_fork(BackendKind::FORK_SHM, pages + 100, 3000, AccessMode::READWRITE);
    const BufferDescriptor d = owner->descriptor();
    EXPECT_EQ(descriptor_address(d), reinterpret_cast<uint64_t>(pages + 100));
    EXPECT_EQ(owner->data(), pages + 100);
    EXPECT_TRUE(process_fork_regions().contains(d.identity, descriptor_address(d), 3000, BackendKind::FORK_SHM));
    EXPECT_FALSE(process_fork_regions().owns_pages(d.identity));
    EXPECT_TRUE(process_owned_backings().problem(d).empty());
    owner->close();
    EXPECT_FALSE(process_fork_regions().contains(d.identity, descriptor_address(d), 3000, BackendKind::FORK_SHM));
    EXPECT_FALSE(process_owned_backings().problem(d).empty());
    pages[100] = 7;  // still mapped: the bytes were never the owner's to unmap
    EXPECT_EQ(pages[100], 7);
    munmap(pages, 2 * PAGE);
}

TEST(AdoptedOwner, RefusesWhatCannotBeAdopted) {
    uint8_t byte = 0;
    EXPECT_THROW(AdoptedOwner::adopt_fork(BackendKind::FORK_COW, &byte, 1, AccessMode::READWRITE),
                 std::invalid_argument);
    EXPECT_THROW(AdoptedOwner::adopt_fork(BackendKind::POSIX_SHM, &byte, 1, AccessMode::READ), std::invalid_argument);
    EXPECT_THROW(AdoptedOwner::adopt_fork(BackendKind::FORK_SHM, nullptr, 1, AccessMode::READ), std::invalid_argument);
    EXPECT_THROW(AdoptedOwner::adopt_fork(BackendKind::FORK_SHM, &byte, 0, AccessMode::READ), std::invalid_argument);
    EXPECT_THROW(AdoptedOwner::adopt_posix_shm("a/b", &byte, 1, AccessMode::READ), std::invalid_argument);
    EXPECT_THROW(AdoptedOwner::adopt_posix_shm(std::string(33, 'x'), &byte, 1, AccessMode::READ),
                 std::invalid_argument);
}

TEST(AdoptedOwner, APosixShmObjectIsNamedMappedByConsumersAndNeverUnlinked) {
    const std::string name = "simpler-adopt-test-" + std::to_string(getpid());
    const std::string path = "/" + name;
    const int fd = shm_open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 2 * PAGE), 0);
    void* p = mmap(nullptr, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    ASSERT_NE(p, MAP_FAILED);
    auto* object = static_cast<uint8_t*>(p);
    std::memset(object + 64, 5, 100);
    {
        auto owner = AdoptedOwner::adopt_posix_shm(name, object, 164, AccessMode::READWRITE);
        EXPECT_EQ(owner->name(), name);
        ImportRegistry reg;
        const MappedArg a = reg.map_arg(bytes_view(owner->descriptor(), 100, 64), true);
        EXPECT_NE(a.data, object + 64);  // a mapping of its own, of the same bytes
        EXPECT_EQ(a.data[0], 5);
        a.data[1] = 9;
        EXPECT_EQ(object[65], 9);
        reg.close();
        owner->close();
    }
    EXPECT_EQ(object[64], 5);
    const int again = shm_open(path.c_str(), O_RDONLY, 0);
    EXPECT_GE(again, 0);  // still there: the user's to unlink
    if (again >= 0) close(again);
    shm_unlink(path.c_str());
    munmap(p, 2 * PAGE);
}

TEST(AdoptedOwner, AForkedConsumerReadsAnUnalignedSharedRegionThroughAReadOnlyMapping) {
    uint8_t* pages = map_pages(3, true);
    ASSERT_NE(pages, nullptr);
    auto owner = AdoptedOwner::adopt_fork(BackendKind::FORK_SHM, pages + 1000, 2 * PAGE, AccessMode::READWRITE);
    std::memset(pages + 1000, 4, 2 * PAGE);
    const BufferDescriptor d = owner->descriptor();
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        const MappedArg a = reg.map_arg(bytes_view(d, 2 * PAGE), false);
        if (!a.read_only || a.data == pages + 1000) return 2;
        for (uint64_t i = 0; i < 2 * PAGE; ++i)
            if (a.data[i] != 4) return 3;
        pages[999] = 1;  // the byte before the region stays writable in the child
        reg.close();
        return 0;
    });
    EXPECT_EQ(rc, 0);
    owner->close();
    munmap(pages, 3 * PAGE);
}

TEST(AdoptedOwner, AForkedConsumerProtectsOnlyThePagesWhollyInsideAPrivateRegion) {
    uint8_t* pages = map_pages(4, false);
    ASSERT_NE(pages, nullptr);
    // From the middle of page 0 to the middle of page 3: pages 1 and 2 are wholly inside.
    auto owner = AdoptedOwner::adopt_fork(BackendKind::FORK_COW, pages + 2048, 3 * PAGE, AccessMode::READ);
    std::memset(pages + 2048, 6, 3 * PAGE);
    const BufferDescriptor d = owner->descriptor();
    const int rc = test::run_in_child([&] {
        ImportRegistry reg;
        const MappedArg a = reg.map_arg(bytes_view(d, 3 * PAGE), false);
        if (a.data != pages + 2048 || a.data[0] != 6) return 2;
        pages[100] = 1;               // page 0: shared with other data, left writable
        pages[3 * PAGE + 3000] = 1;   // page 3, past the region: likewise
        if (perms_at(pages + PAGE) != "r--p" || perms_at(pages + 2 * PAGE) != "r--p") return 4;
        if (perms_at(pages) != "rw-p" || perms_at(pages + 3 * PAGE) != "rw-p") return 5;
        reg.close();                  // restores what it protected
        pages[PAGE] = 1;
        return 0;
    });
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(pages[100], 0);  // the child's writes were its own copy
    owner->close();
    munmap(pages, 4 * PAGE);
}

}  // namespace
}  // namespace simpler
