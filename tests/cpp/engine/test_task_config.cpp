// TaskConfig: the engine's write mask carries exactly which tensors a chip
// member writes; the caller's bytes are left alone; readers never read past it.
#include <gtest/gtest.h>

#include <vector>

#include "simpler/engine/task_config.h"

using namespace simpler;

TEST(TaskConfig, WriteMaskSetsABitForEveryWritingTagAndNoOther) {
    TaskConfig c{};
    const std::vector<TensorArgType> tags = {TensorArgType::INPUT, TensorArgType::OUTPUT, TensorArgType::INOUT,
                                             TensorArgType::OUTPUT_EXISTING, TensorArgType::NO_DEP};
    set_write_mask(c, tags);
    const auto* raw = reinterpret_cast<const uint8_t*>(c.data());
    EXPECT_FALSE(config_writes_tensor(raw, 0));
    EXPECT_TRUE(config_writes_tensor(raw, 1));
    EXPECT_TRUE(config_writes_tensor(raw, 2));
    EXPECT_TRUE(config_writes_tensor(raw, 3));
    EXPECT_FALSE(config_writes_tensor(raw, 4));
    EXPECT_FALSE(config_writes_tensor(raw, 5));
}

TEST(TaskConfig, WriteMaskLeavesTheCallersBytesAndClearsAStaleMask) {
    TaskConfig c{};
    for (size_t i = 0; i < TASK_CONFIG_BYTES; ++i) c[i] = std::byte{0xFF};
    const std::vector<TensorArgType> tags = {TensorArgType::INPUT};
    set_write_mask(c, tags);
    for (size_t i = 0; i < TASK_CONFIG_USER_BYTES; ++i) EXPECT_EQ(c[i], std::byte{0xFF}) << i;
    for (size_t i = TASK_CONFIG_WRITE_MASK_OFFSET; i < TASK_CONFIG_BYTES; ++i) EXPECT_EQ(c[i], std::byte{0}) << i;
}

TEST(TaskConfig, TheLastOfTwoHundredFiftySixTensorsHasABitAndIndicesBeyondReadAsNotWritten) {
    TaskConfig c{};
    std::vector<TensorArgType> tags(300, TensorArgType::INOUT);
    set_write_mask(c, tags);
    const auto* raw = reinterpret_cast<const uint8_t*>(c.data());
    EXPECT_TRUE(config_writes_tensor(raw, 255));
    EXPECT_FALSE(config_writes_tensor(raw, 256));
    EXPECT_FALSE(config_writes_tensor(raw, 1u << 20));
}

TEST(TaskConfig, CallFieldsReadTheCallersLayout) {
    TaskConfig c{};
    c[0] = std::byte{0x08};
    c[1] = std::byte{0x01};  // block_dim = 0x108 (little-endian)
    c[4] = std::byte{1};     // zero_copy
    const auto* raw = reinterpret_cast<const uint8_t*>(c.data());
    EXPECT_EQ(config_block_dim(raw), 0x108u);
    EXPECT_TRUE(config_zero_copy(raw));
    c[4] = std::byte{0};
    EXPECT_FALSE(config_zero_copy(raw));
}
