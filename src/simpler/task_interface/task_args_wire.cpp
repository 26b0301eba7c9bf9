#include "simpler/task_interface/task_args_wire.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace simpler {

namespace {

std::string describe_buffer(const BufferDescriptor& b) {
    return std::string(backend_kind_name(b.backend_kind)) + " buffer " + b.identity.to_string() + " (grants " +
           access_mode_name(b.access) + ")";
}

void check_tag(size_t index, const Tensor& t, TensorArgType tag) {
    if (!is_known_tag(tag))
        throw std::invalid_argument("TaskArgs argument " + std::to_string(index) + ": unknown TensorArgType " +
                                    std::to_string(static_cast<int32_t>(tag)));
    if (!tag_allowed(static_cast<AccessMode>(t.buffer.access), tag))
        throw std::invalid_argument("TaskArgs argument " + std::to_string(index) + ": tag " +
                                    tensor_arg_type_name(tag) + " needs access the buffer does not grant (" +
                                    describe_buffer(t.buffer) + ")");
}

[[noreturn]] void throw_index(const char* what, size_t i, size_t n) {
    throw std::out_of_range(std::string("TaskArgs.") + what + " index " + std::to_string(i) + " out of range (count " +
                            std::to_string(n) + ")");
}

}  // namespace

void TaskArgs::add_tensor(const Tensor& t, TensorArgType tag) {
    const size_t index = tensors_.size();
    if (ValidationError e = validate_tensor(t); !e.ok())
        throw std::invalid_argument("TaskArgs argument " + std::to_string(index) + ": " + e.message());
    if (!scalars_.empty())
        throw std::invalid_argument("TaskArgs argument " + std::to_string(index) +
                                    ": tensors must come before scalars (" + std::to_string(scalars_.size()) +
                                    " scalar(s) already added)");
    check_tag(index, t, tag);
    tensors_.push_back(t);
    tags_.push_back(tag);
}

void TaskArgs::add_scalar(uint64_t value) { scalars_.push_back(value); }

void TaskArgs::reserve(size_t tensors) {
    tensors_.reserve(tensors);
    tags_.reserve(tensors);
}

void TaskArgs::set_tag(size_t i, TensorArgType tag) {
    if (i >= tensors_.size()) throw_index("set_tag", i, tensors_.size());
    check_tag(i, tensors_[i], tag);
    tags_[i] = tag;
}

const Tensor& TaskArgs::tensor(size_t i) const {
    if (i >= tensors_.size()) throw_index("tensor", i, tensors_.size());
    return tensors_[i];
}

TensorArgType TaskArgs::tag(size_t i) const {
    if (i >= tags_.size()) throw_index("tag", i, tags_.size());
    return tags_[i];
}

uint64_t TaskArgs::scalar(size_t i) const {
    if (i >= scalars_.size()) throw_index("scalar", i, scalars_.size());
    return scalars_[i];
}

void TaskArgs::clear() noexcept {
    tensors_.clear();
    tags_.clear();
    scalars_.clear();
}

void TaskArgs::check_access() const {
    for (size_t i = 0; i < tensors_.size(); ++i) check_tag(i, tensors_[i], tags_[i]);
}

size_t blob_size(int64_t t, int64_t s) noexcept {
    if (t < 0 || s < 0) return SIZE_MAX;
    uint64_t a, b, r;
    if (__builtin_mul_overflow(static_cast<uint64_t>(t), uint64_t{sizeof(Tensor)}, &a) ||
        __builtin_mul_overflow(static_cast<uint64_t>(s), uint64_t{8}, &b) || __builtin_add_overflow(a, b, &r) ||
        __builtin_add_overflow(r, uint64_t{BLOB_HEADER_BYTES}, &r) || r > SIZE_MAX)
        return SIZE_MAX;
    return static_cast<size_t>(r);
}

size_t blob_size(const TaskArgs& args) noexcept {
    return blob_size(static_cast<int64_t>(args.tensor_count()), static_cast<int64_t>(args.scalar_count()));
}

size_t write_blob(const TaskArgs& args, std::span<std::byte> out) {
    if (args.tensor_count() > INT32_MAX || args.scalar_count() > INT32_MAX)
        throw std::length_error("argument blob: more than INT32_MAX tensors or scalars");
    const size_t need = blob_size(args);
    if (need == SIZE_MAX || out.size() < need)
        throw std::length_error("argument blob: needs " + std::to_string(need) + " bytes, capacity is " +
                                std::to_string(out.size()));
    const int32_t t = static_cast<int32_t>(args.tensor_count());
    const int32_t s = static_cast<int32_t>(args.scalar_count());
    std::byte* p = out.data();
    std::memcpy(p, &t, 4);
    std::memcpy(p + 4, &s, 4);
    // One element at a time: a single memcpy of tens of KiB between nearby heap
    // blocks takes glibc's string-copy path, measured at ~2 GB/s on this machine
    // against ~40 GB/s for fixed 144-byte copies (docs/benchmarks/notes.md).
    std::byte* dst = p + BLOB_HEADER_BYTES;
    for (const Tensor& tensor : args.tensors()) {
        std::memcpy(dst, &tensor, sizeof(Tensor));
        dst += sizeof(Tensor);
    }
    if (s > 0)
        std::memcpy(p + BLOB_HEADER_BYTES + sizeof(Tensor) * static_cast<size_t>(t), args.scalars().data(),
                    8 * static_cast<size_t>(s));
    return need;
}

std::vector<std::byte> encode_blob(const TaskArgs& args) {
    std::vector<std::byte> out(blob_size(args));
    write_blob(args, out);
    return out;
}

ValidationError TaskArgsView::open(const void* data, size_t capacity, TaskArgsView& out) noexcept {
    constexpr const char* kBlob = "argument blob";
    if (data == nullptr && capacity != 0) return ValidationError::fail(kBlob, "data", "must not be null");
    if (capacity < BLOB_HEADER_BYTES)
        return ValidationError::fail(kBlob, "capacity", "must hold the 8-byte header", capacity);
    int32_t t, s;
    std::memcpy(&t, data, 4);
    std::memcpy(&s, static_cast<const std::byte*>(data) + 4, 4);
    if (t < 0)
        return ValidationError::fail(kBlob, "tensor_count", "must be >= 0", static_cast<uint64_t>(int64_t{t}))
            .as_signed();
    if (s < 0)
        return ValidationError::fail(kBlob, "scalar_count", "must be >= 0", static_cast<uint64_t>(int64_t{s}))
            .as_signed();
    const size_t need = blob_size(t, s);
    if (need > capacity)
        return ValidationError::fail(kBlob, "tensor_count",
                                     "8 + 144*tensor_count + 8*scalar_count bytes must fit the capacity", need)
            .with_max(capacity);
    out.data_ = static_cast<const std::byte*>(data);
    out.tensor_count_ = t;
    out.scalar_count_ = s;
    return {};
}

ValidationError TaskArgsView::tensor(int32_t i, Tensor& out) const noexcept {
    if (i < 0 || i >= tensor_count_)
        return ValidationError::fail("argument blob", "tensor index", "must be in [0, tensor_count)",
                                     static_cast<uint64_t>(int64_t{i}))
            .as_signed();
    // Validate the aligned copy, never the shared bytes: they may change under us.
    std::memcpy(&out, data_ + BLOB_HEADER_BYTES + sizeof(Tensor) * static_cast<size_t>(i), sizeof(Tensor));
    if (tensor_is_valid(out)) return {};
    return diagnose_tensor(out).at_element(i);
}

uint64_t TaskArgsView::scalar(int32_t i) const noexcept {
    if (i < 0 || i >= scalar_count_) return 0;
    uint64_t v;
    std::memcpy(
        &v,
        data_ + BLOB_HEADER_BYTES + sizeof(Tensor) * static_cast<size_t>(tensor_count_) + 8 * static_cast<size_t>(i),
        8);
    return v;
}

DecodedTaskArgs read_blob(const void* data, size_t capacity) {
    TaskArgsView view;
    throw_if_invalid(TaskArgsView::open(data, capacity, view));
    DecodedTaskArgs out;
    out.tensors.resize(static_cast<size_t>(view.tensor_count()));
    for (int32_t i = 0; i < view.tensor_count(); ++i)
        throw_if_invalid(view.tensor(i, out.tensors[static_cast<size_t>(i)]));
    out.scalars.resize(static_cast<size_t>(view.scalar_count()));
    for (int32_t i = 0; i < view.scalar_count(); ++i) out.scalars[static_cast<size_t>(i)] = view.scalar(i);
    return out;
}

}  // namespace simpler
