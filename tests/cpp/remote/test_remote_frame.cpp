// RemoteFrame (remote_frame.h): every frame type survives encode_* then
// decode_*, and decode_frame / decode_task / decode_forget refuse every
// malformed message with a RemoteFrameError that names the field and the
// value; sidecar_descriptor keeps what identifies the source and drops its body.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "simpler/remote/remote_frame.h"
#include "simpler/task_interface/task_args_wire.h"

using namespace simpler;

namespace {

CanonicalIdentity identity(uint64_t buffer_id, uint32_t generation = 1) {
    CanonicalIdentity id{};
    for (size_t i = 0; i < OWNER_INSTANCE_ID_BYTES; ++i) id.owner_instance_id[i] = static_cast<uint8_t>(0xa0 + i);
    id.buffer_id = buffer_id;
    id.generation = generation;
    return id;
}

Tensor sidecar_tensor(uint64_t buffer_id, uint32_t rows = 4, uint32_t cols = 8) {
    const BufferDescriptor d =
        make_buffer_descriptor(identity(buffer_id), BackendKind::REMOTE_SIDECAR, AddressSpace::HOST,
                               AccessMode::READWRITE, uint64_t{rows} * cols * 4, {}, 7);
    const std::array<uint32_t, 2> shape{rows, cols};
    return make_tensor(d, shape, DataType::FLOAT32);
}

CallConfig config_writing(std::initializer_list<size_t> written) {
    CallConfig c{};
    c.block_dim = 3;
    c.checked = 1;
    for (size_t i : written) c.write_mask[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    return c;
}

// A TASK of three tensors: 0 fetched, 1 written back, 2 both; two scalars.
struct TaskParts {
    CallConfig config = config_writing({1, 2});
    std::vector<uint8_t> flags{SIDECAR_FETCH, SIDECAR_WRITE_BACK, SIDECAR_FETCH | SIDECAR_WRITE_BACK};
    std::vector<Tensor> tensors{sidecar_tensor(1), sidecar_tensor(2, 2, 3), sidecar_tensor(3, 1, 16)};
    std::vector<uint64_t> scalars{42, ~uint64_t{0}};

    [[nodiscard]] std::vector<std::byte> encode() const {
        return encode_task_frame(9, 77, config, flags, tensors, scalars);
    }
};

// Byte offsets in the header (remote_frame.h).
constexpr size_t AT_MAGIC = 0, AT_VERSION = 4, AT_TYPE = 6, AT_WORD = 16, AT_BODY_LEN = 24, AT_COUNT = 28;
// A TASK body: the config, the flags padded to 8, then the blob.
size_t flags_at() { return REMOTE_FRAME_HEADER_BYTES + CALL_CONFIG_SIZE; }
size_t blob_at(size_t count) { return flags_at() + (count + 7) / 8 * 8; }

template <class T>
void put(std::vector<std::byte>& m, size_t at, T v) {
    std::memcpy(m.data() + at, &v, sizeof v);
}

void fix_body_len(std::vector<std::byte>& m) {
    put<uint32_t>(m, AT_BODY_LEN, static_cast<uint32_t>(m.size() - REMOTE_FRAME_HEADER_BYTES));
}

// The RemoteFrameError message of decoding `m` (and of decode_task for a TASK).
std::string refusal(const std::vector<std::byte>& m) {
    try {
        const RemoteFrame f = decode_frame(m);
        if (f.type == FrameType::TASK) (void)decode_task(f);
        if (f.type == FrameType::FORGET) (void)decode_forget(f);
    } catch (const RemoteFrameError& e) {
        return e.what();
    }
    return "(accepted)";
}

#define EXPECT_REFUSED(message, text)                                                                  \
    do {                                                                                               \
        const std::string got_ = refusal(message);                                                     \
        EXPECT_NE(got_.find(text), std::string::npos) << "expected \"" << (text) << "\" in: " << got_; \
    } while (0)

TEST(RemoteFrame, TextFramesRoundTrip) {
    for (FrameType t : {FrameType::HELLO, FrameType::READY, FrameType::DONE}) {
        const std::string text = std::string("text of ") + frame_type_name(t) + std::string(1, '\0') + "tail";
        const uint64_t word = t == FrameType::DONE ? 1 : 0xdeadbeef;
        const std::vector<std::byte> m = encode_text_frame(t, 123456789012345ULL, word, 3, text);
        ASSERT_EQ(m.size(), REMOTE_FRAME_HEADER_BYTES + text.size());
        const RemoteFrame f = decode_frame(m);
        EXPECT_EQ(f.type, t);
        EXPECT_EQ(f.seq, 123456789012345ULL);
        EXPECT_EQ(f.word, word);
        EXPECT_EQ(f.count, 3u);
        EXPECT_EQ(frame_text(f), text);
        EXPECT_EQ(f.body.data(), m.data() + REMOTE_FRAME_HEADER_BYTES);  // the body stays in the message
    }
    const RemoteFrame empty = decode_frame(encode_text_frame(FrameType::READY, 0, 0, 0, ""));
    EXPECT_EQ(frame_text(empty), "");
    const std::vector<std::byte> longest(REMOTE_FRAME_MAX_TEXT, std::byte{'x'});
    const std::vector<std::byte> m =
        encode_text_frame(FrameType::HELLO, 0, 0, 0, {reinterpret_cast<const char*>(longest.data()), longest.size()});
    EXPECT_EQ(frame_text(decode_frame(m)).size(), REMOTE_FRAME_MAX_TEXT);
}

TEST(RemoteFrame, ShutdownAndByeRoundTripEmpty) {
    for (FrameType t : {FrameType::SHUTDOWN, FrameType::BYE}) {
        const std::vector<std::byte> m = encode_text_frame(t, 5, 0, 0, "");
        const RemoteFrame f = decode_frame(m);
        EXPECT_EQ(f.type, t);
        EXPECT_EQ(f.seq, 5u);
        EXPECT_EQ(f.word, 0u);
        EXPECT_TRUE(f.body.empty());
    }
    // A SHUTDOWN's word 1: the job lost a rank.
    EXPECT_EQ(decode_frame(encode_text_frame(FrameType::SHUTDOWN, 0, 1, 0, "")).word, 1u);
}

TEST(RemoteFrame, AShutdownWordAbove1OrAByeWordAbove0IsRefused) {
    EXPECT_THROW((void)decode_frame(encode_text_frame(FrameType::SHUTDOWN, 0, 2, 0, "")), RemoteFrameError);
    try {
        (void)decode_frame(encode_text_frame(FrameType::BYE, 0, 1, 0, ""));
        FAIL() << "a BYE with word 1 was accepted";
    } catch (const RemoteFrameError& e) {
        EXPECT_STREQ(e.what(), "remote frame: word: a SHUTDOWN's is 0 or 1, a BYE's 0 (got 1)");
    }
}

TEST(RemoteFrame, HeaderIsLaidOutAsDocumented) {
    const std::vector<std::byte> m = encode_text_frame(FrameType::DONE, 0x1122334455667788ULL, 1, 2, "abc");
    uint32_t magic = 0, body_len = 0, count = 0;
    uint16_t version = 0, type = 0;
    uint64_t seq = 0, word = 0;
    std::memcpy(&magic, m.data() + AT_MAGIC, 4);
    std::memcpy(&version, m.data() + AT_VERSION, 2);
    std::memcpy(&type, m.data() + AT_TYPE, 2);
    std::memcpy(&seq, m.data() + 8, 8);
    std::memcpy(&word, m.data() + AT_WORD, 8);
    std::memcpy(&body_len, m.data() + AT_BODY_LEN, 4);
    std::memcpy(&count, m.data() + AT_COUNT, 4);
    EXPECT_EQ(std::memcmp(m.data(), "SMRF", 4), 0);
    EXPECT_EQ(magic, REMOTE_FRAME_MAGIC);
    EXPECT_EQ(version, REMOTE_FRAME_VERSION);
    EXPECT_EQ(type, static_cast<uint16_t>(FrameType::DONE));
    EXPECT_EQ(seq, 0x1122334455667788ULL);
    EXPECT_EQ(word, 1u);
    EXPECT_EQ(body_len, 3u);
    EXPECT_EQ(count, 2u);
}

TEST(RemoteFrame, TaskRoundTrips) {
    const TaskParts p;
    const std::vector<std::byte> m = p.encode();
    const RemoteFrame f = decode_frame(m);
    EXPECT_EQ(f.type, FrameType::TASK);
    EXPECT_EQ(f.count, 3u);
    const RemoteTask t = decode_task(f);
    EXPECT_EQ(t.seq, 9u);
    EXPECT_EQ(t.callable, 77u);
    EXPECT_EQ(t.config, p.config);
    EXPECT_EQ(t.flags, p.flags);
    ASSERT_EQ(t.tensors.size(), p.tensors.size());
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        EXPECT_EQ(t.tensors[i], p.tensors[i]) << i;
        EXPECT_EQ(t.tensors[i].buffer.owner_worker_path_id, 7u);
    }
    EXPECT_EQ(t.scalars, p.scalars);
    // Re-encoding what was decoded gives the same bytes.
    EXPECT_EQ(encode_task_frame(t.seq, t.callable, t.config, t.flags, t.tensors, t.scalars), m);
}

TEST(RemoteFrame, TaskOfNoTensorsAndOfTheMostTensorsRoundTrip) {
    const std::vector<uint64_t> scalars{1, 2, 3};
    const RemoteTask none = decode_task(decode_frame(encode_task_frame(1, 2, CallConfig{}, {}, {}, scalars)));
    EXPECT_TRUE(none.tensors.empty());
    EXPECT_TRUE(none.flags.empty());
    EXPECT_EQ(none.scalars, scalars);

    std::vector<Tensor> tensors;
    std::vector<uint8_t> flags;
    CallConfig c{};
    for (uint32_t i = 0; i < REMOTE_FRAME_MAX_TENSORS; ++i) {
        tensors.push_back(sidecar_tensor(i + 1, 1, 1));
        const bool writes = i % 3 == 0;
        if (writes) c.write_mask[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
        flags.push_back(static_cast<uint8_t>((writes ? SIDECAR_WRITE_BACK : 0) | (i % 2 == 0 ? SIDECAR_FETCH : 0)));
    }
    const RemoteTask most = decode_task(decode_frame(encode_task_frame(3, 4, c, flags, tensors, {})));
    EXPECT_EQ(most.tensors, tensors);
    EXPECT_EQ(most.flags, flags);
}

TEST(RemoteFrame, ForgetRoundTrips) {
    const std::vector<CanonicalIdentity> ids{identity(1), identity(2, 5), identity(99, 3)};
    const std::vector<std::byte> m = encode_forget_frame(ids);
    EXPECT_EQ(m.size(), REMOTE_FRAME_HEADER_BYTES + 3 * sizeof(CanonicalIdentity));
    const RemoteFrame f = decode_frame(m);
    EXPECT_EQ(f.type, FrameType::FORGET);
    EXPECT_EQ(decode_forget(f), ids);
    EXPECT_TRUE(decode_forget(decode_frame(encode_forget_frame({}))).empty());
}

TEST(RemoteFrame, FrameTypeNames) {
    EXPECT_STREQ(frame_type_name(FrameType::HELLO), "HELLO");
    EXPECT_STREQ(frame_type_name(FrameType::BYE), "BYE");
    EXPECT_STREQ(frame_type_name(static_cast<FrameType>(0)), "unknown");
    EXPECT_STREQ(frame_type_name(static_cast<FrameType>(FRAME_TYPE_MAX + 1)), "unknown");
}

TEST(RemoteFrameRefusal, ShortMessage) {
    std::vector<std::byte> m = encode_text_frame(FrameType::BYE, 0, 0, 0, "");
    m.resize(REMOTE_FRAME_HEADER_BYTES - 1);
    EXPECT_REFUSED(m, "remote frame: length: a frame is at least 32 bytes (got 31)");
    EXPECT_REFUSED(std::vector<std::byte>{}, "remote frame: length: a frame is at least 32 bytes (got 0)");
}

TEST(RemoteFrameRefusal, BadMagicVersionAndType) {
    std::vector<std::byte> m = encode_text_frame(FrameType::HELLO, 0, 0, 0, "x");
    put<uint32_t>(m, AT_MAGIC, 0x12345678);
    EXPECT_REFUSED(m, "remote frame: magic: must be 0x46524D53 (got 305419896)");

    m = encode_text_frame(FrameType::HELLO, 0, 0, 0, "x");
    put<uint16_t>(m, AT_VERSION, 2);
    EXPECT_REFUSED(m, "remote frame: version: must be 1 (got 2)");

    for (uint16_t type : {uint16_t{0}, uint16_t{FRAME_TYPE_MAX + 1}, uint16_t{0xffff}}) {
        m = encode_text_frame(FrameType::HELLO, 0, 0, 0, "x");
        put<uint16_t>(m, AT_TYPE, type);
        EXPECT_REFUSED(m, "remote frame: type: must be 1..7 (got " + std::to_string(type) + ")");
    }
}

TEST(RemoteFrameRefusal, BodyLenThatDisagreesWithTheMessage) {
    std::vector<std::byte> m = encode_text_frame(FrameType::HELLO, 0, 0, 0, "hello");
    put<uint32_t>(m, AT_BODY_LEN, 4);
    EXPECT_REFUSED(m, "remote frame: body_len: must be the message's length less the header (5) (got 4)");
    put<uint32_t>(m, AT_BODY_LEN, 6);
    EXPECT_REFUSED(m, "(5) (got 6)");
    m.push_back(std::byte{0});  // one byte past what the header says
    put<uint32_t>(m, AT_BODY_LEN, 5);
    EXPECT_REFUSED(m, "remote frame: body_len: must be the message's length less the header (6) (got 5)");
}

TEST(RemoteFrameRefusal, TextOverTheLimit) {
    const std::string text(REMOTE_FRAME_MAX_TEXT + 1, 'x');
    for (FrameType t : {FrameType::HELLO, FrameType::READY, FrameType::DONE})
        EXPECT_REFUSED(encode_text_frame(t, 0, 0, 0, text),
                       "remote frame: body_len: a text is at most 1048576 bytes (got 1048577)");
}

TEST(RemoteFrameRefusal, DoneStatusAndPayloadCount) {
    EXPECT_REFUSED(encode_text_frame(FrameType::DONE, 0, 3, 0, ""),
                   "remote frame: word: a DONE's status must be 0, 1 or 2 (got 3)");
    EXPECT_EQ(refusal(encode_text_frame(FrameType::DONE, 0, 2, 0, "simpler-failure/1\n")), "(accepted)");
    EXPECT_EQ(refusal(encode_text_frame(FrameType::DONE, 0, 1, REMOTE_FRAME_MAX_TENSORS, "failed")), "(accepted)");
    EXPECT_REFUSED(encode_text_frame(FrameType::DONE, 0, 0, REMOTE_FRAME_MAX_TENSORS + 1, ""),
                   "remote frame: count: a DONE carries at most 256 payloads (got 257)");
}

TEST(RemoteFrameRefusal, TaskCountOverTheLimit) {
    std::vector<std::byte> m = TaskParts{}.encode();
    put<uint32_t>(m, AT_COUNT, REMOTE_FRAME_MAX_TENSORS + 1);
    EXPECT_REFUSED(m, "remote frame: count: a TASK names at most 256 tensors (got 257)");
}

TEST(RemoteFrameRefusal, TaskTooShort) {
    // Shorter than the call config, the flags and a blob header.
    std::vector<std::byte> m = encode_task_frame(1, 2, CallConfig{}, {}, {}, {});
    ASSERT_EQ(m.size(), REMOTE_FRAME_HEADER_BYTES + CALL_CONFIG_SIZE + BLOB_HEADER_BYTES);
    m.pop_back();
    fix_body_len(m);
    EXPECT_REFUSED(m, "remote frame: body_len: too short for the call config, 0 flags and a blob header (got 71)");
    // Long enough for none, too short once the count claims flags.
    m = encode_task_frame(1, 2, CallConfig{}, {}, {}, {});
    put<uint32_t>(m, AT_COUNT, 1);
    EXPECT_REFUSED(m, "remote frame: body_len: too short for the call config, 1 flags and a blob header (got 72)");
}

TEST(RemoteFrameRefusal, FlagOverThree) {
    TaskParts p;
    std::vector<std::byte> m = p.encode();
    m[flags_at() + 1] = std::byte{4 | SIDECAR_WRITE_BACK};
    EXPECT_REFUSED(m, "remote frame: flags[1]: must be a set of FETCH (1) and WRITE_BACK (2) (got 6)");
    m = p.encode();
    m[flags_at()] = std::byte{0xff};
    EXPECT_REFUSED(m, "remote frame: flags[0]: must be a set of FETCH (1) and WRITE_BACK (2) (got 255)");
}

TEST(RemoteFrameRefusal, WriteBackThatDisagreesWithTheWriteMask) {
    TaskParts p;
    p.flags[0] = SIDECAR_FETCH | SIDECAR_WRITE_BACK;  // tensor 0 is not in the mask
    EXPECT_REFUSED(p.encode(), "remote frame: flags[0]: WRITE_BACK must match the call config's write mask (got 3)");
    p = TaskParts{};
    p.flags[2] = SIDECAR_FETCH;  // tensor 2 is in the mask
    EXPECT_REFUSED(p.encode(), "remote frame: flags[2]: WRITE_BACK must match the call config's write mask (got 1)");
}

TEST(RemoteFrameRefusal, WriteMaskBitPastTheCount) {
    TaskParts p;
    p.config = config_writing({1, 2, 3});  // three tensors: index 3 is past them
    EXPECT_REFUSED(p.encode(), "remote frame: config.write_mask: names tensor 3 of a TASK of 3 tensors (got 3)");
    p.config = config_writing({1, 2, 255});
    EXPECT_REFUSED(p.encode(), "remote frame: config.write_mask: names tensor 255 of a TASK of 3 tensors (got 255)");
}

TEST(RemoteFrameRefusal, WriteOnlyMaskBitPastTheCount) {
    TaskParts p;
    p.config.write_only_mask[0] = 0x02;  // tensor 1: written, so write-only may be set
    EXPECT_EQ(refusal(p.encode()), "(accepted)");
    p.config.write_only_mask[0] = 0x01;  // tensor 0, not written: a NO_DEP tensor
    EXPECT_EQ(refusal(p.encode()), "(accepted)");
    p.config.write_only_mask[0] = 0x08;  // tensor 3, past the three
    EXPECT_REFUSED(p.encode(), "remote frame: config.write_only_mask: names tensor 3 of a TASK of 3 tensors (got 3)");
    p.config.write_only_mask[0] = 0;
    p.config.write_only_mask[23] = 0x80;  // tensor 191
    EXPECT_REFUSED(p.encode(),
                   "remote frame: config.write_only_mask: names tensor 191 of a TASK of 3 tensors (got 191)");
}

TEST(RemoteFrameRefusal, NonzeroFlagPadding) {
    std::vector<std::byte> m = TaskParts{}.encode();
    m[flags_at() + 7] = std::byte{1};  // three flags, five bytes of padding
    EXPECT_REFUSED(m, "remote frame: flags padding: must be zero (got 1)");
}

TEST(RemoteFrameRefusal, BlobThatDoesNotFillTheBody) {
    const TaskParts p;
    std::vector<std::byte> m = p.encode();
    const size_t blob = m.size() - blob_at(3);
    m.resize(m.size() + 8);
    fix_body_len(m);
    EXPECT_REFUSED(m, "remote frame: TASK blob: must fill the rest of the body (" + std::to_string(blob + 8) +
                          " bytes) (got " + std::to_string(blob) + ")");
}

TEST(RemoteFrameRefusal, BlobCutShort) {
    std::vector<std::byte> m = TaskParts{}.encode();
    m.resize(m.size() - 8);  // the last scalar is missing
    fix_body_len(m);
    EXPECT_REFUSED(m,
                   "remote frame: TASK blob: argument blob.tensor_count: 8 + 144*tensor_count + 8*scalar_count "
                   "bytes must fit the capacity (got 456, max 448)");
}

TEST(RemoteFrameRefusal, TensorCountOtherThanTheFrameCount) {
    // Two tensors that neither fetch nor write back: a count of 1 leaves the
    // second flag as (zero) padding, so only the counts disagree.
    TaskParts p;
    p.config = CallConfig{};
    p.flags = {0, 0};
    p.tensors.resize(2);
    std::vector<std::byte> m = p.encode();
    put<uint32_t>(m, AT_COUNT, 1);
    EXPECT_REFUSED(m, "remote frame: count: must equal the blob's tensor count (2) (got 1)");
}

TEST(RemoteFrameRefusal, InvalidTensorInTheBlob) {
    std::vector<std::byte> m = TaskParts{}.encode();
    // Tensor 1's descriptor magic (the blob: an 8-byte header, then 144-byte tensors).
    put<uint16_t>(m, blob_at(3) + BLOB_HEADER_BYTES + sizeof(Tensor), 0x1234);
    EXPECT_REFUSED(m, "remote frame: TASK blob: tensor[1]: Tensor.buffer.magic: must be 0x5342 (got 0x1234)");
    m = TaskParts{}.encode();
    // Tensor 2's ndims.
    put<uint32_t>(m, blob_at(3) + BLOB_HEADER_BYTES + 2 * sizeof(Tensor) + offsetof(Tensor, ndims), 0);
    EXPECT_REFUSED(m, "remote frame: TASK blob: tensor[2]: Tensor.ndims");
}

TEST(RemoteFrameRefusal, TensorThatIsNotASidecar) {
    TaskParts p;
    const std::array<uint8_t, 4> name{'a', 'b', 'c', 'd'};
    const BufferDescriptor shm = make_buffer_descriptor(identity(5), BackendKind::POSIX_SHM, AddressSpace::HOST,
                                                        AccessMode::READWRITE, 128, name);
    const std::array<uint32_t, 1> shape{32};
    p.tensors[1] = make_tensor(shm, shape, DataType::FLOAT32);
    EXPECT_REFUSED(p.encode(),
                   "remote frame: tensor[1].buffer.backend_kind: a remote task's tensor is REMOTE_SIDECAR (3) (got 1)");
}

TEST(RemoteFrameRefusal, ForgetLengthOtherThanCountTimes32) {
    const std::vector<CanonicalIdentity> ids{identity(1), identity(2)};
    std::vector<std::byte> m = encode_forget_frame(ids);
    put<uint32_t>(m, AT_COUNT, 3);
    EXPECT_REFUSED(m, "remote frame: body_len: a FORGET is count x 32 bytes (count 3) (got 64)");
    m = encode_forget_frame(ids);
    m.pop_back();
    fix_body_len(m);
    EXPECT_REFUSED(m, "remote frame: body_len: a FORGET is count x 32 bytes (count 2) (got 63)");
    // A count whose product overflows 32 bits is still compared in 64.
    m = encode_forget_frame({});
    put<uint32_t>(m, AT_COUNT, 0x08000000);  // x 32 = 2^32
    EXPECT_REFUSED(m, "remote frame: body_len: a FORGET is count x 32 bytes (count 134217728) (got 0)");
}

TEST(RemoteFrameRefusal, ShutdownOrByeWithABody) {
    for (FrameType t : {FrameType::SHUTDOWN, FrameType::BYE})
        EXPECT_REFUSED(encode_text_frame(t, 0, 0, 0, "extra"), "remote frame: body_len: must be 0 (got 5)");
}

TEST(RemoteFrameRefusal, DecodingTheWrongType) {
    const RemoteFrame hello = decode_frame(encode_text_frame(FrameType::HELLO, 0, 0, 0, ""));
    try {
        (void)decode_task(hello);
        FAIL() << "decode_task accepted a HELLO";
    } catch (const RemoteFrameError& e) {
        EXPECT_STREQ(e.what(), "remote frame: type: expected a TASK (got 1)");
    }
    try {
        (void)decode_forget(hello);
        FAIL() << "decode_forget accepted a HELLO";
    } catch (const RemoteFrameError& e) {
        EXPECT_STREQ(e.what(), "remote frame: type: expected a FORGET (got 1)");
    }
}

TEST(RemoteFrameRefusal, IsAnInvalidArgument) {
    EXPECT_THROW((void)decode_frame(std::vector<std::byte>(3)), std::invalid_argument);
}

TEST(SidecarDescriptor, KeepsWhatNamesTheSourceAndHasNoBody) {
    const std::array<uint8_t, 6> name{'s', 'p', 'x', 'y', 'z', 'w'};
    for (AccessMode access : {AccessMode::READ, AccessMode::WRITE, AccessMode::READWRITE}) {
        const BufferDescriptor src =
            make_buffer_descriptor(identity(11, 4), BackendKind::POSIX_SHM, AddressSpace::HOST, access, 4096, name, 23);
        const BufferDescriptor side = sidecar_descriptor(src);
        EXPECT_TRUE(validate_buffer_descriptor(side).ok());
        EXPECT_EQ(side.backend_kind, static_cast<uint8_t>(BackendKind::REMOTE_SIDECAR));
        EXPECT_EQ(side.identity, src.identity);
        EXPECT_EQ(side.access, static_cast<uint8_t>(access));
        EXPECT_EQ(side.nbytes, 4096u);
        EXPECT_EQ(side.address_space, static_cast<uint8_t>(AddressSpace::HOST));
        EXPECT_EQ(side.owner_worker_path_id, 23u);
        EXPECT_EQ(side.body_len, 0u);
        for (uint8_t b : side.body) EXPECT_EQ(b, 0u);
    }
    const BufferDescriptor dev =
        make_address_descriptor(identity(12), BackendKind::DEVICE_MALLOC, AccessMode::READ, 512, 0x1000, 9);
    const BufferDescriptor side = sidecar_descriptor(dev);
    EXPECT_EQ(side.address_space, static_cast<uint8_t>(AddressSpace::DEVICE));
    EXPECT_EQ(side.owner_worker_path_id, 9u);
    EXPECT_EQ(side.body_len, 0u);
}

}  // namespace
