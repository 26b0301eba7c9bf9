// validate_tensor: every rule of docs/internals/abi.md "Validation" for Tensor, in order, with
// the three extent test vectors; and make_tensor's row-major default.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "fixtures.h"

using namespace simpler;

namespace {

void expect_refused(const Tensor& t, const char* field, const std::string& rule_part, int32_t slot = -1) {
    ValidationError e = validate_tensor(t);
    ASSERT_FALSE(e.ok()) << "expected a refusal on " << field;
    EXPECT_STREQ(e.field, field) << e.message();
    EXPECT_EQ(e.slot, slot) << e.message();
    EXPECT_NE(e.message().find(rule_part), std::string::npos) << e.message();
}

void expect_valid(const Tensor& t) {
    ValidationError e = validate_tensor(t);
    EXPECT_TRUE(e.ok()) << e.message();
}

Tensor raw_tensor(uint64_t nbytes, DataType dtype, std::initializer_list<uint32_t> shapes,
                  std::initializer_list<uint32_t> strides, uint64_t byte_offset = 0) {
    Tensor t{};
    t.buffer = shm_descriptor(nbytes);
    t.dtype = static_cast<uint8_t>(dtype);
    t.byte_offset = byte_offset;
    t.ndims = static_cast<uint32_t>(shapes.size());
    uint32_t i = 0;
    for (uint32_t s : shapes) t.shapes[i++] = s;
    i = 0;
    for (uint32_t s : strides) t.strides[i++] = s;
    return t;
}

}  // namespace

TEST(Tensor, ExtentVectorRowMajor3DFloat16Is128Bytes) {
    Tensor t = raw_tensor(128, DataType::FLOAT16, {2, 4, 8}, {32, 8, 1});
    EXPECT_EQ(t.extent_bytes(), 128u);
    expect_valid(t);
    t.buffer.nbytes = 127;
    expect_refused(t, "byte_offset", "within buffer.nbytes");
}

TEST(Tensor, ExtentVectorHuge1DSaturatesAndIsRefused) {
    // Wrapping arithmetic would give ((2^31) * 2^31 + 1) * 4 mod 2^64 = 4.
    Tensor t = raw_tensor(UINT64_MAX, DataType::FLOAT32, {(1u << 31) + 1}, {1u << 31});
    EXPECT_EQ(t.extent_bytes(), TENSOR_EXTENT_UNREPRESENTABLE);
    expect_refused(t, "shapes", "overflows 64 bits");
}

TEST(Tensor, ExtentVectorHuge2DInt8SaturatesAndIsRefused) {
    // shapes (2^32-1, 2^32-1): with strides (2^32-1, 2^32-1) the span is
    // 2 * (2^32-2) * (2^32-1) + 1 > 2^64, so it saturates (docs/internals/abi.md).
    Tensor t = raw_tensor(UINT64_MAX, DataType::INT8, {UINT32_MAX, UINT32_MAX}, {UINT32_MAX, UINT32_MAX});
    EXPECT_EQ(t.extent_bytes(), TENSOR_EXTENT_UNREPRESENTABLE);
    expect_refused(t, "shapes", "overflows 64 bits");
    // Row-major strides (2^32-1, 1) give an exact extent of (2^32-1)^2 bytes, which
    // fits: the view is valid over a UINT64_MAX backing.
    Tensor rm = raw_tensor(UINT64_MAX, DataType::INT8, {UINT32_MAX, UINT32_MAX}, {UINT32_MAX, 1});
    EXPECT_EQ(rm.extent_bytes(), uint64_t{UINT32_MAX} * UINT32_MAX);
    expect_valid(rm);
}

TEST(Tensor, BadBufferIsRefusedFirstAndNamedAsTheEmbeddedField) {
    Tensor t = vector_tensor();
    t.buffer.magic = 0;
    t.ndims = 0;
    ValidationError e = validate_tensor(t);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.type, "Tensor.buffer");
    EXPECT_STREQ(e.field, "magic");
    EXPECT_NE(e.message().find("Tensor.buffer.magic"), std::string::npos);
}

TEST(Tensor, NdimsOutsideOneToFiveIsRefused) {
    Tensor t = vector_tensor();
    t.ndims = 0;
    expect_refused(t, "ndims", "1..5");
    t.ndims = 6;
    expect_refused(t, "ndims", "1..5");
    Tensor five = raw_tensor(1024, DataType::UINT8, {1, 2, 2, 2, 2}, {16, 8, 4, 2, 1});
    expect_valid(five);
}

TEST(Tensor, UnknownDtypeIsRefused) {
    Tensor t = vector_tensor(16, DataType::UINT8);
    t.dtype = 16;
    expect_refused(t, "dtype", "known DataType");
    t.dtype = 14;  // FP4E2M1, one byte an element
    expect_valid(t);
    Tensor wide = vector_tensor(16, DataType::FLOAT64);  // the last known value
    expect_valid(wide);
    wide.dtype = 16;
    expect_refused(wide, "dtype", "0..15");
}

TEST(Tensor, ByteOffsetNotAMultipleOfElementSizeIsRefused) {
    Tensor t = vector_tensor(16, DataType::FLOAT32);
    t.byte_offset = 2;
    expect_refused(t, "byte_offset", "multiple of the element size");
    t.byte_offset = 4;
    expect_valid(t);
}

TEST(Tensor, ZeroShapeOrStrideOnAnActiveDimIsRefused) {
    Tensor t = raw_tensor(1024, DataType::UINT8, {4, 4}, {4, 1});
    t.shapes[1] = 0;
    expect_refused(t, "shapes", "> 0", 1);
    t.shapes[1] = 1;
    expect_valid(t);
    t.strides[0] = 0;
    expect_refused(t, "strides", "no broadcast", 0);
    t.strides[0] = 1;
    expect_valid(t);
}

TEST(Tensor, ShapeIsCheckedBeforeStrideOnEachDim) {
    Tensor t = raw_tensor(1024, DataType::UINT8, {4, 4}, {4, 1});
    t.shapes[0] = 0;
    t.strides[0] = 0;
    expect_refused(t, "shapes", "> 0", 0);
}

TEST(Tensor, NonZeroSlotsPastNdimsAreRefused) {
    Tensor t = vector_tensor();
    t.shapes[4] = 1;
    expect_refused(t, "shapes", "past ndims", 4);
    t.shapes[4] = 0;
    t.strides[1] = 1;
    expect_refused(t, "strides", "past ndims", 1);
    t.strides[1] = 0;
    expect_valid(t);
}

TEST(Tensor, ViewPastNbytesIsRefused) {
    Tensor t = vector_tensor(16, DataType::FLOAT32, 64);
    expect_valid(t);  // exactly fills the backing
    t.byte_offset = 4;
    expect_refused(t, "byte_offset", "within buffer.nbytes");
    t.byte_offset = 0;
    t.shapes[0] = 17;
    expect_refused(t, "byte_offset", "within buffer.nbytes");
    // offset beyond nbytes must not wrap in the subtraction
    t.shapes[0] = 1;
    t.byte_offset = 1ULL << 40;
    expect_refused(t, "byte_offset", "within buffer.nbytes");
}

TEST(Tensor, SingletonDimensionKeepsItsStride) {
    const uint32_t shapes[] = {1, 8};
    const uint32_t strides[] = {64, 1};
    Tensor t = make_tensor(shm_descriptor(1024), shapes, DataType::UINT8, strides);
    EXPECT_EQ(t.strides[0], 64u);
    EXPECT_EQ(t.extent_bytes(), 8u);
}

TEST(Tensor, MakeTensorDefaultsToRowMajorAndZeroFillsTails) {
    const uint32_t shapes[] = {3, 4, 5};
    Tensor t = make_tensor(shm_descriptor(1024), shapes, DataType::FLOAT32);
    EXPECT_EQ(t.ndims, 3u);
    EXPECT_EQ(t.strides[0], 20u);
    EXPECT_EQ(t.strides[1], 5u);
    EXPECT_EQ(t.strides[2], 1u);
    EXPECT_EQ(t.shapes[3], 0u);
    EXPECT_EQ(t.strides[4], 0u);
    EXPECT_EQ(t._pad[0], 0);
    EXPECT_EQ(t.extent_bytes(), 240u);
}

TEST(Tensor, MakeTensorRefusesBadInputWithValueError) {
    const uint32_t shapes[] = {4, 4};
    const uint32_t one_stride[] = {1};
    BufferDescriptor b = shm_descriptor(64);
    EXPECT_THROW(make_tensor(b, shapes, DataType::FLOAT32, one_stride), std::invalid_argument);
    EXPECT_THROW(make_tensor(b, shapes, DataType::FLOAT32, {}, 2), std::invalid_argument);
    EXPECT_THROW(make_tensor(b, std::span<const uint32_t>{}, DataType::FLOAT32), std::invalid_argument);
    const uint32_t big[] = {1u << 20, 1u << 20};  // 2^40 elements: row-major stride fits, extent past nbytes
    EXPECT_THROW(make_tensor(b, big, DataType::UINT8), std::invalid_argument);
    const uint32_t wide[] = {2, 1u << 16, 1u << 16, 2};  // stride[0] = 2^33 does not fit u32
    try {
        make_tensor(b, wide, DataType::UINT8);
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("does not fit u32"), std::string::npos) << e.what();
    }
}

TEST(Tensor, EqualityComparesBufferAndView) {
    Tensor a = vector_tensor();
    Tensor b = a;
    b._pad[0] = 1;
    EXPECT_EQ(a, b);
    b.byte_offset = 4;
    EXPECT_FALSE(a == b);
}
