// Staging: moving host-space arguments into device memory before a chip
// orchestration runs and back after, as on real hardware.
//
// stage_in() groups the HOST-space tensors of a ChipStorageTaskArgs by backing
// (buffer.addr), allocates one device block per backing covering the union of
// its views (so views that alias on the host still alias on the device and the
// runtime orders them), fills it, and rewrites each tensor to the device
// copy. copy_back() copies out exactly the elements of every written view
// (OUTPUT, OUTPUT_EXISTING, INOUT) — never the gaps between a strided view's
// elements. DEVICE-space tensors pass through untouched. ZERO_COPY skips all
// of it: kernels dereference the host addresses directly, which only a device
// with unified host memory allows (DeviceFacts).
//
// How bytes move depends on the device (device.h). Where the chip process
// reaches device memory (Device::host_address), the elements of every view
// that is read (INPUT, INOUT), kept (OUTPUT_EXISTING: elements a kernel leaves
// alone come back unchanged) or untracked (NO_DEP) are copied in, and written
// views' elements copied out, in place. Where it does not, a backing with such
// a view is copied in whole range by one Device::copy_to_device, and a backing
// whose written views are at most 64 contiguous runs (adjacent rows merged) is
// read back run by run straight into the host bytes; one of more runs is read
// back whole into a host bounce buffer by one Device::copy_to_host, from which
// only the written views' elements reach the host bytes.
//
// CHECKED stages as STAGE does, but each backing's block is a GuardedBlock
// (guarded_block.h): CHECKED_GUARD_BYTES of pattern on each side of the staged
// range, the range's gaps filled with the pattern too, and the bytes the run
// may not change snapshotted into another device block. After the run,
// violation() names the first tensor whose backing changed outside its written
// views' elements — before or after the views, in a strided view's gaps, or in
// a view the task only reads — and the caller copies nothing back. It needs
// device memory the chip process reaches.
//
// StagedArgs owns its device blocks and frees them on destruction. Tags travel
// beside the arguments (ChipStorageTaskArgs carries none). Host layer: throws
// std::invalid_argument for a tag count that differs from tensor_count, an
// unknown tag, an invalid ChipTensor (naming the index) or a mode the device
// cannot serve, std::runtime_error when device memory cannot fit a staged copy
// or a copy fails.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "simpler/chip/device.h"
#include "simpler/chip/guarded_block.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler::chip {

enum class StagingMode : uint8_t { STAGE = 0, ZERO_COPY = 1, CHECKED = 2 };

// How a checked run's message names tensor `index` ("tensor 1 (buffer ...)");
// empty: "tensor <index> (host bytes at 0x...)".
using TensorDescriber = std::function<std::string(int32_t index)>;

class StagedArgs {
public:
    StagedArgs(const StagedArgs&) = delete;
    StagedArgs& operator=(const StagedArgs&) = delete;
    StagedArgs(StagedArgs&&) noexcept = default;
    ~StagedArgs();

    // The arguments the chip runtime receives (host tensors rewritten to device copies).
    [[nodiscard]] const ChipStorageTaskArgs& device_args() const noexcept { return *device_args_; }
    // Copies every written view back to its host bytes. Idempotent. Throws
    // std::runtime_error when the device fails a copy.
    void copy_back();
    [[nodiscard]] uint64_t staged_bytes() const noexcept { return staged_bytes_; }
    [[nodiscard]] size_t staged_backings() const noexcept { return blocks_.size(); }
    // CHECKED only (empty otherwise): after the run, what changed outside the
    // written views' elements — "tensor <i> (...): wrote past the end of its
    // view (...)" for the first backing with a change, in tensor order — or
    // empty when nothing did.
    [[nodiscard]] std::string violation(const TensorDescriber& describe = {}) const;

private:
    friend StagedArgs stage_in(const ChipStorageTaskArgs&, std::span<const TensorArgType>, Device&, StagingMode);
    StagedArgs(Device& device, const ChipStorageTaskArgs& host);

    Device* device_;
    std::unique_ptr<ChipStorageTaskArgs> host_;
    std::unique_ptr<ChipStorageTaskArgs> device_args_;
    std::vector<TensorArgType> tags_;
    std::vector<uint64_t> blocks_;     // device addresses
    // One per staged backing: where its range lies on the host and the device,
    // and whether a written view must come back through a bounce buffer (the
    // device's memory is out of the chip process's reach).
    struct Staged {
        uint64_t host_addr;
        uint64_t host_begin;
        uint64_t device;
        uint64_t len;
        bool bounce_back;
    };
    std::vector<Staged> staged_;
    std::vector<uint64_t> device_host_;  // per tensor: where the chip process reaches its device copy (0: it cannot)
    bool copied_back_ = false;
    struct Guarded {
        uint64_t host_addr;     // the backing
        uint64_t host_begin;    // the host byte offset the range starts at
        GuardedBlock block;
    };
    std::vector<Guarded> guarded_;    // CHECKED: one per staged backing
    std::vector<uint64_t> snapshots_;  // CHECKED: their snapshots' device blocks
    uint64_t staged_bytes_ = 0;
};

StagedArgs stage_in(const ChipStorageTaskArgs& host_args, std::span<const TensorArgType> tags, Device& device,
                    StagingMode mode);

// Copies the elements of view `src` onto the same-shaped view `dst` (same
// shapes and element size; strides may differ). Contiguous rows use memcpy.
void copy_view(const ChipTensor& src, const ChipTensor& dst) noexcept;

}  // namespace simpler::chip
