// The argument blob: round trip, header refusals before anything is decoded,
// and per-element validation in TaskArgsView.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "fixtures.h"
#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

namespace {

TaskArgs sample_args(int tensors, int scalars) {
    TaskArgs args;
    for (int i = 0; i < tensors; ++i) {
        const uint32_t shapes[] = {4, 4};
        Tensor t = make_tensor(shm_descriptor(4096), shapes, DataType::FLOAT32, {}, 64u * static_cast<uint64_t>(i));
        args.add_tensor(t, i % 2 ? TensorArgType::OUTPUT_EXISTING : TensorArgType::INPUT);
    }
    for (int i = 0; i < scalars; ++i) args.add_scalar(0x1000u + static_cast<uint64_t>(i));
    return args;
}

void put_i32(std::vector<std::byte>& b, size_t off, int32_t v) { std::memcpy(b.data() + off, &v, 4); }

}  // namespace

TEST(Blob, SizeIsHeaderPlusTensorsPlusScalars) {
    EXPECT_EQ(blob_size(0, 0), 8u);
    EXPECT_EQ(blob_size(3, 2), 8u + 3 * 144 + 2 * 8);
    EXPECT_EQ(blob_size(-1, 0), SIZE_MAX);
    EXPECT_EQ(blob_size(0, -1), SIZE_MAX);
    EXPECT_EQ(blob_size(INT64_MAX, 0), SIZE_MAX);
}

TEST(Blob, RoundTripGivesEqualTensorsAndScalars) {
    for (auto [t, s] : {std::pair{0, 0}, {1, 0}, {0, 3}, {5, 2}, {64, 16}}) {
        TaskArgs args = sample_args(t, s);
        std::vector<std::byte> blob = encode_blob(args);
        ASSERT_EQ(blob.size(), blob_size(t, s));
        DecodedTaskArgs out = read_blob(blob.data(), blob.size());
        ASSERT_EQ(out.tensors.size(), static_cast<size_t>(t));
        ASSERT_EQ(out.scalars.size(), static_cast<size_t>(s));
        for (int i = 0; i < t; ++i) EXPECT_EQ(out.tensors[i], args.tensor(i));
        for (int i = 0; i < s; ++i) EXPECT_EQ(out.scalars[i], args.scalar(i));
    }
}

TEST(Blob, ReaderNeedsNoAlignment) {
    TaskArgs args = sample_args(3, 2);
    std::vector<std::byte> blob = encode_blob(args);
    std::vector<std::byte> shifted(blob.size() + 1);
    std::memcpy(shifted.data() + 1, blob.data(), blob.size());
    DecodedTaskArgs out = read_blob(shifted.data() + 1, blob.size());
    EXPECT_EQ(out.tensors[2], args.tensor(2));
    EXPECT_EQ(out.scalars[1], args.scalar(1));
}

TEST(Blob, CapacityBelowHeaderIsRefused) {
    std::vector<std::byte> blob(7);
    TaskArgsView view;
    ValidationError e = TaskArgsView::open(blob.data(), blob.size(), view);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.field, "capacity");
    EXPECT_THROW(read_blob(blob.data(), blob.size()), std::invalid_argument);
    EXPECT_TRUE(TaskArgsView::open(encode_blob(TaskArgs{}).data(), 8, view).ok());
}

TEST(Blob, NegativeCountsAreRefused) {
    std::vector<std::byte> blob = encode_blob(sample_args(1, 1));
    put_i32(blob, 0, -1);
    TaskArgsView view;
    ValidationError e = TaskArgsView::open(blob.data(), blob.size(), view);
    EXPECT_STREQ(e.field, "tensor_count");
    EXPECT_NE(e.message().find("got -1"), std::string::npos) << e.message();
    put_i32(blob, 0, 1);
    put_i32(blob, 4, INT32_MIN);
    e = TaskArgsView::open(blob.data(), blob.size(), view);
    EXPECT_STREQ(e.field, "scalar_count");
    put_i32(blob, 4, 1);
    EXPECT_TRUE(TaskArgsView::open(blob.data(), blob.size(), view).ok());
}

TEST(Blob, TruncatedBlobIsRefusedBeforeAnythingIsDecoded) {
    std::vector<std::byte> blob = encode_blob(sample_args(2, 2));
    TaskArgsView view;
    ValidationError e = TaskArgsView::open(blob.data(), blob.size() - 1, view);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.field, "tensor_count");
    EXPECT_NE(e.message().find("must fit the capacity (got 312, max 311)"), std::string::npos) << e.message();
    EXPECT_EQ(view.tensor_count(), 0);  // untouched on refusal
    EXPECT_TRUE(TaskArgsView::open(blob.data(), blob.size(), view).ok());
}

TEST(Blob, CountsClaimingMoreThanCapacityAreRefusedWithoutOverflow) {
    std::vector<std::byte> blob = encode_blob(sample_args(1, 0));
    put_i32(blob, 0, INT32_MAX);
    put_i32(blob, 4, INT32_MAX);
    TaskArgsView view;
    EXPECT_FALSE(TaskArgsView::open(blob.data(), blob.size(), view).ok());
    EXPECT_THROW(read_blob(blob.data(), blob.size()), std::invalid_argument);
}

TEST(Blob, EachElementIsValidatedAndTheErrorNamesIt) {
    std::vector<std::byte> blob = encode_blob(sample_args(3, 0));
    // Corrupt tensor[2].buffer.magic.
    blob[8 + 2 * 144] = std::byte{0};
    TaskArgsView view;
    ASSERT_TRUE(TaskArgsView::open(blob.data(), blob.size(), view).ok());
    Tensor t;
    EXPECT_TRUE(view.tensor(0, t).ok());
    ValidationError e = view.tensor(2, t);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.element, 2);
    EXPECT_NE(e.message().find("tensor[2]: Tensor.buffer.magic"), std::string::npos) << e.message();
    try {
        read_blob(blob.data(), blob.size());
        FAIL() << "read_blob must refuse a blob holding an invalid tensor";
    } catch (const std::invalid_argument& ex) {
        EXPECT_NE(std::string(ex.what()).find("tensor[2]"), std::string::npos);
    }
}

TEST(Blob, OutOfRangeElementIsRefusedNotRead) {
    std::vector<std::byte> blob = encode_blob(sample_args(1, 1));
    TaskArgsView view;
    ASSERT_TRUE(TaskArgsView::open(blob.data(), blob.size(), view).ok());
    Tensor t;
    EXPECT_FALSE(view.tensor(1, t).ok());
    EXPECT_FALSE(view.tensor(-1, t).ok());
    EXPECT_EQ(view.scalar(1), 0u);
    EXPECT_EQ(view.scalar(0), 0x1000u);
}

TEST(Blob, WriterRefusesTooSmallOutput) {
    TaskArgs args = sample_args(2, 1);
    std::vector<std::byte> small(blob_size(args) - 1);
    EXPECT_THROW(write_blob(args, small), std::length_error);
}
