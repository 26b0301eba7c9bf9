// Import-side costs: the first receipt of a POSIX_SHM descriptor in a consumer
// (shm_open + fstat + mmap), against a cached receipt of the same descriptor
// (one hash lookup and a descriptor compare), and a cached materialize.
#include <benchmark/benchmark.h>

#include <chrono>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simpler/backing/import_registry.h"
#include "simpler/backing/posix_shm_owner.h"

using namespace simpler;

namespace {

using simpler::ImportRegistry;
using simpler::PosixShmOwner;

void BM_ImportFirstMap(benchmark::State& state) {
    auto owner = PosixShmOwner::create(static_cast<uint64_t>(state.range(0)));
    const BufferDescriptor d = owner->descriptor();
    for (auto _ : state) {
        ImportRegistry reg;
        const auto t0 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(reg.import_backing(d).base);
        const auto t1 = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    }
}
BENCHMARK(BM_ImportFirstMap)->Arg(4096)->Arg(1 << 20)->UseManualTime();

void BM_ImportCachedReceipt(benchmark::State& state) {
    auto owner = PosixShmOwner::create(4096);
    const BufferDescriptor d = owner->descriptor();
    ImportRegistry reg;
    reg.import_backing(d);
    for (auto _ : state) benchmark::DoNotOptimize(reg.import_backing(d).base);
}
BENCHMARK(BM_ImportCachedReceipt);

void BM_MaterializeCached(benchmark::State& state) {
    auto owner = PosixShmOwner::create(4096);
    const uint32_t shapes[2] = {16, 16};
    const Tensor t = make_tensor(owner->descriptor(), shapes, DataType::FLOAT32);
    ImportRegistry reg;
    reg.import_backing(t.buffer);
    for (auto _ : state) benchmark::DoNotOptimize(reg.materialize(t));
}
BENCHMARK(BM_MaterializeCached);

}  // namespace

namespace {

// Baseline: the syscalls a first map cannot avoid (shm_open, fstat, mmap,
// close), with munmap outside the timed region.
void BM_RawShmOpenFstatMmap(benchmark::State& state) {
    auto owner = simpler::PosixShmOwner::create(4096);
    const std::string path = "/" + owner->name();
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        const int fd = shm_open(path.c_str(), O_RDWR, 0);
        struct stat st{};
        fstat(fd, &st);
        void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        const auto t1 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(p);
        munmap(p, 4096);
        state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    }
}
BENCHMARK(BM_RawShmOpenFstatMmap)->UseManualTime();

}  // namespace
