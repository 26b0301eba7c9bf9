// libFuzzer target for the argument blob reader (TaskArgsView / read_blob), the
// one place bytes become Tensors. Invariants checked on every input:
//  - open() and tensor(i) never read outside [data, data + size) (ASan);
//  - every tensor handed out passes validate_tensor and its view ends within
//    nbytes, and rebuilding it through make_tensor gives an equal Tensor;
//  - read_blob succeeds exactly when open() and every tensor(i) succeed, and
//    then returns the same tensors and scalars;
//  - re-encoding a fully valid blob reproduces its bytes;
//  - the branch-light predicates agree with the ordered diagnoses.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

#define FUZZ_CHECK(cond)               \
    do {                               \
        if (!(cond)) __builtin_trap(); \
    } while (0)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // The fast predicates and the ordered diagnoses agree on any 144 bytes.
    if (size >= sizeof(Tensor)) {
        Tensor raw;
        std::memcpy(&raw, data, sizeof raw);
        FUZZ_CHECK(tensor_is_valid(raw) == diagnose_tensor(raw).ok());
        FUZZ_CHECK(buffer_descriptor_is_valid(raw.buffer) == diagnose_buffer_descriptor(raw.buffer).ok());
    }
    TaskArgsView view;
    const bool opened = TaskArgsView::open(data, size, view).ok();
    bool all_valid = opened;
    std::vector<Tensor> tensors;
    if (opened) {
        FUZZ_CHECK(view.size_bytes() <= size);
        for (int32_t i = 0; i < view.tensor_count(); ++i) {
            Tensor t;
            ValidationError e = view.tensor(i, t);
            if (!e.ok()) {
                FUZZ_CHECK(e.element == i && !e.message().empty());
                all_valid = false;
                continue;
            }
            FUZZ_CHECK(validate_tensor(t).ok());
            const uint64_t extent = t.extent_bytes();
            FUZZ_CHECK(extent != TENSOR_EXTENT_UNREPRESENTABLE);
            FUZZ_CHECK(t.byte_offset <= t.buffer.nbytes && extent <= t.buffer.nbytes - t.byte_offset);
            Tensor rebuilt =
                make_tensor(t.buffer, std::span<const uint32_t>(t.shapes, t.ndims), static_cast<DataType>(t.dtype),
                            std::span<const uint32_t>(t.strides, t.ndims), t.byte_offset);
            FUZZ_CHECK(rebuilt == t);
            tensors.push_back(t);
        }
    }
    try {
        DecodedTaskArgs out = read_blob(data, size);
        FUZZ_CHECK(all_valid);
        FUZZ_CHECK(out.tensors.size() == tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i) FUZZ_CHECK(out.tensors[i] == tensors[i]);
        FUZZ_CHECK(out.scalars.size() == static_cast<size_t>(view.scalar_count()));
        TaskArgs args;
        for (const Tensor& t : out.tensors) args.add_tensor(t, TensorArgType::NO_DEP);
        for (uint64_t s : out.scalars) args.add_scalar(s);
        std::vector<std::byte> again = encode_blob(args);
        FUZZ_CHECK(again.size() == view.size_bytes());
        FUZZ_CHECK(std::memcmp(again.data(), data, again.size()) == 0);
    } catch (const std::invalid_argument&) {
        FUZZ_CHECK(!all_valid);
    }
    return 0;
}
