#include "simpler/backing/posix_shm_owner.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "simpler/backing/identity_minter.h"
#include "simpler/backing/shm_name.h"
#include "simpler/backing/shm_tracker.h"

namespace simpler {

namespace {

constexpr const char* SHM_DIR = "/dev/shm";

std::runtime_error os_error(const std::string& what, const std::string& name, int err) {
    return std::runtime_error("PosixShmOwner: " + what + " '" + name + "' failed: " + std::strerror(err));
}

std::string mib(uint64_t bytes) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return s;
}

// Free and total bytes of the filesystem behind /dev/shm; nullopt when unknown.
std::optional<std::pair<uint64_t, uint64_t>> shm_space() noexcept {
    struct statvfs v{};
    if (statvfs(SHM_DIR, &v) != 0) return std::nullopt;
    return std::pair<uint64_t, uint64_t>{static_cast<uint64_t>(v.f_bavail) * v.f_frsize,
                                         static_cast<uint64_t>(v.f_blocks) * v.f_frsize};
}

std::runtime_error no_space(uint64_t nbytes, const std::string& name) {
    std::string room = "its free space is unknown";
    if (const auto space = shm_space())
        room = "only " + std::to_string(space->first) + " bytes (" + mib(space->first) + ") of " +
               std::to_string(space->second) + " (" + mib(space->second) + ") are free";
    return std::runtime_error("PosixShmOwner: cannot reserve " + std::to_string(nbytes) + " bytes (" + mib(nbytes) +
                              ") in " + SHM_DIR + " for '" + name + "': " + room +
                              "; give /dev/shm more room (docker run --shm-size=..., or "
                              "mount -o remount,size=... /dev/shm) or create a smaller buffer");
}

// Reserves every page of the object now, so that a write can never find the
// filesystem full (which would be SIGBUS, not an error). 0 or an errno value.
int reserve_pages(int fd, uint64_t nbytes) noexcept {
    for (;;) {
        const int rc = posix_fallocate(fd, 0, static_cast<off_t>(nbytes));
        if (rc != EINTR) return rc;
    }
}

}  // namespace

std::unique_ptr<PosixShmOwner> PosixShmOwner::create(uint64_t nbytes, AccessMode access, IdentityMinter* minter,
                                                     uint32_t owner_worker_path_id) {
    check_size(nbytes);
    if (minter == nullptr) minter = &process_identity_minter();
    const CanonicalIdentity id = minter->mint();
    const std::optional<std::string> name = shm_name_for(id);
    if (!name) {
        minter->release(id);
        throw std::runtime_error("PosixShmOwner: identity " + id.to_string() + " does not fit a shm name");
    }
    BufferDescriptor desc;
    try {
        desc = make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST, access, nbytes,
                                      {reinterpret_cast<const uint8_t*>(name->data()), name->size()},
                                      owner_worker_path_id);
    } catch (...) {
        minter->release(id);
        throw;
    }
    return make(desc, *name, minter);
}

std::unique_ptr<PosixShmOwner> PosixShmOwner::create_shadow(const BufferDescriptor& source) {
    check_size(source.nbytes);
    static std::atomic<uint64_t> shadows{0};
    // "sp" + this incarnation's nonce (what leak checks and the tracker know) + "-s<n>": no minted name has an 's'.
    const OwnerNonce nonce = process_identity_minter().nonce();
    uint8_t bytes[OWNER_INSTANCE_ID_BYTES];
    std::memcpy(bytes, &nonce, sizeof bytes);
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "-s%llx", static_cast<unsigned long long>(++shadows));
    const std::string name = shm_name_prefix_for(bytes) + suffix;
    const BufferDescriptor desc = make_buffer_descriptor(
        source.identity, BackendKind::POSIX_SHM, AddressSpace::HOST, static_cast<AccessMode>(source.access),
        source.nbytes, {reinterpret_cast<const uint8_t*>(name.data()), name.size()}, source.owner_worker_path_id);
    return make(desc, name, nullptr);
}

void PosixShmOwner::check_size(uint64_t nbytes) {
    if (nbytes == 0) throw std::invalid_argument("PosixShmOwner: nbytes must be > 0");
    if (nbytes > static_cast<uint64_t>(std::numeric_limits<off_t>::max()))
        throw std::invalid_argument("PosixShmOwner: nbytes " + std::to_string(nbytes) +
                                    " exceeds the largest file size");
}

std::unique_ptr<PosixShmOwner> PosixShmOwner::make(const BufferDescriptor& desc, const std::string& name,
                                                   IdentityMinter* minter) {
    const uint64_t nbytes = desc.nbytes;
    auto fail = [&](std::runtime_error e) -> std::runtime_error {
        if (minter != nullptr) minter->release(desc.identity);
        return e;
    };
    // Refused before anything exists when it cannot fit (a request the kernel
    // would only refuse after filling /dev/shm page by page).
    if (const auto space = shm_space(); space && nbytes > space->first) throw fail(no_space(nbytes, name));

    ShmTracker& tracker = process_shm_tracker();
    try {
        tracker.will_create(name);  // before the name exists: it cannot outlive this process unnoticed
    } catch (const std::runtime_error& e) {
        throw fail(std::runtime_error("PosixShmOwner: cannot create '" + name + "': " + e.what()));
    }
    const std::string path = shm_syscall_path(name);
    auto undo = [&](std::runtime_error e) -> std::runtime_error {
        shm_unlink(path.c_str());
        tracker.unlinked(name);
        return fail(std::move(e));
    };
    const int fd = shm_open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        const int err = errno;
        tracker.unlinked(name);  // not ours to unlink (EEXIST) or never made
        throw fail(os_error("shm_open(O_CREAT|O_EXCL)", name, err));
    }
    if (ftruncate(fd, static_cast<off_t>(nbytes)) != 0) {
        const int err = errno;
        ::close(fd);
        throw undo(os_error("ftruncate", name, err));
    }
    if (const int err = reserve_pages(fd, nbytes); err != 0) {
        ::close(fd);
        throw undo(err == ENOSPC ? no_space(nbytes, name) : os_error("posix_fallocate", name, err));
    }
    void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) throw undo(os_error("mmap", name, err));
    return std::unique_ptr<PosixShmOwner>(new PosixShmOwner(desc, static_cast<uint8_t*>(p), minter, name));
}

PosixShmOwner::PosixShmOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter, std::string name)
    : BackingOwner(desc, base, minter), name_(std::move(name)) {}

PosixShmOwner::~PosixShmOwner() { close_from_destructor(); }

namespace {

void release_shm(uint8_t* base, uint64_t nbytes, const std::string& name, bool creator) noexcept {
    if (base != nullptr) munmap(base, nbytes);
    if (creator) {
        shm_unlink(shm_syscall_path(name).c_str());
        process_shm_tracker().unlinked(name);
    }
}

}  // namespace

void PosixShmOwner::release_backing(bool creator) noexcept { release_shm(base_, desc_.nbytes, name_, creator); }

std::function<void()> PosixShmOwner::creator_release_action() const {
    return [base = base_, nbytes = desc_.nbytes, name = name_] { release_shm(base, nbytes, name, true); };
}

}  // namespace simpler
