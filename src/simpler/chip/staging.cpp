#include "simpler/chip/staging.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace simpler::chip {
namespace {

constexpr uint8_t HOST_SPACE = 0;
constexpr uint8_t DEVICE_SPACE = 1;
constexpr uint64_t RANGE_ALIGN = 8;  // the largest element size: every view's origin stays on its lattice

uint64_t view_begin_bytes(const ChipTensor& t) noexcept { return t.start_offset * data_type_element_size(t.dtype); }
uint64_t view_end_bytes(const ChipTensor& t) noexcept {
    return view_begin_bytes(t) + t.extent_elements() * data_type_element_size(t.dtype);
}
bool copies_in(TensorArgType tag) noexcept { return tag != TensorArgType::OUTPUT; }

}  // namespace

void copy_view(const ChipTensor& src, const ChipTensor& dst) noexcept {
    const uint32_t elem = data_type_element_size(src.dtype);
    const uint32_t nd = src.ndims;
    if (nd == 0 || nd > MAX_TENSOR_DIMS || elem == 0) return;
    const uint32_t inner = nd - 1;
    const uint32_t n = src.shapes[inner];
    const bool rows_dense = src.strides[inner] == 1 && dst.strides[inner] == 1;
    uint32_t idx[MAX_TENSOR_DIMS] = {};
    auto* s = reinterpret_cast<const unsigned char*>(src.buffer.addr);
    auto* d = reinterpret_cast<unsigned char*>(dst.buffer.addr);
    for (;;) {
        uint64_t so = src.start_offset, dof = dst.start_offset;
        for (uint32_t i = 0; i < inner; ++i) {
            so += uint64_t{idx[i]} * src.strides[i];
            dof += uint64_t{idx[i]} * dst.strides[i];
        }
        if (rows_dense) {
            std::memcpy(d + dof * elem, s + so * elem, uint64_t{n} * elem);
        } else {
            for (uint32_t j = 0; j < n; ++j)
                std::memcpy(d + (dof + uint64_t{j} * dst.strides[inner]) * elem,
                            s + (so + uint64_t{j} * src.strides[inner]) * elem, elem);
        }
        uint32_t k = inner;
        bool done = true;
        while (k > 0) {
            --k;
            if (++idx[k] < src.shapes[k]) {
                done = false;
                break;
            }
            idx[k] = 0;
        }
        if (done) return;
    }
}

StagedArgs::StagedArgs(DeviceArena& arena, const ChipStorageTaskArgs& host)
    : arena_(&arena),
      host_(std::make_unique<ChipStorageTaskArgs>(host)),
      device_(std::make_unique<ChipStorageTaskArgs>(host)) {}

StagedArgs::~StagedArgs() {
    if (arena_ == nullptr) return;
    for (uint64_t b : blocks_) arena_->try_free(b);
}

void StagedArgs::copy_back() noexcept {
    if (blocks_.empty()) return;
    for (int32_t i = 0; i < host_->tensor_count; ++i) {
        const ChipTensor& h = host_->tensors[i];
        if (h.address_space != HOST_SPACE || !tag_writes(tags_[i])) continue;
        copy_view(device_->tensors[i], h);
    }
}

StagedArgs stage_in(const ChipStorageTaskArgs& host_args, std::span<const TensorArgType> tags, DeviceArena& arena,
                    StagingMode mode) {
    const int32_t n = host_args.tensor_count;
    if (n < 0 || n > CHIP_MAX_TENSOR_ARGS)
        throw std::invalid_argument("stage_in: tensor_count must be in [0, 256] (got " + std::to_string(n) + ")");
    if (tags.size() != static_cast<size_t>(n))
        throw std::invalid_argument("stage_in: " + std::to_string(tags.size()) + " tags for " + std::to_string(n) +
                                    " tensors");
    for (int32_t i = 0; i < n; ++i) {
        if (!is_known_tag(tags[i]))
            throw std::invalid_argument("stage_in: tensor[" + std::to_string(i) + "]: unknown tag " +
                                        std::to_string(static_cast<int32_t>(tags[i])));
        const ValidationError e = validate_chip_tensor(host_args.tensors[i]);
        if (!e.ok()) throw std::invalid_argument("stage_in: tensor[" + std::to_string(i) + "]: " + e.message());
    }
    StagedArgs staged(arena, host_args);
    staged.tags_.assign(tags.begin(), tags.end());
    if (mode == StagingMode::ZERO_COPY) return staged;

    // One device block per host backing, covering the union of its views.
    struct Range {
        uint64_t begin = UINT64_MAX;
        uint64_t end = 0;
        uint64_t device = 0;
    };
    std::unordered_map<uint64_t, Range> ranges;
    for (int32_t i = 0; i < n; ++i) {
        const ChipTensor& t = host_args.tensors[i];
        if (t.address_space != HOST_SPACE) continue;
        Range& r = ranges[t.buffer.addr];
        const uint64_t b = view_begin_bytes(t) / RANGE_ALIGN * RANGE_ALIGN;
        r.begin = b < r.begin ? b : r.begin;
        r.end = view_end_bytes(t) > r.end ? view_end_bytes(t) : r.end;
    }
    for (auto& [addr, r] : ranges) {
        r.device = reinterpret_cast<uint64_t>(arena.alloc(r.end - r.begin));  // throws; staged frees the rest
        staged.blocks_.push_back(r.device);
        staged.staged_bytes_ += r.end - r.begin;
    }
    for (int32_t i = 0; i < n; ++i) {
        const ChipTensor& h = host_args.tensors[i];
        if (h.address_space != HOST_SPACE) continue;
        const Range& r = ranges[h.buffer.addr];
        ChipTensor& d = staged.device_->tensors[i];
        d.buffer.addr = r.device;
        d.buffer.size = r.end - r.begin;
        d.start_offset = (view_begin_bytes(h) - r.begin) / data_type_element_size(h.dtype);
        d.address_space = DEVICE_SPACE;
        if (copies_in(tags[i])) copy_view(h, d);
    }
    return staged;
}

}  // namespace simpler::chip
