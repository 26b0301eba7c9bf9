// WindowMemory: one shared heap per chip; a domain carves a window at the same
// offset on every member with its buffers laid out in order on 64 bytes, each
// a VMM_WINDOW descriptor owned by its chip; every refusal changes nothing; a
// release refuses at once and frees only at finish; the heaps are shared with
// forked children (a child's store is seen by its sibling) and sealed in the
// parent; a released window is zeroed before it is carved again, and its
// domain's name stays taken until then.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

#include "simpler/engine/window_memory.h"

using namespace simpler;

namespace {

std::vector<WindowBufferSpec> two_buffers() { return {{"x", 1000}, {"y", 10}}; }

template <class E>
std::string refusal(const std::function<void()>& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "(no refusal)";
}

}  // namespace

TEST(WindowMemory, ADomainIsSymmetricAndItsBuffersAreLaidOutInOrder) {
    WindowMemory m(3, 1 << 20);
    const WindowDomain d = m.allocate("tp", {2, 0}, 8192, two_buffers());
    ASSERT_EQ(d.bases.size(), 2u);
    EXPECT_EQ(d.workers, (std::vector<uint32_t>{2, 0}));
    EXPECT_EQ(d.buffer_offsets, (std::vector<uint64_t>{0, 1024}));
    for (uint32_t rank = 0; rank < 2; ++rank) {
        const uint32_t chip = d.workers[rank];
        ASSERT_EQ(d.buffers[rank].size(), 2u);
        for (size_t k = 0; k < 2; ++k) {
            const BufferDescriptor& b = d.buffers[rank][k].descriptor;
            EXPECT_EQ(b.backend_kind, static_cast<uint8_t>(BackendKind::VMM_WINDOW));
            EXPECT_EQ(b.address_space, static_cast<uint8_t>(AddressSpace::DEVICE));
            EXPECT_EQ(descriptor_address(b), d.bases[rank] + d.buffer_offsets[k]);
            EXPECT_EQ(m.owner_of(b.identity), chip);
            EXPECT_TRUE(m.contains(descriptor_address(b), b.nbytes));
        }
    }
    // The same offset in every member's heap: a second domain over one of them
    // and a third chip starts after the first window on both.
    const WindowDomain e = m.allocate("dp", {0, 1}, 100, {});
    EXPECT_EQ(e.bases[0] - d.bases[1], 8192u);
    EXPECT_EQ(m.stats(0).bytes_in_use, 8192u + 4096u);
    EXPECT_EQ(m.stats(1).bytes_in_use, 4096u);
    EXPECT_EQ(m.stats(2).live_windows, 1u);
    EXPECT_FALSE(m.contains(0x1000, 16));
}

TEST(WindowMemory, ARefusalNamesTheCallThatCarvesItsDomains) {
    WindowMemory local(1, 1 << 16);
    EXPECT_EQ(refusal<std::invalid_argument>([&] { local.allocate("a", {0}, 0, {}); }),
              "allocate_domain 'a': window_size must be > 0");
    WindowMemory global(2, 1 << 16);
    global.set_slot_names({"L3[0] chip 0", "L3[1] chip 0"});
    global.set_operation("allocate_global_domain");
    EXPECT_EQ(refusal<std::invalid_argument>([&] { global.allocate("", {0}, 64, {}); }),
              "allocate_global_domain: name must be a non-empty string");
    global.allocate("x", {0}, 4096, {});
    const std::string full = refusal<std::runtime_error>([&] { global.allocate("big", {0, 1}, 1 << 16, {}); });
    EXPECT_EQ(full.rfind("allocate_global_domain 'big': ", 0), 0U) << full;
}

TEST(WindowMemory, EveryBadRequestIsRefusedNamingWhatAndChangesNothing) {
    WindowMemory m(2, 1 << 16);
    m.allocate("tp", {0}, 4096, {});
    const auto bad = [&m](const std::string& name, std::vector<uint32_t> workers, uint64_t size,
                          std::vector<WindowBufferSpec> bufs, std::vector<std::string> lost = {}) {
        return refusal<std::invalid_argument>([&] { m.allocate(name, workers, size, bufs, lost); });
    };
    EXPECT_NE(bad("", {0}, 64, {}).find("name must be a non-empty string"), std::string::npos);
    EXPECT_NE(bad("tp", {1}, 64, {}).find("a domain of that name is live (chips 0)"), std::string::npos);
    EXPECT_NE(bad("a", {}, 64, {}).find("at least one chip"), std::string::npos);
    EXPECT_NE(bad("a", {0, 2}, 64, {}).find("workers[1]=2 is not a chip of this Worker (it has 2 chips)"),
              std::string::npos);
    EXPECT_NE(bad("a", {1, 0, 1}, 64, {}).find("chip 1 is listed twice in workers (workers[0] and workers[2])"),
              std::string::npos);
    EXPECT_NE(bad("a", {0, 1}, 64, {}, {"", "killed"}).find("chip 1 is lost (killed)"), std::string::npos);
    EXPECT_NE(bad("a", {0}, 0, {}).find("window_size must be > 0"), std::string::npos);
    EXPECT_NE(bad("a", {0}, 1 << 17, {}).find("larger than a chip's window heap (65536 bytes"), std::string::npos);
    EXPECT_NE(bad("a", {0}, 64, {{"", 8}}).find("buffers[0]: name must be non-empty"), std::string::npos);
    EXPECT_NE(bad("a", {0}, 64, {{"x", 8}, {"x", 8}}).find("buffer name 'x' appears twice"), std::string::npos);
    EXPECT_NE(bad("a", {0}, 64, {{"x", 0}}).find("buffer 'x': nbytes must be > 0"), std::string::npos);
    EXPECT_NE(
        bad("a", {0}, 100, {{"x", 8}, {"y", 40}}).find("do not fit in window_size 100 bytes (x 8 B at 0, y 40 B at 64"),
        std::string::npos);
    EXPECT_NE(bad("a", {0}, 64, {{"x", UINT64_MAX}, {"y", 1}}).find("do not fit"), std::string::npos);
    // Exhaustion: chip 0 holds 4096 of 65536; a 64 KiB window fits neither.
    const std::string full = refusal<std::runtime_error>([&] { m.allocate("big", {0, 1}, 1 << 16, {}); });
    EXPECT_NE(full.find("no common free range of 65536 bytes"), std::string::npos) << full;
    EXPECT_NE(full.find("chip 0: 4096 in use in 1 windows"), std::string::npos) << full;
    EXPECT_EQ(m.live_domains(), 1u);
    EXPECT_EQ(m.stats(0).bytes_in_use, 4096u);
    EXPECT_EQ(m.stats(1).bytes_in_use, 0u);
    // ... and a good one still goes where the refused ones would have.
    EXPECT_EQ(m.allocate("b", {1}, 1 << 16, {}).bases.size(), 1u);
}

TEST(WindowMemory, MembersAreAdmittedOthersRefusedNamingDomainChipAndBuffer) {
    WindowMemory m(3, 1 << 16);
    const WindowDomain d = m.allocate("tp", {0, 1}, 4096, two_buffers());
    const CanonicalIdentity& x0 = d.buffers[0][0].descriptor.identity;
    EXPECT_EQ(m.member_problem(x0, 0, "chip 0"), std::string{});
    EXPECT_EQ(m.member_problem(x0, 1, "chip 1"), std::string{});  // a peer
    const std::optional<std::string> outsider = m.member_problem(x0, 2, "chip 2");
    ASSERT_TRUE(outsider);
    EXPECT_EQ(*outsider,
              "window buffer 'x' of chip 0 in domain 'tp' (chips 0, 1) may only be named by a task on a chip of that "
              "domain, not by chip 2");
    const std::optional<std::string> host = m.member_problem(x0, std::nullopt, "a host sub-worker");
    ASSERT_TRUE(host);
    EXPECT_NE(host->find("not by a host sub-worker"), std::string::npos);
    DeviceOwnerTable other;
    const DeviceBacking foreign =
        wrap_device_pointer(BackendKind::VMM_WINDOW, 0x1000, 8, AccessMode::READWRITE, 0, other);
    EXPECT_FALSE(m.member_problem(foreign.descriptor.identity, 0, "chip 0").has_value());
    release_device_backing(foreign, other);
}

TEST(WindowMemory, AForgedDescriptorIsRefused) {
    WindowMemory m(1, 1 << 16);
    const WindowDomain d = m.allocate("tp", {0}, 4096, two_buffers());
    BufferDescriptor forged = d.buffers[0][1].descriptor;
    EXPECT_EQ(m.descriptor_problem(forged), "");
    forged.nbytes = 2000;
    EXPECT_NE(m.descriptor_problem(forged).find("disagrees with its owner's record"), std::string::npos);
}

TEST(WindowMemory, AReleaseRefusesAtOnceAndFreesOnlyAtFinish) {
    WindowMemory m(2, 1 << 16);
    const WindowDomain d = m.allocate("tp", {0, 1}, 4096, two_buffers());
    const BufferDescriptor y1 = d.buffers[1][1].descriptor;
    m.begin_release(d.id);
    EXPECT_NE(m.descriptor_problem(y1).find("window buffer 'y' of chip 1 in domain 'tp' (chips 0, 1): the domain was "
                                            "released"),
              std::string::npos);
    EXPECT_EQ(m.stats(1).bytes_in_use, 4096u);  // still held for the tasks in flight
    EXPECT_EQ(m.owner_of(y1.identity), 1u);
    EXPECT_THROW(m.begin_release(d.id), std::invalid_argument);
    // The name stays taken while the old domain drains; another name's windows go elsewhere.
    EXPECT_TRUE(m.releasing_named("tp"));
    EXPECT_NE(refusal<std::invalid_argument>([&] { m.allocate("tp", {0, 1}, 4096, {}); })
                  .find("allocate_domain 'tp': a domain of that name was released, but tasks submitted before its "
                        "release still run (chips 0, 1); its name is free once its windows are"),
              std::string::npos);
    const WindowDomain other = m.allocate("tp2", {0, 1}, 4096, {});
    EXPECT_NE(other.bases[0], d.bases[0]);
    m.finish_release(d.id);
    EXPECT_FALSE(m.releasing_named("tp"));
    EXPECT_EQ(m.stats(0).bytes_in_use, 4096u);
    EXPECT_EQ(m.stats(1).live_windows, 1u);
    EXPECT_FALSE(m.owner_of(y1.identity).has_value());
    EXPECT_FALSE(m.member_problem(y1.identity, 1, "chip 1").has_value());
    EXPECT_EQ(m.descriptor_problem(y1), "");
    m.finish_release(d.id);  // a no-op
    m.release_all();
    EXPECT_EQ(m.live_domains(), 0u);
    EXPECT_EQ(m.stats(0).bytes_in_use, 0u);
    EXPECT_THROW(m.begin_release(12345), std::invalid_argument);
}

TEST(WindowMemory, TheHeapsAreSharedBetweenForkedChildrenAndSealedInTheParent) {
    WindowMemory m(2, 1 << 16);
    const WindowDomain d = m.allocate("tp", {0, 1}, 4096, {{"x", 64}});
    auto* peer = reinterpret_cast<char*>(descriptor_address(d.buffers[1][0].descriptor));
    const pid_t writer = fork();
    if (writer == 0) {  // "chip 0" stores into chip 1's window
        std::memcpy(peer, "hello", 6);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(writer, &status, 0), writer);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const pid_t reader = fork();
    if (reader == 0) _exit(std::strcmp(peer, "hello") == 0 ? 0 : 1);  // "chip 1" sees it
    ASSERT_EQ(waitpid(reader, &status, 0), reader);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    m.seal();
    EXPECT_DEATH({ peer[0] = 'x'; }, "");
}

TEST(WindowMemory, AReleasedWindowIsZeroedBeforeItIsCarvedAgain) {
    for (const bool sealed : {false, true}) {
        WindowMemory m(2, 1 << 16);
        const WindowDomain d = m.allocate("secret", {0, 1}, 8192, {{"x", 8192}});
        const pid_t writer = fork();
        if (writer == 0) {  // a chip fills both windows
            for (uint64_t base : d.bases) std::memset(reinterpret_cast<void*>(base), 0x5a, 8192);
            _exit(0);
        }
        int status = 0;
        ASSERT_EQ(waitpid(writer, &status, 0), writer);
        if (sealed) m.seal();  // as the parent is after the forks: the zeroing may not need to touch the bytes
        m.begin_release(d.id);
        m.finish_release(d.id);
        const WindowDomain next = m.allocate("next", {0, 1}, 8192, {{"x", 8192}});
        ASSERT_EQ(next.bases, d.bases);  // the same pages
        const pid_t reader = fork();
        if (reader == 0) {  // a chip of the next domain reads them
            for (uint64_t base : next.bases) {
                if (sealed) ::mprotect(reinterpret_cast<void*>(base), 8192, PROT_READ);
                const auto* p = reinterpret_cast<const unsigned char*>(base);
                for (size_t i = 0; i < 8192; ++i)
                    if (p[i] != 0) _exit(1);
            }
            _exit(0);
        }
        ASSERT_EQ(waitpid(reader, &status, 0), reader);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "sealed=" << sealed;
    }
}

TEST(WindowMemory, AccessSaysWhetherAChipIsAMemberOfTheDomainHoldingARange) {
    WindowMemory m(3, 1 << 16);
    const WindowDomain d = m.allocate("tp", {0, 2}, 8192, {{"x", 64}});
    const uint64_t x2 = d.bases[1];  // chip 2's window
    EXPECT_EQ(m.access(0, x2, 64), WindowAccess::MEMBER);  // a peer
    EXPECT_EQ(m.access(2, x2, 64), WindowAccess::MEMBER);
    EXPECT_EQ(m.access(1, x2, 64), WindowAccess::NOT_MEMBER);
    EXPECT_EQ(m.access(0, d.bases[0], 8192), WindowAccess::MEMBER);
    EXPECT_EQ(m.access(0, d.bases[0], 8193), WindowAccess::OUTSIDE);  // one byte past the window
    EXPECT_EQ(m.access(0, d.bases[0] + 8192, 1), WindowAccess::OUTSIDE);
    EXPECT_EQ(m.access(0, d.bases[0], 0), WindowAccess::OUTSIDE);
    EXPECT_EQ(m.access(0, 0x1000, 8), WindowAccess::OUTSIDE);
    EXPECT_EQ(m.access(7, x2, 8), WindowAccess::OUTSIDE);  // no such chip
    m.begin_release(d.id);
    EXPECT_EQ(m.access(0, x2, 64), WindowAccess::MEMBER);  // tasks in flight still use it
    m.finish_release(d.id);
    EXPECT_EQ(m.access(0, x2, 64), WindowAccess::OUTSIDE);
}

TEST(WindowMemory, AChildSeesDomainsCarvedAfterItWasForked) {
    WindowMemory m(2, 1 << 16);
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    const uint64_t first_window = [&] {
        const WindowDomain probe = m.allocate("probe", {0}, 4096, {});
        const uint64_t base = probe.bases[0];
        m.begin_release(probe.id);
        m.finish_release(probe.id);
        return base;  // the next domain over chips 0 and 1 starts here
    }();
    const pid_t child = fork();
    if (child == 0) {
        m.enter_chip();
        char c = 0;
        if (read(go[0], &c, 1) != 1) _exit(3);
        _exit(m.access(1, first_window, 64) == WindowAccess::MEMBER ? 0 : 1);
    }
    const WindowDomain d = m.allocate("tp", {0, 1}, 4096, {});
    ASSERT_EQ(d.bases[0], first_window);
    ASSERT_EQ(write(go[1], "x", 1), 1);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    close(go[0]);
    close(go[1]);
}

TEST(WindowMemory, AZeroHeapWithChipsIsRefused) {
    EXPECT_THROW(WindowMemory(1, 0), std::invalid_argument);
    WindowMemory none(0, 0);
    EXPECT_EQ(none.num_chips(), 0u);
}

TEST(WindowMemory, GlobalSlotsAreNamedAndAChildHoldingAMemberSlotIsAdmitted) {
    // A level-4 Worker's global windows: slots 0 (L3[0] chip 0), 1 and 2 (L3[1] chips 0 and 1).
    WindowMemory m(3, 1 << 16);
    m.set_slot_names({"L3[0] chip 0", "L3[1] chip 0", "L3[1] chip 1"});
    const WindowDomain d = m.allocate("g", {0, 2}, 4096, two_buffers());
    const CanonicalIdentity& x2 = d.buffers[1][0].descriptor.identity;
    EXPECT_EQ(m.member_problem_in(x2, 0, 1, "worker 0"), std::string{});  // L3[0] holds slot 0
    EXPECT_EQ(m.member_problem_in(x2, 1, 2, "worker 1"), std::string{});  // L3[1] holds slot 2
    const std::optional<std::string> none = m.member_problem_in(x2, 0, 0, "a host sub-worker");
    ASSERT_TRUE(none);
    EXPECT_EQ(*none,
              "window buffer 'x' of L3[1] chip 1 in domain 'g' (members L3[0] chip 0, L3[1] chip 1) may only go to a "
              "child that holds a member chip, not to a host sub-worker");
    const std::optional<std::string> only_slot_1 = m.member_problem_in(x2, 1, 1, "worker 1");
    ASSERT_TRUE(only_slot_1);
    EXPECT_NE(only_slot_1->find("not to worker 1"), std::string::npos);
    EXPECT_NE(refusal<std::invalid_argument>([&] {
                  m.allocate("g", {1}, 4096, {});
              }).find("a domain of that name is live (members L3[0] chip 0, L3[1] chip 1)"),
              std::string::npos);
    const WindowStats total = m.total_stats();
    EXPECT_EQ(total.capacity_bytes, 3u << 16);
    EXPECT_EQ(total.bytes_in_use, 2u * 4096);
    EXPECT_EQ(total.live_windows, 2u);
    m.begin_release(d.id);
    EXPECT_NE(m.descriptor_problem(d.buffers[0][0].descriptor).find("window buffer 'x' of L3[0] chip 0"),
              std::string::npos);
    m.finish_release(d.id);
    EXPECT_EQ(m.total_stats().bytes_in_use, 0u);
    EXPECT_EQ(m.total_stats().live_windows, 0u);
}

TEST(WindowMemory, AForkedChildReadsTheNameOfTheDomainHoldingAnAddress) {
    // Two domains at offset 0 of different heaps: the name follows the heap.
    WindowMemory m(3, 1 << 16);
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    const pid_t child = fork();
    if (child == 0) {  // forked before the domains exist, as an L3 is before its L4 carves
        char c = 0;
        if (read(go[0], &c, 1) != 1) _exit(3);
        uint64_t addrs[2];
        if (read(go[0], addrs, sizeof addrs) != sizeof addrs) _exit(4);
        _exit(m.domain_name_at(addrs[0]) == "first" && m.domain_name_at(addrs[1]) == "second" ? 0 : 1);
    }
    const WindowDomain a = m.allocate("first", {0, 1}, 4096, {});
    const WindowDomain b = m.allocate("second", {2}, 8192, {});
    EXPECT_EQ(m.domain_name_at(a.bases[1] + 100), "first");
    EXPECT_EQ(m.domain_name_at(b.bases[0] + 4096 + 8), "second");
    EXPECT_EQ(m.domain_name_at(a.bases[0] + 4096), "");  // past the first's window
    ASSERT_EQ(write(go[1], "x", 1), 1);
    const uint64_t addrs[2] = {a.bases[1], b.bases[0] + 8191};
    ASSERT_EQ(write(go[1], addrs, sizeof addrs), static_cast<ssize_t>(sizeof addrs));
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    m.begin_release(a.id);
    m.finish_release(a.id);
    EXPECT_EQ(m.domain_name_at(a.bases[0]), "");  // released: no name
    EXPECT_EQ(m.domain_name_at(b.bases[0]), "second");
    close(go[0]);
    close(go[1]);
}
