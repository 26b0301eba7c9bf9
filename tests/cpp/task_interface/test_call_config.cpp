// CallConfig: the engine's write mask carries exactly which tensors a chip
// member writes; the caller's bytes are left alone; readers never read past it;
// the caller's fields sit where the ABI says.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "simpler/task_interface/call_config.h"
#include "simpler/task_interface/task_args.h"

using namespace simpler;

TEST(CallConfig, WriteMaskSetsABitForEveryWritingTagAndNoOther) {
    CallConfig c{};
    std::vector<TensorArgType> tags{TensorArgType::INPUT,           TensorArgType::OUTPUT, TensorArgType::INOUT,
                                    TensorArgType::OUTPUT_EXISTING, TensorArgType::NO_DEP, TensorArgType::INPUT};
    set_write_mask(c, tags);
    EXPECT_FALSE(writes_tensor(c, 0));
    EXPECT_TRUE(writes_tensor(c, 1));
    EXPECT_TRUE(writes_tensor(c, 2));
    EXPECT_TRUE(writes_tensor(c, 3));
    EXPECT_FALSE(writes_tensor(c, 4));
    EXPECT_FALSE(writes_tensor(c, 5));
}

TEST(CallConfig, WriteMaskLeavesTheCallersBytesAndClearsStaleMasks) {
    CallConfig c{};
    std::memset(static_cast<void*>(&c), 0xFF, sizeof c);
    std::vector<TensorArgType> tags{TensorArgType::INPUT};
    set_write_mask(c, tags);
    const auto* raw = reinterpret_cast<const uint8_t*>(&c);
    // The caller's bytes 0..7 are kept; both engine masks (8..63) are rewritten.
    for (size_t i = 0; i < offsetof(CallConfig, write_only_mask); ++i) EXPECT_EQ(raw[i], 0xFF) << i;
    for (size_t i = offsetof(CallConfig, write_only_mask); i < sizeof c; ++i) EXPECT_EQ(raw[i], 0) << i;
}

TEST(CallConfig, TheWriteOnlyMaskCoversTheFirst192TensorsAndNeverClaimsAnUnwrittenOne) {
    CallConfig c{};
    std::vector<TensorArgType> tags(200, TensorArgType::OUTPUT);
    tags[3] = TensorArgType::INOUT;
    tags[4] = TensorArgType::INPUT;
    set_write_mask(c, tags);
    EXPECT_TRUE(writes_only_tensor(c, 0));
    EXPECT_FALSE(writes_only_tensor(c, 3));
    EXPECT_FALSE(writes_only_tensor(c, 4));
    EXPECT_TRUE(writes_only_tensor(c, 191));
    EXPECT_FALSE(writes_only_tensor(c, 192));  // past the mask: read as read
    EXPECT_TRUE(writes_tensor(c, 192));
    c.write_mask[0] = 0;  // a write-only bit without its write bit means nothing
    EXPECT_FALSE(writes_only_tensor(c, 0));
}

TEST(CallConfig, TheLastOfTwoHundredFiftySixTensorsHasABitAndIndicesBeyondReadAsNotWritten) {
    EXPECT_EQ(CALL_CONFIG_WRITE_MASK_BITS, static_cast<size_t>(CHIP_MAX_TENSOR_ARGS));
    CallConfig c{};
    std::vector<TensorArgType> tags(256, TensorArgType::OUTPUT);
    set_write_mask(c, tags);
    EXPECT_TRUE(writes_tensor(c, 255));
    EXPECT_FALSE(writes_tensor(c, 256));
    EXPECT_FALSE(writes_tensor(c, 1u << 20));
}

TEST(CallConfig, CallFieldsReadTheCallersLayout) {
    uint8_t raw[CALL_CONFIG_SIZE] = {};
    raw[0] = 0x08;
    raw[1] = 0x01;  // block_dim = 0x108 (little-endian)
    raw[4] = 1;     // zero_copy
    CallConfig c = call_config_from_bytes(raw);
    EXPECT_EQ(c.block_dim, 0x108u);
    EXPECT_NE(c.zero_copy, 0);
    EXPECT_EQ(c.checked, 0);
    raw[4] = 0;
    EXPECT_EQ(call_config_from_bytes(raw).zero_copy, 0);
    raw[5] = 0x80;  // checked: any nonzero byte
    EXPECT_NE(call_config_from_bytes(raw).checked, 0);
}
