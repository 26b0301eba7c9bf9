// Dependency inference cost: submit + inference per task (1, 4, 16 tensor
// arguments), a chain on one buffer, 1,024 disjoint tiles of one matrix, and
// candidate lookup with 100 / 1,000 / 10,000 live views on one backing; plus
// overlap() alone. Counters: ns_per_task (lower is better), edges per task.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "simpler/deps/dependency_tracker.h"
#include "simpler/view/wire_overlap.h"

using namespace simpler;

using simpler::DependencyTracker;
using simpler::TaskId;
using TT = TensorArgType;

namespace {

BufferDescriptor backing(uint64_t nbytes, uint64_t buffer_id) {
    CanonicalIdentity id{};
    const uint8_t owner[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    std::memcpy(id.owner_instance_id, owner, sizeof owner);
    id.buffer_id = buffer_id;
    id.generation = 1;
    const char name[] = "bench-deps";
    return make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, nbytes,
                                  {reinterpret_cast<const uint8_t*>(name), sizeof name - 1});
}

// A (rows x cols) FLOAT32 tile at (r0, c0) of an n x n FLOAT32 matrix.
Tensor tile(const BufferDescriptor& b, uint32_t n, uint32_t r0, uint32_t c0, uint32_t rows, uint32_t cols) {
    const uint32_t shapes[2] = {rows, cols}, strides[2] = {n, 1};
    return make_tensor(b, shapes, DataType::FLOAT32, strides, (uint64_t{r0} * n + c0) * 4);
}

void per_task(benchmark::State& state, uint64_t tasks) {
    state.counters["ns_per_task"] = benchmark::Counter(static_cast<double>(tasks) * 1e-9,
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Tasks with `args` arguments over 16 matrices (256x256 FLOAT32, 8x8 grid of
// 32x32 tiles): task i reads args-1 tiles and writes one, on a rotating set of
// matrices and tiles, so each task meets earlier writers and readers. Tasks
// complete 64 submits after they were submitted (a steady window of 64 live).
void BM_SubmitTask(benchmark::State& state) {
    const auto nargs = static_cast<uint32_t>(state.range(0));
    const bool validate = state.range(1) != 0;
    constexpr uint32_t N = 256, T = 32, WINDOW = 64;
    std::vector<BufferDescriptor> mats;
    for (uint64_t m = 0; m < 16; ++m) mats.push_back(backing(uint64_t{N} * N * 4, m + 1));
    // Precomputed argument lists for 1024 distinct tasks, reused round-robin.
    std::vector<std::vector<Tensor>> args(1024);
    std::vector<std::vector<TT>> tags(1024);
    for (uint32_t i = 0; i < 1024; ++i) {
        for (uint32_t k = 0; k < nargs; ++k) {
            const uint32_t m = (i + 5 * k) % 16, t = (i / 16 + 3 * k) % 64;
            args[i].push_back(tile(mats[m], N, (t / 8) * T, (t % 8) * T, T, T));
            tags[i].push_back(k + 1 == nargs ? TT::OUTPUT : TT::INPUT);
        }
        // Keep one task's arguments disjoint where it writes: the output's matrix is unique.
        for (uint32_t k = 0; k + 1 < nargs; ++k)
            if (args[i][k].buffer.identity == args[i][nargs - 1].buffer.identity) tags[i][k] = TT::NO_DEP;
    }
    simpler::TrackerConfig config;
    config.validate_tensors = validate;
    DependencyTracker tracker(config);
    TaskId next = 1;  // task ids are nonzero
    uint64_t edges = 0;
    for (auto _ : state) {
        const uint32_t i = static_cast<uint32_t>(next % 1024);
        edges += tracker.submit(next, args[i], tags[i]).size();
        if (next > WINDOW) tracker.complete(next - WINDOW);
        ++next;
    }
    per_task(state, state.iterations());
    state.counters["edges_per_task"] = static_cast<double>(edges) / static_cast<double>(state.iterations());
}
// Second argument: 1 runs validate_tensor on every argument at submit (the
// default), 0 skips it (tensors validated when built).
BENCHMARK(BM_SubmitTask)->ArgsProduct({{1, 4, 16}, {1, 0}})->ArgNames({"args", "validate"});

// A chain: every task INOUT on the whole of one buffer; completes 64 behind.
void BM_Chain(benchmark::State& state) {
    const auto b = backing(1 << 20, 1);
    const uint32_t shapes[1] = {1 << 18};
    const Tensor whole[1] = {make_tensor(b, shapes, DataType::FLOAT32)};
    const TT inout[1] = {TT::INOUT};
    DependencyTracker tracker;
    TaskId next = 1;
    uint64_t edges = 0;
    for (auto _ : state) {
        edges += tracker.submit(next, whole, inout).size();
        if (next > 64) tracker.complete(next - 64);
        ++next;
    }
    per_task(state, state.iterations());
    state.counters["edges_per_task"] = static_cast<double>(edges) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Chain);

// 1,024 tasks each writing one 32x32 tile of a 1024x1024 FLOAT32 matrix; no
// task completes, so the last tile meets 1,023 live writers' index. Zero edges.
void BM_DisjointTiles(benchmark::State& state) {
    constexpr uint32_t N = 1024, T = 32;
    const auto b = backing(uint64_t{N} * N * 4, 1);
    std::vector<Tensor> tiles;
    for (uint32_t r = 0; r < N; r += T)
        for (uint32_t c = 0; c < N; c += T) tiles.push_back(tile(b, N, r, c, T, T));
    const TT out[1] = {TT::OUTPUT};
    uint64_t edges = 0;
    for (auto _ : state) {
        DependencyTracker tracker;
        for (size_t i = 0; i < tiles.size(); ++i) edges += tracker.submit(i + 1, {&tiles[i], 1}, out).size();
        state.PauseTiming();
        for (size_t i = 0; i < tiles.size(); ++i) tracker.complete(i + 1);
        state.ResumeTiming();
    }
    per_task(state, state.iterations() * tiles.size());
    state.counters["edges"] = static_cast<double>(edges);
}
BENCHMARK(BM_DisjointTiles);

// Candidate lookup with `live` views on one backing: live writers of disjoint
// 64-byte slices; each iteration submits a reader of one slice (one edge) and
// completes it, so the live set stays `live`.
void BM_CandidateLookup(benchmark::State& state) {
    const auto live = static_cast<uint32_t>(state.range(0));
    const auto b = backing(uint64_t{live} * 64, 1);
    std::vector<Tensor> slices;
    const uint32_t shapes[1] = {16};
    for (uint32_t i = 0; i < live; ++i)
        slices.push_back(make_tensor(b, shapes, DataType::FLOAT32, {}, uint64_t{i} * 64));
    const TT out[1] = {TT::OUTPUT}, in[1] = {TT::INPUT};
    DependencyTracker tracker;
    for (uint32_t i = 0; i < live; ++i) tracker.submit(i + 1, {&slices[i], 1}, out);
    TaskId next = live + 1;
    uint64_t pick = 0;
    for (auto _ : state) {
        pick = (pick * 2654435761u + 1) % live;
        benchmark::DoNotOptimize(tracker.submit(next, {&slices[pick], 1}, in).size());
        tracker.complete(next++);
    }
    per_task(state, state.iterations());
}
BENCHMARK(BM_CandidateLookup)->Arg(100)->Arg(1000)->Arg(10000);

// The same with 2-D tiles of one matrix (sqrt(live) x sqrt(live) grid of 8x8
// FLOAT32 tiles): a tile's byte range spans its whole tile row, but the
// tracker files tiles of one row pitch by rows x columns, so a lookup visits
// only the tile itself.
void BM_CandidateLookupTiles(benchmark::State& state) {
    const auto live = static_cast<uint32_t>(state.range(0));
    uint32_t g = 1;
    while (g * g < live) ++g;
    const uint32_t n = g * 8;
    const auto b = backing(uint64_t{n} * n * 4, 1);
    std::vector<Tensor> tiles;
    for (uint32_t i = 0; i < g * g; ++i) tiles.push_back(tile(b, n, (i / g) * 8, (i % g) * 8, 8, 8));
    const TT out[1] = {TT::OUTPUT}, in[1] = {TT::INPUT};
    DependencyTracker tracker;
    for (uint32_t i = 0; i < tiles.size(); ++i) tracker.submit(i + 1, {&tiles[i], 1}, out);
    TaskId next = tiles.size() + 1;
    uint64_t pick = 0;
    for (auto _ : state) {
        pick = (pick * 2654435761u + 1) % tiles.size();
        benchmark::DoNotOptimize(tracker.submit(next, {&tiles[pick], 1}, in).size());
        tracker.complete(next++);
    }
    per_task(state, state.iterations());
}
BENCHMARK(BM_CandidateLookupTiles)->Arg(100)->Arg(1000)->Arg(10000);

void BM_OverlapSameLayout(benchmark::State& state) {
    const auto b = backing(256 * 256 * 4, 1);
    const simpler::ViewBox p = simpler::make_view_box(tile(b, 256, 0, 0, 32, 32));
    const simpler::ViewBox e = simpler::make_view_box(tile(b, 256, 16, 32, 32, 32));
    for (auto _ : state) benchmark::DoNotOptimize(simpler::overlap(p, e));
}
BENCHMARK(BM_OverlapSameLayout);

void BM_OverlapTransposed(benchmark::State& state) {
    const auto b = backing(256 * 256 * 4, 1);
    const uint32_t shapes[2] = {32, 32}, strides[2] = {1, 256};
    const simpler::ViewBox p = simpler::make_view_box(make_tensor(b, shapes, DataType::FLOAT32, strides, 32 * 4));
    const simpler::ViewBox e = simpler::make_view_box(tile(b, 256, 0, 0, 32, 32));
    for (auto _ : state) benchmark::DoNotOptimize(simpler::overlap(p, e));
}
BENCHMARK(BM_OverlapTransposed);

}  // namespace
