// The fixed-capacity argument storage template and the L2 ABI alias built on it.
//
// StorageTaskArgs<TensorT, T, S> is a POD: TensorT[T], u64 scalars[S], then the
// two counts. Tensors come before scalars. ChipStorageTaskArgs is what a chip
// worker receives after materialization (ChipTensor elements). This header
// carries no wire type: the L3+ TaskArgs, the blob codec and the submit checks
// are in task_args_wire.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "simpler/task_interface/tensor.h"

namespace simpler {

inline constexpr int32_t CORE_MAX_TENSOR_ARGS = 32;
inline constexpr int32_t CORE_MAX_SCALAR_ARGS = 16;
inline constexpr int32_t CHIP_MAX_TENSOR_ARGS = 256;
inline constexpr int32_t CHIP_MAX_SCALAR_ARGS = 128;
inline constexpr size_t TASKPAYLOAD_TENSOR_STRIDE = 128;
inline constexpr size_t TASK_PAYLOAD_SIZE = 4864;

enum class StorageAddResult : uint8_t { OK = 0, FULL = 1, TENSOR_AFTER_SCALAR = 2 };

template <typename TensorT, int32_t MaxTensors, int32_t MaxScalars>
struct StorageTaskArgs {
    static constexpr int32_t MAX_TENSORS = MaxTensors;
    static constexpr int32_t MAX_SCALARS = MaxScalars;

    TensorT tensors[MaxTensors];
    uint64_t scalars[MaxScalars];
    int32_t tensor_count;
    int32_t scalar_count;

    // Dispatch-path forms: no exceptions, the refusal as a value.
    StorageAddResult try_add_tensor(const TensorT& t) noexcept {
        if (scalar_count > 0) return StorageAddResult::TENSOR_AFTER_SCALAR;
        if (tensor_count < 0 || tensor_count >= MaxTensors) return StorageAddResult::FULL;
        tensors[tensor_count++] = t;
        return StorageAddResult::OK;
    }
    StorageAddResult try_add_scalar(uint64_t v) noexcept {
        if (scalar_count < 0 || scalar_count >= MaxScalars) return StorageAddResult::FULL;
        scalars[scalar_count++] = v;
        return StorageAddResult::OK;
    }

    // Host-layer forms: std::length_error past a cap, std::invalid_argument for a
    // tensor added after a scalar.
    void add_tensor(const TensorT& t) {
        switch (try_add_tensor(t)) {
            case StorageAddResult::OK: return;
            case StorageAddResult::FULL:
                throw std::length_error("ChipStorageTaskArgs.tensors: capacity " + std::to_string(MaxTensors) +
                                        " exceeded");
            case StorageAddResult::TENSOR_AFTER_SCALAR:
                throw std::invalid_argument("ChipStorageTaskArgs.tensors: a tensor cannot follow a scalar");
        }
    }
    void add_scalar(uint64_t v) {
        if (try_add_scalar(v) != StorageAddResult::OK)
            throw std::length_error("ChipStorageTaskArgs.scalars: capacity " + std::to_string(MaxScalars) +
                                    " exceeded");
    }
    void clear() noexcept { tensor_count = scalar_count = 0; }
};

using ChipStorageTaskArgs = StorageTaskArgs<ChipTensor, CHIP_MAX_TENSOR_ARGS, CHIP_MAX_SCALAR_ARGS>;

static_assert(std::is_trivially_copyable_v<ChipStorageTaskArgs>);
static_assert(std::is_standard_layout_v<ChipStorageTaskArgs>);
static_assert(offsetof(ChipStorageTaskArgs, tensors) == 0);
static_assert(offsetof(ChipStorageTaskArgs, scalars) == 72 * 256);
static_assert(offsetof(ChipStorageTaskArgs, tensor_count) == 72 * 256 + 8 * 128);
static_assert(offsetof(ChipStorageTaskArgs, scalar_count) == 72 * 256 + 8 * 128 + 4);
static_assert(sizeof(ChipStorageTaskArgs) == 72 * 256 + 8 * 128 + 8);

}  // namespace simpler
