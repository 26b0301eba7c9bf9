// The L3+ argument list (TaskArgs: wire Tensors with their tags, then scalars)
// and its only serialized form, the argument blob (docs/internals/abi.md):
//
//   offset 0          i32  T  tensor count
//   offset 4          i32  S  scalar count
//   offset 8          Tensor[T]   144 B each
//   offset 8 + 144*T  u64[S]
//
// TaskArgsView is the one place blob bytes become typed values: open() checks
// the header and the size before anything is decoded, and tensor(i) copies the
// element to an aligned local and validates it before handing it out. Both are
// noexcept and report refusals as ValidationError. Tags never enter a blob.
//
// Like buffer.h, this header must not reach a kernel translation unit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler {

inline constexpr size_t BLOB_HEADER_BYTES = 8;

class Tiling;

class TaskArgs {
public:
    // Validates t, checks that its buffer grants what `tag` needs and that no
    // scalar has been added yet; throws std::invalid_argument naming the
    // argument index on refusal and leaves the list unchanged.
    void add_tensor(const Tensor& t, TensorArgType tag = TensorArgType::INPUT);
    void add_scalar(uint64_t value);
    // Room for `tensors` tensor arguments without reallocating (a builder
    // that knows the count: tile_task_args).
    void reserve(size_t tensors);
    // Retags argument i; std::out_of_range for a bad index, std::invalid_argument
    // when the buffer does not grant what the new tag needs.
    void set_tag(size_t i, TensorArgType tag);

    [[nodiscard]] size_t tensor_count() const noexcept { return tensors_.size(); }
    [[nodiscard]] size_t scalar_count() const noexcept { return scalars_.size(); }
    // Bounds-checked: std::out_of_range names the index and the count.
    [[nodiscard]] const Tensor& tensor(size_t i) const;
    [[nodiscard]] TensorArgType tag(size_t i) const;
    [[nodiscard]] uint64_t scalar(size_t i) const;
    [[nodiscard]] std::span<const Tensor> tensors() const noexcept { return tensors_; }
    [[nodiscard]] std::span<const TensorArgType> tags() const noexcept { return tags_; }
    [[nodiscard]] std::span<const uint64_t> scalars() const noexcept { return scalars_; }
    void clear() noexcept;

    // Re-checks access ⊆ granted for every argument (tags stay mutable after
    // add_tensor, so submit calls this where the values are final).
    void check_access() const;

private:
    friend class Tiling;
    // add_tensor without its checks, for a view a Tiling proved valid: a tile
    // of an operand whose whole view and tag add_tensor accepted (tiling.h).
    void add_proven_tensor(const Tensor& t, TensorArgType tag) {
        tensors_.push_back(t);
        tags_.push_back(tag);
    }

    std::vector<Tensor> tensors_;
    std::vector<TensorArgType> tags_;
    std::vector<uint64_t> scalars_;
};

// Bytes of a blob with t tensors and s scalars; SIZE_MAX when either count is
// negative or the size does not fit.
size_t blob_size(int64_t t, int64_t s) noexcept;
size_t blob_size(const TaskArgs& args) noexcept;

// Writes args as a blob into out and returns the bytes written; throws
// std::length_error when out is too small or a count exceeds INT32_MAX.
size_t write_blob(const TaskArgs& args, std::span<std::byte> out);
std::vector<std::byte> encode_blob(const TaskArgs& args);

class TaskArgsView {
public:
    // Checks, in order: capacity >= 8; T >= 0 and S >= 0; 8 + 144*T + 8*S <=
    // capacity (overflow-free). On success `out` views the blob; on failure
    // `out` is untouched. `data` needs no particular alignment and must stay
    // alive and unchanged while the view is used.
    static ValidationError open(const void* data, size_t capacity, TaskArgsView& out) noexcept;

    [[nodiscard]] int32_t tensor_count() const noexcept { return tensor_count_; }
    [[nodiscard]] int32_t scalar_count() const noexcept { return scalar_count_; }
    [[nodiscard]] size_t size_bytes() const noexcept { return blob_size(tensor_count_, scalar_count_); }

    // Copies element i into `out` and validates it; the error names element i.
    // An index outside [0, tensor_count) is refused, not read.
    ValidationError tensor(int32_t i, Tensor& out) const noexcept;
    // Scalar i, or 0 for an index outside [0, scalar_count).
    [[nodiscard]] uint64_t scalar(int32_t i) const noexcept;

private:
    const std::byte* data_ = nullptr;
    int32_t tensor_count_ = 0;
    int32_t scalar_count_ = 0;
};

struct DecodedTaskArgs {
    std::vector<Tensor> tensors;
    std::vector<uint64_t> scalars;
};

// All or nothing: opens the blob and validates every tensor, then returns them;
// throws std::invalid_argument with the first refusal and decodes nothing.
DecodedTaskArgs read_blob(const void* data, size_t capacity);

}  // namespace simpler
