// The chip side of the METG benchmark (bench_metg.py): Task Bench's method, a
// graph of `width` x `steps` point tasks, each running a compute-bound kernel
// of `iterations` iterations and reading its dependencies' outputs.
//
// The data: one FLOAT64 buffer of 2 * width rows of ROW doubles; task (t, x)
// writes row (t % 2) * width + x and reads the rows of generation (t - 1) % 2
// its dependencies name. A row holds (t, x, a checksum of the kernel's work).
// Every dependency comes from the views and tags alone.
//
// metg.point (tensors: the output row, then one INPUT row per dependency;
// scalars: t, x, width, pattern, iterations, kind) launches kernel metg_point,
// which checks that it got exactly the dependencies deps() names for (t, x) and
// that each input row holds (t - 1, its x): a missing edge reads a row of
// another generation and fails the run naming the point. Then it runs the
// kernel (kind 0: compute-bound, 64 FLOP an iteration in registers; kind 1:
// memory-bound, a pass over a 512 KiB scratch array of its thread an
// iteration, 2 FLOP a double) and writes its row.
// metg.graph (tensor: the whole buffer; scalars: width, steps, pattern,
// iterations, kind) submits the whole graph on this chip: one task per point.
// metg.serial (same arguments) runs every point's kernel in order on the
// orchestration's thread, with no task and no check: the baseline.
// metg_work (an exported C function) runs the same kernel for a Python
// sub-worker, which does the point's check itself.
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

namespace {

constexpr uint32_t ROW = 8;         // doubles a row
constexpr uint32_t MAX_DEPS = 24;   // tensors a point task names beside its output
constexpr uint32_t LANES = 32;      // the compute kernel's independent chains
constexpr uint32_t SCRATCH = 1 << 16;  // doubles the memory-bound kernel streams over (512 KiB)

enum Pattern : uint32_t { TRIVIAL, STENCIL_1D, NEAREST, SPREAD, FFT, TREE, ALL_TO_ALL };

// The points of step t - 1 that point (t, x) reads, in increasing order; their count.
uint32_t deps(uint32_t pattern, uint32_t t, uint32_t x, uint32_t width, uint32_t* out) {
    if (t == 0) return 0;
    uint32_t n = 0;
    const auto add = [&](int64_t d) {
        if (d < 0 || d >= width || n == MAX_DEPS) return;
        for (uint32_t i = 0; i < n; ++i)
            if (out[i] == d) return;
        out[n++] = static_cast<uint32_t>(d);
    };
    switch (pattern) {
        case TRIVIAL: break;
        case STENCIL_1D: add(int64_t{x} - 1), add(x), add(int64_t{x} + 1); break;
        case NEAREST:
            for (int64_t d = int64_t{x} - 2; d <= int64_t{x} + 2; ++d) add(d);
            break;
        case SPREAD:
            for (uint32_t i = 0; i < 3; ++i) add((x + i * ((width + 2) / 3)) % width);
            break;
        case FFT: {
            uint32_t levels = 0;
            while ((2u << levels) <= width) ++levels;
            add(x);
            if (levels > 0) add(x ^ (1u << ((t - 1) % levels)));
            break;
        }
        case TREE: add(x / 2); break;
        case ALL_TO_ALL:
            for (uint32_t d = 0; d < width; ++d) add(d);
            break;
        default: break;
    }
    for (uint32_t i = 1; i < n; ++i)  // insertion sort: a handful of entries
        for (uint32_t j = i; j > 0 && out[j - 1] > out[j]; --j) std::swap(out[j - 1], out[j]);
    return n;
}

double compute(uint64_t iterations, double seed) {
    double a[LANES];
    for (uint32_t j = 0; j < LANES; ++j) a[j] = seed + j;
    for (uint64_t i = 0; i < iterations; ++i)
        for (double& v : a) v = v * 0.5 + 0.25;  // 2 FLOP a lane
    double sum = 0;
    for (double v : a) sum += v;
    return sum;
}

double stream(uint64_t iterations, double seed) {
    static thread_local std::vector<double> scratch(SCRATCH, 0.5);  // filled once a thread, not a task
    for (uint64_t i = 0; i < iterations; ++i)
        for (double& v : scratch) v = v * 0.5 + 0.25;
    return scratch.front() + seed;
}

double work(uint64_t kind, uint64_t iterations, double seed) {
    return kind == 0 ? compute(iterations, seed) : stream(iterations, seed);
}

int32_t point_kernel(const KernelArgs* a) {
    if (a->scalar_count != 6 || a->tensor_count < 1) return kernel_fail(a, "metg_point: takes 6 scalars and a row");
    const uint64_t t = a->scalars[0], x = a->scalars[1], width = a->scalars[2], pattern = a->scalars[3];
    uint32_t want[MAX_DEPS];
    const uint32_t n = deps(static_cast<uint32_t>(pattern), static_cast<uint32_t>(t), static_cast<uint32_t>(x),
                            static_cast<uint32_t>(width), want);
    if (a->tensor_count != n + 1)
        return kernel_fail(a, "metg_point (%llu, %llu): %u inputs, the pattern names %u",
                           static_cast<unsigned long long>(t), static_cast<unsigned long long>(x), a->tensor_count - 1,
                           n);
    double seed = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const Tensor& in = a->tensors[i + 1];
        const double* row = base_ptr<double>(in) + in.start_offset;
        if (row[0] != static_cast<double>(t - 1) || row[1] != static_cast<double>(want[i]))
            return kernel_fail(a, "metg_point (%llu, %llu): input %u holds (%g, %g), not (%llu, %u): a missing edge",
                               static_cast<unsigned long long>(t), static_cast<unsigned long long>(x), i, row[0],
                               row[1], static_cast<unsigned long long>(t - 1), want[i]);
        seed += row[2] * 1e-9;
    }
    const Tensor& out = a->tensors[0];
    double* row = base_ptr<double>(out) + out.start_offset;
    row[2] = work(a->scalars[5], a->scalars[4], seed);
    row[0] = static_cast<double>(t);
    row[1] = static_cast<double>(x);
    return CHIP_OK;
}

int32_t submit_point(const Orchestration& o, uint32_t k, const Tensor& all, uint32_t t, uint32_t x, uint32_t width,
                     const uint64_t* params) {
    Tensor ts[MAX_DEPS + 1];
    TensorArgType tags[MAX_DEPS + 1];
    const auto row = [&](uint32_t gen, uint32_t p, Tensor& r) {
        return make_row_tile(all, (gen % 2) * width + p, (gen % 2) * width + p + 1, r);
    };
    uint32_t want[MAX_DEPS];
    const uint32_t n = deps(static_cast<uint32_t>(params[0]), t, x, width, want);
    if (!row(t, x, ts[0])) return o.fail("metg.graph: the buffer has no row for point (%u, %u)", t, x);
    tags[0] = TensorArgType::OUTPUT_EXISTING;
    for (uint32_t i = 0; i < n; ++i) {
        (void)row(t - 1, want[i], ts[i + 1]);
        tags[i + 1] = TensorArgType::INPUT;
    }
    const uint64_t scalars[6] = {t, x, width, params[0], params[1], params[2]};
    return o.submit(k, ts, tags, n + 1, scalars, 6);
}

int32_t point_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("metg_point", &k); rc != CHIP_OK) return rc;
    if (o.tensor_count() < 1 || o.scalar_count() != 6) return o.fail("metg.point: a row, its inputs and 6 scalars");
    Tensor ts[MAX_DEPS + 1];
    TensorArgType tags[MAX_DEPS + 1];
    const auto n = static_cast<uint32_t>(o.tensor_count());
    if (n > MAX_DEPS + 1) return o.fail("metg.point: at most %u inputs", MAX_DEPS);
    for (uint32_t i = 0; i < n; ++i) {
        ts[i] = o.arg(static_cast<int32_t>(i));
        tags[i] = i == 0 ? TensorArgType::OUTPUT_EXISTING : TensorArgType::INPUT;
    }
    uint64_t scalars[6];
    for (int32_t i = 0; i < 6; ++i) scalars[i] = o.scalar(i);
    return o.submit(k, ts, tags, n, scalars, 6);
}

int32_t graph_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("metg_point", &k); rc != CHIP_OK) return rc;
    if (o.tensor_count() != 1 || o.scalar_count() != 5) return o.fail("metg.graph: the buffer and 5 scalars");
    const auto width = static_cast<uint32_t>(o.scalar(0)), steps = static_cast<uint32_t>(o.scalar(1));
    const uint64_t params[3] = {o.scalar(2), o.scalar(3), o.scalar(4)};  // pattern, iterations, kind
    for (uint32_t t = 0; t < steps; ++t)
        for (uint32_t x = 0; x < width; ++x)
            if (int32_t rc = submit_point(o, k, o.arg(0), t, x, width, params); rc != CHIP_OK) return rc;
    return CHIP_OK;
}

int32_t serial_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    if (o.scalar_count() != 5) return o.fail("metg.serial: 5 scalars");
    const uint64_t points = o.scalar(0) * o.scalar(1);
    double sink = 0;
    for (uint64_t p = 0; p < points; ++p) sink += work(o.scalar(4), o.scalar(3), static_cast<double>(p));
    return std::isnan(sink) ? o.fail("metg.serial: NaN") : CHIP_OK;
}

const LibraryEntry ENTRIES[] = {
    kernel_entry("metg_point", point_kernel),
    orchestration_entry("metg.point", point_orch),
    orchestration_entry("metg.graph", graph_orch),
    orchestration_entry("metg.serial", serial_orch),
};

}  // namespace

SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)

// The same kernel for a Python sub-worker, called through ctypes.
extern "C" __attribute__((visibility("default"))) double metg_work(uint64_t kind, uint64_t iterations, double seed) {
    return work(kind, iterations, seed);
}
