// TaskArgs (L3+): validation on add, access ⊆ granted per tag, tensors before
// scalars, bounds-checked access; and ChipStorageTaskArgs' caps and ordering.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "fixtures.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

TEST(TensorArgType, TagAccessTable) {
    using enum TensorArgType;
    EXPECT_TRUE(tag_allowed(AccessMode::READ, INPUT));
    EXPECT_FALSE(tag_allowed(AccessMode::WRITE, INPUT));
    EXPECT_TRUE(tag_allowed(AccessMode::READWRITE, INPUT));
    for (TensorArgType w : {OUTPUT, OUTPUT_EXISTING}) {
        EXPECT_FALSE(tag_allowed(AccessMode::READ, w));
        EXPECT_TRUE(tag_allowed(AccessMode::WRITE, w));
        EXPECT_TRUE(tag_allowed(AccessMode::READWRITE, w));
    }
    EXPECT_FALSE(tag_allowed(AccessMode::READ, INOUT));
    EXPECT_FALSE(tag_allowed(AccessMode::WRITE, INOUT));
    EXPECT_TRUE(tag_allowed(AccessMode::READWRITE, INOUT));
    for (AccessMode a : {AccessMode::READ, AccessMode::WRITE, AccessMode::READWRITE})
        EXPECT_TRUE(tag_allowed(a, NO_DEP));
    EXPECT_TRUE(tag_reads(INOUT) && tag_writes(INOUT));
    EXPECT_FALSE(tag_reads(OUTPUT_EXISTING));
    EXPECT_FALSE(tag_writes(NO_DEP) || tag_reads(NO_DEP));
}

TEST(TaskArgs, AddTensorRefusesATagTheBufferDoesNotGrant) {
    TaskArgs args;
    Tensor ro = vector_tensor(16, DataType::FLOAT32, 1024, AccessMode::READ);
    try {
        args.add_tensor(ro, TensorArgType::OUTPUT_EXISTING);
        FAIL();
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("argument 0"), std::string::npos) << msg;
        EXPECT_NE(msg.find("OUTPUT_EXISTING"), std::string::npos) << msg;
        EXPECT_NE(msg.find("grants READ"), std::string::npos) << msg;
    }
    EXPECT_EQ(args.tensor_count(), 0u);  // nothing recorded
    args.add_tensor(ro, TensorArgType::INPUT);
    EXPECT_EQ(args.tensor_count(), 1u);
}

TEST(TaskArgs, AddTensorValidatesTheTensor) {
    TaskArgs args;
    Tensor t = vector_tensor();
    t.shapes[3] = 2;
    EXPECT_THROW(args.add_tensor(t), std::invalid_argument);
    EXPECT_EQ(args.tensor_count(), 0u);
}

TEST(TaskArgs, AddTensorRefusesAnUnknownTag) {
    TaskArgs args;
    EXPECT_THROW(args.add_tensor(vector_tensor(), static_cast<TensorArgType>(5)), std::invalid_argument);
    EXPECT_THROW(args.add_tensor(vector_tensor(), static_cast<TensorArgType>(-1)), std::invalid_argument);
}

TEST(TaskArgs, TensorsComeBeforeScalars) {
    TaskArgs args;
    args.add_tensor(vector_tensor());
    args.add_scalar(1);
    EXPECT_THROW(args.add_tensor(vector_tensor()), std::invalid_argument);
    EXPECT_EQ(args.tensor_count(), 1u);
    EXPECT_EQ(args.scalar_count(), 1u);
}

TEST(TaskArgs, SetTagChecksBoundsAndAccess) {
    TaskArgs args;
    args.add_tensor(vector_tensor(16, DataType::FLOAT32, 1024, AccessMode::READ));
    EXPECT_THROW(args.set_tag(1, TensorArgType::INPUT), std::out_of_range);
    EXPECT_THROW(args.set_tag(0, TensorArgType::INOUT), std::invalid_argument);
    EXPECT_EQ(args.tag(0), TensorArgType::INPUT);
    args.set_tag(0, TensorArgType::NO_DEP);
    EXPECT_EQ(args.tag(0), TensorArgType::NO_DEP);
    args.check_access();
}

TEST(TaskArgs, IndexedAccessIsBoundsChecked) {
    TaskArgs args;
    args.add_tensor(vector_tensor());
    args.add_scalar(9);
    EXPECT_NO_THROW((void)args.tensor(0));
    EXPECT_THROW((void)args.tensor(1), std::out_of_range);
    EXPECT_THROW((void)args.tag(1), std::out_of_range);
    EXPECT_EQ(args.scalar(0), 9u);
    EXPECT_THROW((void)args.scalar(1), std::out_of_range);
}

TEST(ChipStorageTaskArgs, CapsAndOrdering) {
    auto* args = new ChipStorageTaskArgs{};
    ChipTensor t{};
    t.buffer = {0x1000, 64};
    t.ndims = 1;
    t.shapes[0] = 16;
    t.strides[0] = 1;
    t.dtype = static_cast<uint8_t>(DataType::FLOAT32);
    ASSERT_TRUE(validate_chip_tensor(t).ok());
    for (int i = 0; i < CHIP_MAX_TENSOR_ARGS; ++i) args->add_tensor(t);
    EXPECT_THROW(args->add_tensor(t), std::length_error);
    EXPECT_EQ(args->tensor_count, CHIP_MAX_TENSOR_ARGS);
    for (int i = 0; i < CHIP_MAX_SCALAR_ARGS; ++i) args->add_scalar(static_cast<uint64_t>(i));
    EXPECT_THROW(args->add_scalar(0), std::length_error);
    args->clear();
    args->add_scalar(1);
    EXPECT_EQ(args->try_add_tensor(t), StorageAddResult::TENSOR_AFTER_SCALAR);
    EXPECT_THROW(args->add_tensor(t), std::invalid_argument);
    delete args;
}

TEST(ChipTensor, ValidationRules) {
    ChipTensor t{};
    t.buffer = {0x1000, 64};
    t.start_offset = 0;
    t.ndims = 2;
    t.shapes[0] = 4;
    t.shapes[1] = 4;
    t.strides[0] = 4;
    t.strides[1] = 1;
    t.dtype = static_cast<uint8_t>(DataType::FLOAT32);
    EXPECT_TRUE(validate_chip_tensor(t).ok());
    uint32_t idx[2] = {1, 2};
    EXPECT_EQ(t.element_address(idx), 0x1000u + (4 + 2) * 4);
    ChipTensor bad = t;
    bad.buffer.addr = 0;
    EXPECT_STREQ(validate_chip_tensor(bad).field, "buffer.addr");
    bad = t;
    bad.address_space = 2;
    EXPECT_STREQ(validate_chip_tensor(bad).field, "address_space");
    bad = t;
    bad.start_offset = 1;  // one element past the end
    EXPECT_STREQ(validate_chip_tensor(bad).field, "start_offset");
    bad = t;
    bad.strides[2] = 1;
    EXPECT_STREQ(validate_chip_tensor(bad).field, "strides");
    bad = t;
    bad.dtype = 99;
    EXPECT_STREQ(validate_chip_tensor(bad).field, "dtype");
}
