#include "simpler/chip/staging.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace simpler::chip {
namespace {

constexpr uint8_t HOST_SPACE = 0;
constexpr uint8_t DEVICE_SPACE = 1;
// A written backing of at most this many contiguous runs is read back run by
// run, straight into the host; one of more through a bounce buffer.
constexpr size_t MAX_DIRECT_RUNS = 64;
constexpr uint64_t RANGE_ALIGN = 8;  // the largest element size: every view's origin stays on its lattice

uint64_t view_begin_bytes(const ChipTensor& t) noexcept { return t.start_offset * data_type_element_size(t.dtype); }
uint64_t view_end_bytes(const ChipTensor& t) noexcept {
    return view_begin_bytes(t) + t.extent_elements() * data_type_element_size(t.dtype);
}
bool copies_in(TensorArgType tag) noexcept { return tag != TensorArgType::OUTPUT; }

// Calls f(byte offset from t.buffer.addr, nbytes) for each contiguous run of
// t's elements: a row when its elements are dense, else each element.
template <typename F>
void for_each_run(const ChipTensor& t, F&& f) {
    const uint64_t elem = data_type_element_size(t.dtype);
    const uint32_t nd = t.ndims;
    if (nd == 0 || nd > MAX_TENSOR_DIMS || elem == 0) return;
    const uint32_t inner = nd - 1;
    const uint32_t n = t.shapes[inner];
    const bool dense = t.strides[inner] == 1;
    uint32_t idx[MAX_TENSOR_DIMS] = {};
    for (;;) {
        uint64_t at = t.start_offset;
        for (uint32_t i = 0; i < inner; ++i) at += uint64_t{idx[i]} * t.strides[i];
        if (dense) {
            f(at * elem, uint64_t{n} * elem);
        } else {
            for (uint32_t j = 0; j < n; ++j) f((at + uint64_t{j} * t.strides[inner]) * elem, elem);
        }
        uint32_t k = inner;
        bool done = true;
        while (k > 0) {
            --k;
            if (++idx[k] < t.shapes[k]) {
                done = false;
                break;
            }
            idx[k] = 0;
        }
        if (done) return;
    }
}

bool is_element_byte(const ChipTensor& t, uint64_t offset) {
    bool hit = false;
    for_each_run(t, [&](uint64_t b, uint64_t n) { hit = hit || (offset >= b && offset < b + n); });
    return hit;
}

std::string bytes_phrase(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

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

StagedArgs::StagedArgs(Device& device, const ChipStorageTaskArgs& host)
    : device_(&device),
      host_(std::make_unique<ChipStorageTaskArgs>(host)),
      device_args_(std::make_unique<ChipStorageTaskArgs>(host)),
      device_host_(static_cast<size_t>(host.tensor_count), 0) {}

StagedArgs::~StagedArgs() {
    if (device_ == nullptr) return;
    for (uint64_t b : blocks_) device_->try_free(b);
    for (uint64_t b : snapshots_) device_->try_free(b);
}

void StagedArgs::copy_back() {
    if (blocks_.empty() || copied_back_) return;
    std::unique_ptr<unsigned char[]> bounce;
    uint64_t bounce_len = 0;
    for (const Staged& st : staged_) {
        if (!st.bounce_back) continue;
        // A backing whose written views are a few contiguous runs (adjacent
        // rows merged: a dense view is one) comes back by reads straight into
        // the host bytes of those runs; one of many runs by one read of its
        // range into a bounce buffer and a copy of each view from there. Bytes
        // between the views are never written: another task may own them.
        std::vector<std::pair<uint64_t, uint64_t>> runs;  // (offset in the range, bytes)
        bool many = false;
        for (int32_t i = 0; i < host_->tensor_count && !many; ++i) {
            const ChipTensor& h = host_->tensors[i];
            if (h.address_space != HOST_SPACE || h.buffer.addr != st.host_addr || !tag_writes(tags_[i])) continue;
            for_each_run(device_args_->tensors[i], [&](uint64_t at, uint64_t nbytes) {
                if (!runs.empty() && runs.back().first + runs.back().second == at) {
                    runs.back().second += nbytes;
                } else if (runs.size() < MAX_DIRECT_RUNS) {
                    runs.emplace_back(at, nbytes);
                } else {
                    many = true;
                }
            });
        }
        if (!many) {
            std::vector<DeviceEvent> reads;
            reads.reserve(runs.size());
            for (const auto& [at, nbytes] : runs)
                reads.push_back(device_->copy_to_host(
                    reinterpret_cast<unsigned char*>(st.host_addr) + st.host_begin + at, st.device + at, nbytes));
            for (DeviceEvent e : reads) device_->wait(e);
            continue;
        }
        if (bounce_len < st.len) {
            bounce = std::make_unique_for_overwrite<unsigned char[]>(st.len);
            bounce_len = st.len;
        }
        device_->wait(device_->copy_to_host(bounce.get(), st.device, st.len));
        for (int32_t i = 0; i < host_->tensor_count; ++i) {
            const ChipTensor& h = host_->tensors[i];
            if (h.address_space != HOST_SPACE || h.buffer.addr != st.host_addr || !tag_writes(tags_[i])) continue;
            ChipTensor from = device_args_->tensors[i];
            from.buffer.addr = reinterpret_cast<uint64_t>(bounce.get());
            copy_view(from, h);
        }
    }
    for (int32_t i = 0; i < host_->tensor_count; ++i) {
        const ChipTensor& h = host_->tensors[i];
        if (h.address_space != HOST_SPACE || !tag_writes(tags_[i]) || device_host_[i] == 0) continue;
        ChipTensor from = device_args_->tensors[i];
        from.buffer.addr = device_host_[i];
        copy_view(from, h);
    }
    copied_back_ = true;
}

std::string StagedArgs::violation(const TensorDescriber& describe) const {
    // The first tensor (in index order) whose backing changed where no written view may write.
    const Guarded* hit = nullptr;
    BlockChanges changed;
    for (int32_t i = 0; i < host_->tensor_count && hit == nullptr; ++i) {
        const ChipTensor& h = host_->tensors[i];
        if (h.address_space != HOST_SPACE) continue;
        for (const Guarded& g : guarded_) {
            if (g.host_addr != h.buffer.addr) continue;
            if (BlockChanges c = g.block.changes(); c.count > 0) {
                hit = &g;
                changed = c;
            }
            break;
        }
    }
    if (hit == nullptr) return {};
    // The views of that backing, in range offsets; which of them the first changed byte belongs to.
    const GuardedBlock& block = hit->block;
    const uint64_t G = CHECKED_GUARD_BYTES;
    const bool before_range = changed.first < G;
    const bool after_range = changed.first >= G + block.len();
    const uint64_t o = changed.first - G;  // a range offset when neither
    int32_t first_view = -1, inside = -1, bounding = -1, ends_before = -1;
    for (int32_t i = 0; i < host_->tensor_count; ++i) {
        const ChipTensor& h = host_->tensors[i];
        if (h.address_space != HOST_SPACE || h.buffer.addr != hit->host_addr) continue;
        const ChipTensor& d = device_args_->tensors[i];
        const uint64_t b = view_begin_bytes(d), e = view_end_bytes(d);
        if (first_view < 0 || b < view_begin_bytes(device_args_->tensors[first_view])) first_view = i;
        if (before_range) continue;
        const bool past_all = after_range || o >= e;
        if (past_all && (ends_before < 0 || e > view_end_bytes(device_args_->tensors[ends_before]))) ends_before = i;
        if (!after_range && o >= b && o < e) {
            if (inside < 0 && is_element_byte(d, o)) inside = i;
            if (bounding < 0) bounding = i;
        }
    }
    int32_t index;
    std::string what;
    const std::string count = bytes_phrase(changed.count) + " changed outside the views the task may write";
    if (inside >= 0) {
        index = inside;
        what = std::string("wrote into its view, which the task only reads (") + tensor_arg_type_name(tags_[index]) +
               "): " + count;
    } else if (bounding >= 0) {
        index = bounding;
        what = "wrote between the elements of its strided view: " + count + ", the first " +
               bytes_phrase(o - view_begin_bytes(device_args_->tensors[index])) + " after the view's first byte";
    } else if (ends_before >= 0) {
        index = ends_before;
        const uint64_t end = G + view_end_bytes(device_args_->tensors[index]);
        uint64_t next = GuardedBlock::block_bytes(block.len());  // where the next view of the backing starts
        for (int32_t i = 0; i < host_->tensor_count; ++i)
            if (host_->tensors[i].address_space == HOST_SPACE && host_->tensors[i].buffer.addr == hit->host_addr &&
                G + view_begin_bytes(device_args_->tensors[i]) >= end &&
                G + view_begin_bytes(device_args_->tensors[i]) < next)
                next = G + view_begin_bytes(device_args_->tensors[i]);
        const BlockChanges past = block.changes(end, next);
        what = "wrote past the end of its view: " + count + ", as far as " + bytes_phrase(past.last - end + 1) +
               " past the view's last byte";
    } else {
        index = first_view;
        const uint64_t begin = G + view_begin_bytes(device_args_->tensors[index]);
        const BlockChanges ahead = block.changes(0, begin);
        what = "wrote before the start of its view: " + count + ", as far as " + bytes_phrase(begin - ahead.first) +
               " before the view's first byte";
    }
    std::string name;
    if (describe) name = describe(index);
    if (name.empty()) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "tensor %d (host bytes at 0x%" PRIx64 ")", index, hit->host_addr);
        name = buf;
    }
    return name + ": " + what;
}

StagedArgs stage_in(const ChipStorageTaskArgs& host_args, std::span<const TensorArgType> tags, Device& device,
                    StagingMode mode) {
    const int32_t n = host_args.tensor_count;
    if (n < 0 || n > CHIP_MAX_TENSOR_ARGS)
        throw std::invalid_argument("stage_in: tensor_count must be in [0, 256] (got " + std::to_string(n) + ")");
    if (tags.size() != static_cast<size_t>(n))
        throw std::invalid_argument("stage_in: " + std::to_string(tags.size()) + " tags for " + std::to_string(n) +
                                    " tensors");
    bool any_host = false;
    for (int32_t i = 0; i < n; ++i) {
        if (!is_known_tag(tags[i]))
            throw std::invalid_argument("stage_in: tensor[" + std::to_string(i) + "]: unknown tag " +
                                        std::to_string(static_cast<int32_t>(tags[i])));
        const ValidationError e = validate_chip_tensor(host_args.tensors[i]);
        if (!e.ok()) throw std::invalid_argument("stage_in: tensor[" + std::to_string(i) + "]: " + e.message());
        any_host = any_host || host_args.tensors[i].address_space == HOST_SPACE;
    }
    const DeviceFacts& facts = device.facts();
    if (mode == StagingMode::ZERO_COPY && any_host && !facts.unified_host_memory)
        throw std::invalid_argument("stage_in: a zero-copy run needs a device that shares host memory; " + facts.name +
                                    " does not (stage the run instead)");
    StagedArgs staged(device, host_args);
    staged.tags_.assign(tags.begin(), tags.end());
    if (mode == StagingMode::ZERO_COPY) return staged;
    const bool checked = mode == StagingMode::CHECKED;

    // One device block per host backing, covering the union of its views.
    struct Range {
        uint64_t begin = UINT64_MAX;
        uint64_t end = 0;
        uint64_t device = 0;
        unsigned char* reach = nullptr;  // where the chip process reaches the range on the device (null: it cannot)
        size_t guarded = 0;              // CHECKED: index into staged.guarded_
        bool copy_in = false;            // unreachable: a view must be copied in
        bool writes = false;             // a view is written
    };
    std::unordered_map<uint64_t, Range> ranges;
    for (int32_t i = 0; i < n; ++i) {
        const ChipTensor& t = host_args.tensors[i];
        if (t.address_space != HOST_SPACE) continue;
        Range& r = ranges[t.buffer.addr];
        const uint64_t b = view_begin_bytes(t) / RANGE_ALIGN * RANGE_ALIGN;
        r.begin = b < r.begin ? b : r.begin;
        r.end = view_end_bytes(t) > r.end ? view_end_bytes(t) : r.end;
        r.copy_in = r.copy_in || copies_in(tags[i]);
        r.writes = r.writes || tag_writes(tags[i]);
    }
    for (auto& [addr, r] : ranges) {
        const uint64_t len = r.end - r.begin;
        const uint64_t block =
            device.alloc(checked ? GuardedBlock::block_bytes(len) : len);  // throws; staged frees the rest
        staged.blocks_.push_back(block);
        staged.staged_bytes_ += len;
        auto* reach = static_cast<unsigned char*>(device.host_address(block));
        if (checked) {
            if (reach == nullptr)
                throw std::invalid_argument("stage_in: a checked run needs device memory the chip process can read; " +
                                            facts.name + "'s is out of its reach");
            r.guarded = staged.guarded_.size();
            staged.guarded_.push_back({addr, r.begin, GuardedBlock(reach, len)});  // fills the guards
            const uint64_t shift = static_cast<uint64_t>(staged.guarded_.back().block.range() - reach);
            r.device = block + shift;
            r.reach = reach + shift;
        } else {
            r.device = block;
            r.reach = reach;
        }
        if (r.reach == nullptr) {
            staged.staged_.push_back({addr, r.begin, r.device, len, r.writes});
            if (r.copy_in) device.copy_to_device(r.device, reinterpret_cast<const unsigned char*>(addr) + r.begin, len);
        }
    }
    for (int32_t i = 0; i < n; ++i) {
        const ChipTensor& h = host_args.tensors[i];
        if (h.address_space != HOST_SPACE) continue;
        const Range& r = ranges[h.buffer.addr];
        ChipTensor& d = staged.device_args_->tensors[i];
        d.buffer.addr = r.device;
        d.buffer.size = r.end - r.begin;
        d.start_offset = (view_begin_bytes(h) - r.begin) / data_type_element_size(h.dtype);
        d.address_space = DEVICE_SPACE;
        if (r.reach == nullptr) continue;  // copied whole above; written views come back in copy_back()
        staged.device_host_[i] = reinterpret_cast<uint64_t>(r.reach);
        ChipTensor in_reach = d;
        in_reach.buffer.addr = reinterpret_cast<uint64_t>(r.reach);
        if (copies_in(tags[i])) copy_view(h, in_reach);
        if (!checked) continue;
        GuardedBlock& g = staged.guarded_[r.guarded].block;
        if (copies_in(tags[i])) for_each_run(d, [&](uint64_t at, uint64_t nbytes) { g.add_staged(at, nbytes); });
        if (tag_writes(tags[i])) for_each_run(d, [&](uint64_t at, uint64_t nbytes) { g.add_written(at, nbytes); });
    }
    for (auto& g : staged.guarded_) {
        if (const uint64_t kept = g.block.seal(); kept > 0) {
            const uint64_t snapshot = device.alloc(kept);  // throws; staged frees the rest
            staged.snapshots_.push_back(snapshot);
            g.block.snapshot(static_cast<unsigned char*>(device.host_address(snapshot)));
        }
    }
    if (!staged.staged_.empty()) device.synchronize();  // the copies in have landed before a kernel reads them
    return staged;
}

}  // namespace simpler::chip
