// Communication-domain windows: what a release costs now that it zeroes the
// window (a hole punched in the shared heap, so the next domain carved on those
// pages reads zeros), for a 64 MiB window whose every page a chip wrote, beside
// the same release of a window no chip touched, the parent writing the zeros
// through its own view instead, and a plain memset of 64 MiB already faulted in. The parent holds the heaps sealed, as
// a Worker's does after its forks.
#include <benchmark/benchmark.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "simpler/engine/window_memory.h"

using namespace simpler;

namespace {

constexpr uint64_t WINDOW = uint64_t{64} << 20;

// A forked "chip" writes every byte of the window at `base`.
void fill_in_child(uint64_t base) {
    const pid_t c = ::fork();
    if (c == 0) {
        if (::mprotect(reinterpret_cast<void*>(base), WINDOW, PROT_READ | PROT_WRITE) != 0) ::_exit(1);
        std::memset(reinterpret_cast<void*>(base), 0x5a, WINDOW);
        ::_exit(0);
    }
    int status = 0;
    if (::waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status) != 0) std::abort();
}

void release_window(benchmark::State& state, bool written) {
    WindowMemory m(1, WINDOW);
    bool sealed = false;
    for (auto _ : state) {
        state.PauseTiming();
        const WindowDomain d = m.allocate("w", {0}, WINDOW, {{"x", WINDOW}});
        if (written) fill_in_child(d.bases[0]);
        if (!sealed) m.seal();  // a chip of a real Worker is forked before the seal: this one opens its own view
        sealed = true;
        m.begin_release(d.id);
        state.ResumeTiming();
        m.finish_release(d.id);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * WINDOW));
}

void BM_ReleaseWrittenWindow64MiB(benchmark::State& state) { release_window(state, true); }
void BM_ReleaseUntouchedWindow64MiB(benchmark::State& state) { release_window(state, false); }

// The alternative: the parent opens its sealed view of the written window and
// writes the zeros itself (what zero_locked falls back to without hole punching).
void BM_ZeroByWritingWrittenWindow64MiB(benchmark::State& state) {
    WindowMemory m(1, WINDOW);
    const WindowDomain d = m.allocate("w", {0}, WINDOW, {{"x", WINDOW}});
    m.seal();
    auto* at = reinterpret_cast<void*>(d.bases[0]);
    for (auto _ : state) {
        state.PauseTiming();
        fill_in_child(d.bases[0]);
        state.ResumeTiming();
        if (::mprotect(at, WINDOW, PROT_READ | PROT_WRITE) != 0) std::abort();
        std::memset(at, 0, WINDOW);
        benchmark::ClobberMemory();
        ::mprotect(at, WINDOW, PROT_NONE);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * WINDOW));
}

void BM_Memset64MiB(benchmark::State& state) {  // memory this process has already faulted in
    std::vector<char> bytes(WINDOW, 1);
    for (auto _ : state) {
        std::memset(bytes.data(), 0, bytes.size());
        benchmark::DoNotOptimize(bytes.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * WINDOW));
}

}  // namespace

BENCHMARK(BM_ReleaseWrittenWindow64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReleaseUntouchedWindow64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ZeroByWritingWrittenWindow64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Memset64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
