#include "simpler/chip/std_orchestrations.h"

#include <algorithm>
#include <initializer_list>

namespace simpler::chip {
namespace {

// Two row tiles per core, so a core that finishes early takes another; one
// core (an OpenCL chip, whose kernels each span the whole device) gets one.
uint32_t tile_count(const Orchestration& o, uint32_t rows) {
    const uint32_t want = o.core_count() <= 1 ? 1 : o.core_count() * 2;
    return std::min(want, rows);
}

// An elementwise tile moves at least this many output bytes: below it, the
// submit, overlap bookkeeping and hand-off of a kernel cost more than the
// elements it saves another core, so a small tensor runs as one kernel.
constexpr uint64_t MIN_ELEMENTWISE_TILE_BYTES = 16 * 1024;

uint32_t elementwise_tile_count(const Orchestration& o, const Tensor& out) {
    uint64_t bytes = data_type_element_size(out.dtype);
    for (uint32_t d = 0; d < out.ndims; ++d) bytes *= out.shapes[d];
    const uint64_t by_size = std::max<uint64_t>(1, bytes / MIN_ELEMENTWISE_TILE_BYTES);
    return static_cast<uint32_t>(std::min<uint64_t>(tile_count(o, out.shapes[0]), by_size));
}

int32_t check_args(const Orchestration& o, const char* name, int32_t tensors, int32_t scalars) {
    if (o.tensor_count() != tensors || o.scalar_count() < scalars)
        return o.fail("%s takes %d tensors and %d scalars (got %d and %d)", name, tensors, scalars, o.tensor_count(),
                      o.scalar_count());
    return CHIP_OK;
}

// Row tiles [begin, end) of `rows` rows split `tiles` ways.
template <typename F>
int32_t for_each_tile(uint32_t rows, uint32_t tiles, F&& f) {
    for (uint32_t t = 0; t < tiles; ++t) {
        const uint32_t begin = static_cast<uint32_t>(uint64_t{rows} * t / tiles);
        const uint32_t end = static_cast<uint32_t>(uint64_t{rows} * (t + 1) / tiles);
        if (begin == end) continue;
        if (int32_t rc = f(begin, end); rc != CHIP_OK) return rc;
    }
    return CHIP_OK;
}

// Elementwise ops over same-shaped tensors: inputs then one output, tiled on dim 0.
int32_t elementwise(const OrchestrationContext* ctx, const char* name, int32_t tensors, int32_t scalars) {
    Orchestration o(ctx);
    if (int32_t rc = check_args(o, name, tensors, scalars); rc != CHIP_OK) return rc;
    uint32_t kid = 0;
    if (int32_t rc = o.kernel_id(name, &kid); rc != CHIP_OK) return rc;
    const Tensor& out = o.arg(tensors - 1);
    for (int32_t i = 0; i < tensors; ++i) {
        if (o.arg(i).ndims != out.ndims || o.arg(i).shapes[0] != out.shapes[0])
            return o.fail("%s: argument %d's shape differs from the output's", name, i);
    }
    return for_each_tile(out.shapes[0], elementwise_tile_count(o, out), [&](uint32_t begin, uint32_t end) -> int32_t {
        Tensor tiles[3];
        for (int32_t i = 0; i < tensors; ++i) {
            if (!make_row_tile(o.arg(i), begin, end, tiles[i])) return o.fail("%s: cannot tile argument %d", name, i);
        }
        if (tensors == 3) {
            return o.submit(kid, {{tiles[0], TensorArgType::INPUT},
                                  {tiles[1], TensorArgType::INPUT},
                                  {tiles[2], TensorArgType::OUTPUT_EXISTING}});
        }
        if (scalars == 1) {
            return o.submit(kid, {{tiles[0], TensorArgType::INPUT}, {tiles[1], TensorArgType::OUTPUT_EXISTING}},
                            {o.scalar(0)});
        }
        return o.submit(kid, {{tiles[0], TensorArgType::INPUT}, {tiles[1], TensorArgType::OUTPUT_EXISTING}});
    });
}

int32_t vector_add(const OrchestrationContext* ctx) { return elementwise(ctx, "std.vector_add", 3, 0); }
int32_t mul(const OrchestrationContext* ctx) { return elementwise(ctx, "std.mul", 3, 0); }
int32_t add_scalar(const OrchestrationContext* ctx) { return elementwise(ctx, "std.add_scalar", 2, 1); }
int32_t copy(const OrchestrationContext* ctx) { return elementwise(ctx, "std.copy", 2, 0); }

int32_t matmul(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    if (int32_t rc = check_args(o, "std.matmul", 3, 0); rc != CHIP_OK) return rc;
    uint32_t kid = 0;
    if (int32_t rc = o.kernel_id("std.matmul", &kid); rc != CHIP_OK) return rc;
    const Tensor& A = o.arg(0);
    const Tensor& B = o.arg(1);
    const Tensor& C = o.arg(2);
    if (A.ndims != 2 || C.ndims != 2 || A.shapes[0] != C.shapes[0])
        return o.fail("std.matmul: A and C must be 2-D with the same row count");
    return for_each_tile(C.shapes[0], tile_count(o, C.shapes[0]), [&](uint32_t begin, uint32_t end) -> int32_t {
        Tensor a_tile, c_tile;
        if (!make_row_tile(A, begin, end, a_tile) || !make_row_tile(C, begin, end, c_tile))
            return o.fail("std.matmul: cannot tile rows [%u, %u)", begin, end);
        return o.submit(
            kid, {{a_tile, TensorArgType::INPUT}, {B, TensorArgType::INPUT}, {c_tile, TensorArgType::OUTPUT_EXISTING}});
    });
}

// std.sum_n (x_1, ..., x_k, out; [p]): row tiles of every argument, one
// kernel task per tile with all k + 1 tile views and p (out tagged INOUT when
// p is not 0, i.e. out is one of the terms, else OUTPUT_EXISTING).
int32_t sum_n(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    const int32_t n = o.tensor_count();
    if (n < 2 || n > CORE_MAX_TENSOR_ARGS || o.scalar_count() > 1)
        return o.fail(
            "std.sum_n takes 1 to %d input tensors, one output and at most 1 scalar (got %d tensors and %d "
            "scalars)",
            CORE_MAX_TENSOR_ARGS - 1, n, o.scalar_count());
    uint32_t kid = 0;
    if (int32_t rc = o.kernel_id("std.sum_n", &kid); rc != CHIP_OK) return rc;
    const Tensor& out = o.arg(n - 1);
    for (int32_t i = 0; i < n; ++i) {
        if (o.arg(i).ndims == 0 || o.arg(i).ndims != out.ndims || o.arg(i).shapes[0] != out.shapes[0])
            return o.fail("std.sum_n: argument %d's shape differs from the output's", i);
    }
    const uint64_t place = o.scalar_count() == 1 ? o.scalar(0) : 0;
    if (place > static_cast<uint64_t>(n))
        return o.fail("std.sum_n: the output's place among the terms is %llu, past the %d terms",
                      static_cast<unsigned long long>(place), n);
    const bool accumulate = place != 0;
    const uint64_t scalars[1] = {place};
    int32_t tags[CORE_MAX_TENSOR_ARGS];
    for (int32_t i = 0; i + 1 < n; ++i) tags[i] = static_cast<int32_t>(TensorArgType::INPUT);
    tags[n - 1] = static_cast<int32_t>(accumulate ? TensorArgType::INOUT : TensorArgType::OUTPUT_EXISTING);
    return for_each_tile(out.shapes[0], tile_count(o, out.shapes[0]), [&](uint32_t begin, uint32_t end) -> int32_t {
        Tensor tiles[CORE_MAX_TENSOR_ARGS];
        for (int32_t i = 0; i < n; ++i) {
            if (!make_row_tile(o.arg(i), begin, end, tiles[i])) return o.fail("std.sum_n: cannot tile argument %d", i);
        }
        return ctx->ops->submit(ctx->runtime, kid, tiles, tags, static_cast<uint32_t>(n), scalars, 1);
    });
}

// The linear algebra kernels (std_linalg_kernels.h): one kernel task over the
// whole tiles, each tensor tagged as `tags` says, the scalars passed on. Not
// split: the kernels call the serial BLAS, which a chip's core threads take
// turns in (std_blas.h), so a tile's parts would only queue behind each other.
int32_t whole_tiles(const OrchestrationContext* ctx, const char* name, std::initializer_list<TensorArgType> tags,
                    int32_t scalars) {
    Orchestration o(ctx);
    const auto tensors = static_cast<int32_t>(tags.size());
    if (o.tensor_count() != tensors || o.scalar_count() != scalars)
        return o.fail("%s takes %d tensors and %d scalars (got %d and %d)", name, tensors, scalars, o.tensor_count(),
                      o.scalar_count());
    uint32_t kid = 0;
    if (int32_t rc = o.kernel_id(name, &kid); rc != CHIP_OK) return rc;
    const TensorArgType* tag = tags.begin();
    if (tensors == 1) return o.submit(kid, {{o.arg(0), tag[0]}});
    if (tensors == 2) return o.submit(kid, {{o.arg(0), tag[0]}, {o.arg(1), tag[1]}});
    return o.submit(kid, {{o.arg(0), tag[0]}, {o.arg(1), tag[1]}, {o.arg(2), tag[2]}},
                    {o.scalar(0), o.scalar(1), o.scalar(2), o.scalar(3)});
}

int32_t potrf(const OrchestrationContext* ctx) { return whole_tiles(ctx, "std.potrf", {TensorArgType::INOUT}, 0); }
int32_t trsm(const OrchestrationContext* ctx) {
    return whole_tiles(ctx, "std.trsm", {TensorArgType::INPUT, TensorArgType::INOUT}, 0);
}
int32_t syrk(const OrchestrationContext* ctx) {
    return whole_tiles(ctx, "std.syrk", {TensorArgType::INPUT, TensorArgType::INOUT}, 0);
}
int32_t gemm(const OrchestrationContext* ctx) {
    return whole_tiles(ctx, "std.gemm", {TensorArgType::INPUT, TensorArgType::INPUT, TensorArgType::INOUT}, 4);
}

int32_t noop(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    return check_args(o, "std.noop", 0, 0);
}

const LibraryEntry ENTRIES[] = {
    orchestration_entry("std.noop", noop),   orchestration_entry("std.vector_add", vector_add),
    orchestration_entry("std.mul", mul),     orchestration_entry("std.add_scalar", add_scalar),
    orchestration_entry("std.copy", copy),   orchestration_entry("std.matmul", matmul),
    orchestration_entry("std.sum_n", sum_n), orchestration_entry("std.potrf", potrf),
    orchestration_entry("std.trsm", trsm),   orchestration_entry("std.syrk", syrk),
    orchestration_entry("std.gemm", gemm),
};

}  // namespace

const LibraryTable& standard_orchestration_table() noexcept {
    static const LibraryTable table{CHIP_ABI_VERSION, sizeof(ENTRIES) / sizeof(ENTRIES[0]), ENTRIES};
    return table;
}

}  // namespace simpler::chip
