// Soundness and precision of overlap() against a brute-force oracle that
// enumerates the byte sets of both views (docs/explanation/dependencies.md, "The overlap
// question"): random pairs over one backing of at most 4 KiB, ranks 1..5,
// shared row-major layouts, transposed and stepped slices, arbitrary strides,
// offsets and dtypes. Deterministically seeded; prints the false-edge rates.
// The chip runtime's decision (chip/working_overlap.h, on the same pairs as
// working tensors) is checked against the same oracle and must equal the
// host's answer.
#include <gtest/gtest.h>

#include <bitset>
#include <cstdio>
#include <random>

#include "simpler/chip/working_overlap.h"
#include "simpler/view/wire_overlap.h"
#include "view_fixtures.h"

using namespace simpler;

using simpler::make_view_box;
using simpler::overlap;
using simpler::OverlapAnswer;
using simpler::OverlapOptions;
using simpler::ViewBox;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool SANITIZED = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool SANITIZED = true;
#else
constexpr bool SANITIZED = false;
#endif
#else
constexpr bool SANITIZED = false;
#endif

constexpr uint64_t MAX_BACKING = 4096;
constexpr uint64_t MAX_ELEMENTS = 512;
using ByteSet = std::bitset<MAX_BACKING>;

struct View {
    uint64_t offset = 0;  // bytes
    uint32_t ndims = 0;
    uint32_t shapes[MAX_TENSOR_DIMS] = {};
    uint32_t strides[MAX_TENSOR_DIMS] = {};
    DataType dtype = DataType::UINT8;
};

constexpr DataType DTYPES[] = {DataType::UINT8, DataType::FLOAT16, DataType::FLOAT32, DataType::INT64};

class Generator {
public:
    explicit Generator(uint64_t seed) : rng_(seed) {}

    uint64_t uniform(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_); }
    bool coin(unsigned percent) { return uniform(0, 99) < percent; }

    // A row-major parent: reference shape A (rank r), padded pitch, its strides.
    struct Parent {
        DataType dtype;
        uint32_t elem;
        uint32_t ndims;
        uint32_t ref[MAX_TENSOR_DIMS];
        uint32_t strides[MAX_TENSOR_DIMS];
        uint64_t nbytes;
    };

    Parent parent() {
        Parent p{};
        p.dtype = DTYPES[uniform(0, 3)];
        p.elem = element_size(p.dtype);
        p.ndims = static_cast<uint32_t>(uniform(1, 5));
        const uint64_t budget = MAX_BACKING / p.elem;
        for (;;) {
            uint64_t total = 1;
            for (uint32_t i = p.ndims; i-- > 0;) {
                p.ref[i] = static_cast<uint32_t>(uniform(1, p.ndims <= 2 ? 24 : 6));
                p.strides[i] = static_cast<uint32_t>(total);
                total *= p.ref[i];
                if (i > 0 && coin(15)) total += uniform(1, 3);  // a padded pitch
            }
            if (total <= budget) {
                p.nbytes = total * p.elem + (coin(20) ? uniform(0, p.elem * 3) : 0);
                if (p.nbytes > MAX_BACKING) p.nbytes = total * p.elem;
                return p;
            }
        }
    }

    // A sub-box of the parent, optionally stepped and transposed.
    View slice(const Parent& p, bool stepped, bool transposed) {
        View v;
        v.dtype = p.dtype;
        v.ndims = p.ndims;
        uint64_t origin = 0;
        for (uint32_t i = 0; i < p.ndims; ++i) {
            const uint32_t lo = static_cast<uint32_t>(uniform(0, p.ref[i] - 1));
            const uint32_t len = static_cast<uint32_t>(uniform(1, p.ref[i] - lo));
            const uint32_t step = stepped ? static_cast<uint32_t>(uniform(1, 3)) : 1;
            v.shapes[i] = (len + step - 1) / step;
            v.strides[i] = p.strides[i] * step;
            origin += uint64_t{lo} * p.strides[i];
        }
        v.offset = origin * p.elem;
        if (transposed) {
            for (uint32_t i = v.ndims; i > 1; --i) {
                const uint32_t j = static_cast<uint32_t>(uniform(0, i - 1));
                std::swap(v.shapes[i - 1], v.shapes[j]);
                std::swap(v.strides[i - 1], v.strides[j]);
            }
        }
        return v;
    }

    // Any view that fits: random rank, shapes, strides, dtype and offset.
    View arbitrary(uint64_t nbytes) {
        for (;;) {
            View v;
            v.dtype = DTYPES[uniform(0, 3)];
            const uint32_t elem = element_size(v.dtype);
            v.ndims = static_cast<uint32_t>(uniform(1, 5));
            uint64_t extent = 1;
            for (uint32_t i = 0; i < v.ndims; ++i) {
                v.shapes[i] = static_cast<uint32_t>(uniform(1, v.ndims <= 2 ? 12 : 4));
                v.strides[i] = static_cast<uint32_t>(coin(50) ? uniform(1, 8) : uniform(1, 96));
                extent += uint64_t{v.shapes[i] - 1} * v.strides[i];
            }
            if (extent * elem > nbytes) continue;
            v.offset = uniform(0, (nbytes - extent * elem) / elem) * elem;
            return v;
        }
    }

private:
    std::mt19937_64 rng_;
};

Tensor to_tensor(const BufferDescriptor& b, const View& v) {
    Tensor t{};
    t.buffer = b;
    t.byte_offset = v.offset;
    t.ndims = v.ndims;
    t.dtype = static_cast<uint8_t>(v.dtype);
    for (uint32_t i = 0; i < v.ndims; ++i) {
        t.shapes[i] = v.shapes[i];
        t.strides[i] = v.strides[i];
    }
    return t;
}

// The same view as the chip runtime's working tensor over a backing at `addr`.
simpler::chip::Tensor to_working(uint64_t addr, uint64_t nbytes, const View& v) {
    ChipTensor c{};
    c.buffer.addr = addr;
    c.buffer.size = nbytes;
    c.start_offset = v.offset / element_size(v.dtype);
    c.ndims = v.ndims;
    c.dtype = static_cast<uint8_t>(v.dtype);
    c.address_space = static_cast<uint8_t>(AddressSpace::HOST);
    for (uint32_t i = 0; i < v.ndims; ++i) {
        c.shapes[i] = v.shapes[i];
        c.strides[i] = v.strides[i];
    }
    simpler::chip::Tensor t{};
    const ValidationError e = simpler::chip::adopt_chip_tensor(c, t);
    if (!e.ok()) ADD_FAILURE() << "adopt_chip_tensor: " << e.message();
    return t;
}

uint64_t element_count(const View& v) {
    uint64_t n = 1;
    for (uint32_t i = 0; i < v.ndims; ++i) n *= v.shapes[i];
    return n;
}

// The oracle: every byte of every element.
ByteSet bytes_of(const View& v) {
    ByteSet s;
    const uint32_t elem = element_size(v.dtype);
    uint32_t k[MAX_TENSOR_DIMS] = {};
    for (;;) {
        uint64_t at = v.offset;
        for (uint32_t i = 0; i < v.ndims; ++i) at += uint64_t{k[i]} * v.strides[i] * elem;
        for (uint32_t b = 0; b < elem; ++b) s.set(at + b);
        uint32_t i = v.ndims;
        while (i-- > 0) {
            if (++k[i] < v.shapes[i]) break;
            k[i] = 0;
        }
        if (i == UINT32_MAX) return s;
    }
}

struct Tally {
    uint64_t pairs = 0, disjoint = 0;
    uint64_t false_edges = 0;  // an edge (answer != NONE) where the oracle says disjoint
    [[nodiscard]] double rate() const { return disjoint == 0 ? 0.0 : double(false_edges) / double(disjoint); }
};

}  // namespace

TEST(OverlapOracle, NeverNoneWhenBytesAreSharedNeverCoveredWhenNotContained) {
    const uint64_t pairs = SANITIZED ? 100'000 : 1'000'000;
    Generator gen(0x5eed'0003);
    Tally same_layout, other_base, other_exact;
    uint64_t sound_failures = 0, precision_failures = 0, proven_failures = 0;
    uint64_t chip_unsound = 0, chip_differs = 0;
    uint64_t false_by_reason[16] = {};  // false edges with the extension, by reason
    const OverlapOptions base_model{.exact_strides = false};
    for (uint64_t n = 0; n < pairs; ++n) {
        const Generator::Parent p = gen.parent();
        const BufferDescriptor b = view_test::backing(p.nbytes);
        View v[2];
        const unsigned kind = static_cast<unsigned>(gen.uniform(0, 9));
        for (View& w : v) {
            if (kind < 4) {
                w = gen.slice(p, false, false);  // one shared row-major layout
            } else if (kind < 8) {
                w = gen.slice(p, gen.coin(50), gen.coin(50));
            } else {
                w = gen.coin(50) ? gen.slice(p, gen.coin(50), gen.coin(50)) : gen.arbitrary(p.nbytes);
            }
            if (element_count(w) > MAX_ELEMENTS) w = gen.arbitrary(p.nbytes);
        }
        const Tensor probe = to_tensor(b, v[0]), entry = to_tensor(b, v[1]);
        ASSERT_TRUE(validate_tensor(probe).ok()) << validate_tensor(probe).message();
        ASSERT_TRUE(validate_tensor(entry).ok()) << validate_tensor(entry).message();
        const ByteSet pb = bytes_of(v[0]), eb = bytes_of(v[1]);
        const bool shares = (pb & eb).any();
        const bool contains = (eb & ~pb).none();

        const ViewBox pbox = make_view_box(probe), ebox = make_view_box(entry);
        const OverlapAnswer base = overlap(pbox, ebox, base_model);
        const OverlapAnswer exact = overlap(pbox, ebox);
        constexpr uint64_t CHIP_BACKING_ADDR = 0x10000;
        const OverlapAnswer chip = simpler::chip::overlap(to_working(CHIP_BACKING_ADDR, p.nbytes, v[0]),
                                                          to_working(CHIP_BACKING_ADDR, p.nbytes, v[1]));
        if (((chip.overlap == TensorOverlap::NONE && shares) ||
             (chip.overlap == TensorOverlap::COVERED && !contains)) &&
            ++chip_unsound <= 5)
            ADD_FAILURE() << "chip: unsound " << tensor_overlap_name(chip.overlap) << " for pair " << n;
        if (!(chip == exact) && ++chip_differs <= 5)
            ADD_FAILURE() << "chip: " << tensor_overlap_name(chip.overlap) << " where the host answers "
                          << tensor_overlap_name(exact.overlap) << " for pair " << n;
        for (const OverlapAnswer& a : {base, exact}) {
            const bool wrong =
                (a.overlap == TensorOverlap::NONE && shares) || (a.overlap == TensorOverlap::COVERED && !contains);
            if (wrong && ++sound_failures <= 5)
                ADD_FAILURE() << "unsound " << tensor_overlap_name(a.overlap) << " for pair " << n;
            if (a.overlap == TensorOverlap::PARTIAL && a.reason == OverlapReason::SHARED_BYTES && !shares &&
                ++proven_failures <= 5)
                ADD_FAILURE() << "SHARED_BYTES without a shared byte for pair " << n;
            if (a.overlap == TensorOverlap::PARTIAL && a.reason == OverlapReason::NONE && ++proven_failures <= 5)
                ADD_FAILURE() << "PARTIAL without a reason for pair " << n;
        }
        // One shared row-major layout: the base model applies to both views.
        const bool in_model = pbox.dtype == ebox.dtype && pbox.ndims == ebox.ndims &&
                              std::equal(pbox.strides, pbox.strides + MAX_TENSOR_DIMS, ebox.strides) &&
                              pbox.layout_reason == OverlapReason::NONE && ebox.layout_reason == OverlapReason::NONE;
        Tally& t = in_model ? same_layout : other_base;
        ++t.pairs;
        if (!in_model) ++other_exact.pairs;
        if (!shares) {
            ++t.disjoint;
            if (base.overlap != TensorOverlap::NONE) ++t.false_edges;
            if (!in_model) {
                ++other_exact.disjoint;
                if (exact.overlap != TensorOverlap::NONE) {
                    ++other_exact.false_edges;
                    ++false_by_reason[static_cast<uint8_t>(exact.reason) & 15];
                }
            }
            if (in_model && (base.overlap != TensorOverlap::NONE || exact.overlap != TensorOverlap::NONE) &&
                ++precision_failures <= 5)
                ADD_FAILURE() << "PARTIAL for a disjoint pair in one row-major layout, pair " << n;
        }
    }
    EXPECT_EQ(sound_failures, 0u);
    EXPECT_EQ(proven_failures, 0u);
    EXPECT_EQ(precision_failures, 0u);
    EXPECT_EQ(chip_unsound, 0u);
    EXPECT_EQ(chip_differs, 0u);
    EXPECT_GT(same_layout.pairs, pairs / 5);
    EXPECT_GT(other_base.disjoint, pairs / 20);
    std::printf("[oracle] %llu pairs; one row-major layout: %llu pairs, %llu disjoint, false-edge rate %.4f%%\n",
                static_cast<unsigned long long>(pairs), static_cast<unsigned long long>(same_layout.pairs),
                static_cast<unsigned long long>(same_layout.disjoint), 100.0 * same_layout.rate());
    std::printf(
        "[oracle] other pairs: %llu, %llu disjoint; false-edge rate base model %.4f%%, with the "
        "different-stride extension %.4f%%\n",
        static_cast<unsigned long long>(other_base.pairs), static_cast<unsigned long long>(other_base.disjoint),
        100.0 * other_base.rate(), 100.0 * other_exact.rate());
    for (uint8_t r = 0; r < 16; ++r)
        if (false_by_reason[r] != 0)
            std::printf("[oracle]   false edges left with reason %s: %llu\n",
                        overlap_reason_name(static_cast<OverlapReason>(r)),
                        static_cast<unsigned long long>(false_by_reason[r]));
}
