// What a chip orchestration sees: its entry arguments (working tensors and
// scalars), and the operations it may call — look a kernel up by name, submit a
// kernel task with tagged working tensors and scalars, allocate a device
// temporary, report an error, read the bytes of a small entry argument (a
// control input: a size, a flag, a path) before submitting anything. Sub-views
// come from tile.h.
//
// C-ABI-shaped (a table of function pointers handed in by the runtime) so an
// orchestration library built outside the project links against nothing of
// simpler_core. Every op returns a ChipStatus; the runtime validates every
// tensor, tag and count it is handed and refuses with a message, so a
// malformed submit is an error of the run, never undefined behaviour.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <type_traits>

#include "simpler/chip/status.h"
#include "simpler/chip/tensor.h"
#include "simpler/chip/tile.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler::chip {

struct OrchestrationOps {
    uint32_t abi_version;  // CHIP_ABI_VERSION
    uint32_t _pad;
    int32_t (*kernel_id)(void* runtime, const char* name, uint32_t* out_id);
    int32_t (*submit)(void* runtime, uint32_t kernel_id, const Tensor* tensors, const int32_t* tags,
                      uint32_t tensor_count, const uint64_t* scalars, uint32_t scalar_count);
    // A contiguous device temporary of the given shape, freed when the run ends.
    int32_t (*alloc_tensor)(void* runtime, const uint32_t* shapes, uint32_t ndims, uint8_t dtype, Tensor* out);
    // Records the run's error message (the first error wins).
    void (*fail)(void* runtime, const char* message);
    // Copies the first `nbytes` bytes of contiguous entry argument `index`'s
    // view into host memory at `dst`, wherever the device keeps it; only before
    // the run's first submit, so no task of the run has written them.
    int32_t (*read_entry)(void* runtime, int32_t index, void* dst, uint64_t nbytes);
};

struct OrchestrationContext {
    const OrchestrationOps* ops;
    void* runtime;
    const Tensor* tensors;    // the entry arguments, adopted by Runtime::set_orch_args
    const uint64_t* scalars;
    int32_t tensor_count;
    int32_t scalar_count;
    uint32_t core_count;      // cores to tile for: the chip's core threads (at most block_dim; 1 on OpenCL)
    uint32_t _pad;
};

using OrchestrationFn = int32_t (*)(const OrchestrationContext* ctx);

static_assert(std::is_standard_layout_v<OrchestrationOps> && sizeof(OrchestrationOps) == 48);
static_assert(offsetof(OrchestrationOps, kernel_id) == 8 && offsetof(OrchestrationOps, submit) == 16);
static_assert(offsetof(OrchestrationOps, alloc_tensor) == 24 && offsetof(OrchestrationOps, fail) == 32);
static_assert(offsetof(OrchestrationOps, read_entry) == 40);
static_assert(std::is_standard_layout_v<OrchestrationContext> && sizeof(OrchestrationContext) == 48);
static_assert(offsetof(OrchestrationContext, tensors) == 16 && offsetof(OrchestrationContext, scalars) == 24);
static_assert(offsetof(OrchestrationContext, tensor_count) == 32 && offsetof(OrchestrationContext, core_count) == 40);

// One tagged argument of a submit.
struct TaskArg {
    Tensor tensor;
    TensorArgType tag;
};

// Convenience wrapper over an OrchestrationContext; header-only.
class Orchestration {
public:
    explicit Orchestration(const OrchestrationContext* ctx) noexcept : ctx_(ctx) {}

    [[nodiscard]] int32_t tensor_count() const noexcept { return ctx_->tensor_count; }
    [[nodiscard]] int32_t scalar_count() const noexcept { return ctx_->scalar_count; }
    [[nodiscard]] const Tensor& arg(int32_t i) const noexcept { return ctx_->tensors[i]; }
    [[nodiscard]] uint64_t scalar(int32_t i) const noexcept { return ctx_->scalars[i]; }
    [[nodiscard]] uint32_t core_count() const noexcept { return ctx_->core_count; }

    int32_t kernel_id(const char* name, uint32_t* out) const noexcept {
        return ctx_->ops->kernel_id(ctx_->runtime, name, out);
    }
    int32_t submit(uint32_t kernel, std::initializer_list<TaskArg> args,
                   std::initializer_list<uint64_t> scalars = {}) const noexcept {
        Tensor ts[CORE_MAX_TENSOR_ARGS];
        int32_t tags[CORE_MAX_TENSOR_ARGS];
        uint32_t n = 0;
        for (const TaskArg& a : args) {
            if (n == CORE_MAX_TENSOR_ARGS) return fail("submit: more than %d tensors", CORE_MAX_TENSOR_ARGS);
            ts[n] = a.tensor;
            tags[n] = static_cast<int32_t>(a.tag);
            ++n;
        }
        return ctx_->ops->submit(ctx_->runtime, kernel, ts, tags, n, scalars.begin(),
                                 static_cast<uint32_t>(scalars.size()));
    }
    // As above, for counts known only at run time: tensors[i] tagged tags[i].
    int32_t submit(uint32_t kernel, const Tensor* tensors, const TensorArgType* tags, uint32_t tensor_count,
                   const uint64_t* scalars, uint32_t scalar_count) const noexcept {
        int32_t raw[CORE_MAX_TENSOR_ARGS];
        if (tensor_count > CORE_MAX_TENSOR_ARGS) return fail("submit: more than %d tensors", CORE_MAX_TENSOR_ARGS);
        for (uint32_t i = 0; i < tensor_count; ++i) raw[i] = static_cast<int32_t>(tags[i]);
        return ctx_->ops->submit(ctx_->runtime, kernel, tensors, raw, tensor_count, scalars, scalar_count);
    }
    int32_t alloc_tensor(std::initializer_list<uint32_t> shapes, DataType dtype, Tensor* out) const noexcept {
        return ctx_->ops->alloc_tensor(ctx_->runtime, shapes.begin(), static_cast<uint32_t>(shapes.size()),
                                       static_cast<uint8_t>(dtype), out);
    }
    int32_t read_entry(int32_t index, void* dst, uint64_t nbytes) const noexcept {
        return ctx_->ops->read_entry(ctx_->runtime, index, dst, nbytes);
    }
    // Records a printf-style error for the run; returns CHIP_ERR_INVALID_ARGUMENT.
    __attribute__((format(printf, 2, 3))) int32_t fail(const char* fmt, ...) const noexcept {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        ctx_->ops->fail(ctx_->runtime, msg);
        return CHIP_ERR_INVALID_ARGUMENT;
    }

private:
    const OrchestrationContext* ctx_;
};

}  // namespace simpler::chip
