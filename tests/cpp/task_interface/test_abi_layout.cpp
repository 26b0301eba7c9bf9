// Pins the wire layout from outside the headers (docs/internals/abi.md): sizes, alignment,
// every field offset, and every enum value. A drift fails here even if someone
// edits the static_asserts beside the definitions.
#include <gtest/gtest.h>

#include <cstddef>

#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/call_config.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/task_args_wire.h"
#include "simpler/task_interface/tensor.h"
#include "simpler/task_interface/tensor_arg_type.h"

using namespace simpler;

TEST(AbiLayout, ConstantsMatchTheAbi) {
    EXPECT_EQ(BUFFER_DESCRIPTOR_MAGIC, 0x5342);
    EXPECT_EQ(OWNER_INSTANCE_ID_BYTES, 8u);
    EXPECT_EQ(DESC_MAX_BYTES, 32u);
    EXPECT_EQ(BACKEND_ADDRESS_BODY_BYTES, 8u);
    EXPECT_EQ(MAX_TENSOR_DIMS, 5u);
    EXPECT_EQ(TENSOR_EXTENT_UNREPRESENTABLE, UINT64_MAX);
    EXPECT_EQ(CORE_MAX_TENSOR_ARGS, 32);
    EXPECT_EQ(CORE_MAX_SCALAR_ARGS, 16);
    EXPECT_EQ(CHIP_MAX_TENSOR_ARGS, 256);
    EXPECT_EQ(CHIP_MAX_SCALAR_ARGS, 128);
    EXPECT_EQ(TASKPAYLOAD_TENSOR_STRIDE, 128u);
    EXPECT_EQ(TASK_PAYLOAD_SIZE, 4864u);
    EXPECT_EQ(BLOB_HEADER_BYTES, 8u);
}

TEST(AbiLayout, CanonicalIdentityIs32BytesWithFixedOffsets) {
    EXPECT_EQ(sizeof(CanonicalIdentity), 32u);
    EXPECT_EQ(alignof(CanonicalIdentity), 8u);
    EXPECT_EQ(offsetof(CanonicalIdentity, owner_instance_id), 0u);
    EXPECT_EQ(offsetof(CanonicalIdentity, buffer_id), 8u);
    EXPECT_EQ(offsetof(CanonicalIdentity, generation), 16u);
    EXPECT_EQ(offsetof(CanonicalIdentity, _pad), 20u);
}

TEST(AbiLayout, BufferDescriptorIs88BytesWithFixedOffsets) {
    EXPECT_EQ(sizeof(BufferDescriptor), 88u);
    EXPECT_EQ(alignof(BufferDescriptor), 8u);
    EXPECT_EQ(offsetof(BufferDescriptor, magic), 0u);
    EXPECT_EQ(offsetof(BufferDescriptor, address_space), 2u);
    EXPECT_EQ(offsetof(BufferDescriptor, access), 3u);
    EXPECT_EQ(offsetof(BufferDescriptor, backend_kind), 4u);
    EXPECT_EQ(offsetof(BufferDescriptor, _pad0), 5u);
    EXPECT_EQ(offsetof(BufferDescriptor, identity), 8u);
    EXPECT_EQ(offsetof(BufferDescriptor, nbytes), 40u);
    EXPECT_EQ(offsetof(BufferDescriptor, owner_worker_path_id), 48u);
    EXPECT_EQ(offsetof(BufferDescriptor, body_len), 52u);
    EXPECT_EQ(offsetof(BufferDescriptor, _pad1), 54u);
    EXPECT_EQ(offsetof(BufferDescriptor, body), 56u);
}

TEST(AbiLayout, TensorIs144BytesWithFixedOffsets) {
    EXPECT_EQ(sizeof(Tensor), 144u);
    EXPECT_EQ(alignof(Tensor), 8u);
    EXPECT_EQ(offsetof(Tensor, buffer), 0u);
    EXPECT_EQ(offsetof(Tensor, byte_offset), 88u);
    EXPECT_EQ(offsetof(Tensor, ndims), 96u);
    EXPECT_EQ(offsetof(Tensor, shapes), 100u);
    EXPECT_EQ(offsetof(Tensor, strides), 120u);
    EXPECT_EQ(offsetof(Tensor, dtype), 140u);
    EXPECT_EQ(offsetof(Tensor, _pad), 141u);
}

TEST(AbiLayout, ChipTensorIs72BytesWithFixedOffsets) {
    EXPECT_EQ(sizeof(ChipTensor), 72u);
    EXPECT_EQ(alignof(ChipTensor), 8u);
    EXPECT_EQ(offsetof(ChipTensor, buffer) + offsetof(ChipBuffer, addr), 0u);
    EXPECT_EQ(offsetof(ChipTensor, buffer) + offsetof(ChipBuffer, size), 8u);
    EXPECT_EQ(offsetof(ChipTensor, start_offset), 16u);
    EXPECT_EQ(offsetof(ChipTensor, shapes), 24u);
    EXPECT_EQ(offsetof(ChipTensor, strides), 44u);
    EXPECT_EQ(offsetof(ChipTensor, ndims), 64u);
    EXPECT_EQ(offsetof(ChipTensor, dtype), 68u);
    EXPECT_EQ(offsetof(ChipTensor, address_space), 69u);
    EXPECT_EQ(offsetof(ChipTensor, _pad), 70u);
}

TEST(AbiLayout, ChipStorageTaskArgsPutsTensorsThenScalarsThenCounts) {
    EXPECT_EQ(offsetof(ChipStorageTaskArgs, tensors), 0u);
    EXPECT_EQ(offsetof(ChipStorageTaskArgs, scalars), 72u * 256);
    EXPECT_EQ(offsetof(ChipStorageTaskArgs, tensor_count), 72u * 256 + 8 * 128);
    EXPECT_EQ(offsetof(ChipStorageTaskArgs, scalar_count), 72u * 256 + 8 * 128 + 4);
}

TEST(AbiLayout, EnumValuesAreFrozen) {
    EXPECT_EQ(static_cast<int>(AddressSpace::HOST), 0);
    EXPECT_EQ(static_cast<int>(AddressSpace::DEVICE), 1);
    EXPECT_EQ(static_cast<int>(AccessMode::READ), 0);
    EXPECT_EQ(static_cast<int>(AccessMode::WRITE), 1);
    EXPECT_EQ(static_cast<int>(AccessMode::READWRITE), 2);
    EXPECT_EQ(static_cast<int>(BackendKind::FORK_SHM), 0);
    EXPECT_EQ(static_cast<int>(BackendKind::POSIX_SHM), 1);
    EXPECT_EQ(static_cast<int>(BackendKind::VMM_WINDOW), 2);
    EXPECT_EQ(static_cast<int>(BackendKind::REMOTE_SIDECAR), 3);
    EXPECT_EQ(static_cast<int>(BackendKind::DEVICE_MALLOC), 4);
    EXPECT_EQ(static_cast<int>(BackendKind::FORK_COW), 5);
    EXPECT_EQ(static_cast<int>(TensorArgType::INPUT), 0);
    EXPECT_EQ(static_cast<int>(TensorArgType::OUTPUT), 1);
    EXPECT_EQ(static_cast<int>(TensorArgType::INOUT), 2);
    EXPECT_EQ(static_cast<int>(TensorArgType::OUTPUT_EXISTING), 3);
    EXPECT_EQ(static_cast<int>(TensorArgType::NO_DEP), 4);
    EXPECT_EQ(sizeof(TensorArgType), 4u);
}

TEST(AbiLayout, DataTypeValuesAndElementSizes) {
    const uint32_t expected[] = {4, 2, 4, 2, 1, 1, 2, 8, 8, 2, 4, 1, 1, 1, 1, 8};
    const char* names[] = {"FLOAT32", "FLOAT16", "INT32",  "INT16", "INT8",      "UINT8",   "BFLOAT16", "INT64",
                           "UINT64",  "UINT16",  "UINT32", "BOOL",  "FP8E4M3FN", "FP8E8M0", "FP4E2M1",  "FLOAT64"};
    for (uint8_t v = 0; v < 16; ++v) {
        EXPECT_EQ(data_type_element_size(v), expected[v]) << int(v);
        EXPECT_STREQ(data_type_name(v), names[v]);
    }
    for (int v = 16; v < 256; ++v) EXPECT_EQ(data_type_element_size(static_cast<uint8_t>(v)), 0u) << v;
    EXPECT_EQ(static_cast<int>(DataType::BOOL), 11);
    EXPECT_EQ(static_cast<int>(DataType::FP4E2M1), 14);
    EXPECT_EQ(static_cast<int>(DataType::FLOAT64), 15);
    EXPECT_STREQ(data_type_name(16), "UNKNOWN");
}

#include "simpler/view/tensor_overlap.h"

TEST(AbiLayout, TensorOverlapValuesAreFrozen) {
    EXPECT_EQ(sizeof(TensorOverlap), 1u);
    EXPECT_EQ(static_cast<int>(TensorOverlap::NONE), 0);
    EXPECT_EQ(static_cast<int>(TensorOverlap::PARTIAL), 1);
    EXPECT_EQ(static_cast<int>(TensorOverlap::COVERED), 2);
    EXPECT_STREQ(tensor_overlap_name(TensorOverlap::COVERED), "COVERED");
}

TEST(AbiLayout, CallConfigIs64BytesWithFixedOffsets) {
    EXPECT_EQ(sizeof(simpler::CallConfig), 64u);
    EXPECT_EQ(alignof(simpler::CallConfig), 4u);
    EXPECT_EQ(offsetof(simpler::CallConfig, block_dim), 0u);
    EXPECT_EQ(offsetof(simpler::CallConfig, zero_copy), 4u);
    EXPECT_EQ(offsetof(simpler::CallConfig, checked), 5u);
    EXPECT_EQ(offsetof(simpler::CallConfig, _pad0), 6u);
    EXPECT_EQ(offsetof(simpler::CallConfig, write_only_mask), 8u);
    EXPECT_EQ(sizeof(simpler::CallConfig::write_only_mask), 24u);
    EXPECT_EQ(offsetof(simpler::CallConfig, write_mask), 32u);
    EXPECT_EQ(sizeof(simpler::CallConfig::write_mask), 32u);
}
