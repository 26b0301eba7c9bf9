// Argument blob benchmarks: encode (TaskArgs -> bytes) and decode+validate
// (TaskArgsView::open + tensor(i) for every element) for 1, 8, 64 and 256
// tensors, against a copy-only baseline. The ns_per_tensor counter is the
// per-element cost.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

namespace {

TaskArgs make_args(int n) {
    CanonicalIdentity id{};
    std::memset(id.owner_instance_id, 0x5a, sizeof id.owner_instance_id);
    id.buffer_id = 1;
    id.generation = 1;
    const char name[] = "sp5a5a5a5a5a5a5a5a-1g1";
    BufferDescriptor d =
        make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, uint64_t{1} << 30,
                               {reinterpret_cast<const uint8_t*>(name), sizeof name - 1});
    TaskArgs args;
    for (int i = 0; i < n; ++i) {
        const uint32_t shapes[] = {64, 64};
        args.add_tensor(make_tensor(d, shapes, DataType::FLOAT32, {}, 16384u * static_cast<uint64_t>(i)),
                        TensorArgType::INPUT);
    }
    args.add_scalar(42);
    return args;
}

void BM_BlobEncode(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    TaskArgs args = make_args(n);
    std::vector<std::byte> out(blob_size(args));
    for (auto _ : state) {
        benchmark::DoNotOptimize(write_blob(args, out));
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * n);
    state.counters["ns_per_tensor"] =
        benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

void BM_BlobDecodeValidate(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    std::vector<std::byte> blob = encode_blob(make_args(n));
    for (auto _ : state) {
        TaskArgsView view;
        bool ok = TaskArgsView::open(blob.data(), blob.size(), view).ok();
        Tensor t;
        for (int32_t i = 0; i < view.tensor_count(); ++i) ok &= view.tensor(i, t).ok();
        benchmark::DoNotOptimize(ok);
        benchmark::DoNotOptimize(t);
    }
    state.SetItemsProcessed(state.iterations() * n);
    state.counters["ns_per_tensor"] =
        benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

// Baseline for the same run: the element copies alone, no validation.
void BM_BlobDecodeCopyOnly(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    std::vector<std::byte> blob = encode_blob(make_args(n));
    for (auto _ : state) {
        Tensor t;
        for (int32_t i = 0; i < n; ++i) {
            std::memcpy(&t, blob.data() + BLOB_HEADER_BYTES + sizeof(Tensor) * static_cast<size_t>(i), sizeof t);
            benchmark::DoNotOptimize(t);
        }
    }
    state.counters["ns_per_tensor"] =
        benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

}  // namespace

BENCHMARK(BM_BlobDecodeCopyOnly)->Arg(1)->Arg(8)->Arg(64)->Arg(256);
BENCHMARK(BM_BlobEncode)->Arg(1)->Arg(8)->Arg(64)->Arg(256);
BENCHMARK(BM_BlobDecodeValidate)->Arg(1)->Arg(8)->Arg(64)->Arg(256);
