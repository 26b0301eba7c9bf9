#include "simpler/backing/posix_shm_owner.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/mman.h>
#include <unistd.h>

#include "simpler/backing/identity_minter.h"
#include "simpler/backing/shm_name.h"

namespace simpler {

namespace {

std::runtime_error os_error(const std::string& what, const std::string& name, int err) {
    return std::runtime_error("PosixShmOwner: " + what + " '" + name + "' failed: " + std::strerror(err));
}

}  // namespace

std::unique_ptr<PosixShmOwner> PosixShmOwner::create(uint64_t nbytes, AccessMode access, IdentityMinter* minter,
                                                     uint32_t owner_worker_path_id) {
    if (nbytes == 0) throw std::invalid_argument("PosixShmOwner: nbytes must be > 0");
    if (minter == nullptr) minter = &process_identity_minter();
    const CanonicalIdentity id = minter->mint();
    auto fail = [&](std::runtime_error e) -> std::runtime_error {
        minter->release(id);
        return e;
    };
    const std::optional<std::string> name = shm_name_for(id);
    if (!name) throw fail(std::runtime_error("PosixShmOwner: identity " + id.to_string() + " does not fit a shm name"));
    BufferDescriptor desc;
    try {
        desc = make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST, access, nbytes,
                                      {reinterpret_cast<const uint8_t*>(name->data()), name->size()},
                                      owner_worker_path_id);
    } catch (...) {
        minter->release(id);
        throw;
    }

    const std::string path = shm_syscall_path(*name);
    const int fd = shm_open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) throw fail(os_error("shm_open(O_CREAT|O_EXCL)", *name, errno));
    if (ftruncate(fd, static_cast<off_t>(nbytes)) != 0) {
        const int err = errno;
        ::close(fd);
        shm_unlink(path.c_str());
        throw fail(os_error("ftruncate", *name, err));
    }
    void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(path.c_str());
        throw fail(os_error("mmap", *name, err));
    }
    return std::unique_ptr<PosixShmOwner>(new PosixShmOwner(desc, static_cast<uint8_t*>(p), minter, *name));
}

PosixShmOwner::PosixShmOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter, std::string name)
    : BackingOwner(desc, base, minter), name_(std::move(name)) {}

PosixShmOwner::~PosixShmOwner() { close_from_destructor(); }

void PosixShmOwner::release_backing(bool creator) noexcept {
    if (base_ != nullptr) munmap(base_, desc_.nbytes);
    if (creator) shm_unlink(shm_syscall_path(name_).c_str());
}

}  // namespace simpler
