// LiveViews: the chip runtime's live task views, per backing, so that ordering
// a new task costs what finding its conflicting views costs, not a visit of
// every live view of the backing (every row of a stencil lives in one buffer).
//
// Per backing (a working tensor's addr) two ViewIndexes (view/view_index.h):
// the views live tasks write and the views they only read. add_task() looks
// each tensor of a new task up — a reader among the writers (read after write),
// a writer among the writers and readers (write after write, write after read)
// — decides every candidate with view's exact overlap(), and answers the
// distinct ring slots the task must follow. Every view of the task is looked
// up before any of its views is filed or supersedes one. A write that COVERS
// an earlier view supersedes it: that view leaves the index,
// since any later task that meets its bytes meets the new write's, which
// follows it. remove_task() takes a finished task's views out; nothing later
// can depend on a finished task. A view tagged NO_DEP is neither looked up nor
// filed.
//
// Owns the indexes and a box per filed view; holds no tensor and no task. The
// caller (Runtime, under its lock) passes the same slot and tensors to
// remove_task() that it gave add_task(), removes a task before its slot is
// reused, and clears between runs. Not thread-safe. Any tensor geometry is
// accepted: overlap() is total, and NONE alone drops an edge.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <span>
#include <unordered_map>
#include <vector>

#include "simpler/chip/tensor.h"
#include "simpler/view/view_box.h"
#include "simpler/view/view_index.h"

namespace simpler::chip {

class LiveViews {
public:
    // For a ring of `slots` task slots (each task at most CORE_MAX_TENSOR_ARGS tensors).
    explicit LiveViews(uint32_t slots);

    // Orders the task of `task_id` in `slot` (tensors[i] tagged tags[i], i < count
    // <= CORE_MAX_TENSOR_ARGS): answers the distinct slots of live tasks it must
    // follow (valid until the next call), sets each tensor's producer_task (the
    // latest live task writing a byte it may touch, NO_PRODUCER when none) and
    // overlap_version (the writes filed on its backing before it this run), and
    // files its views.
    std::span<const uint32_t> add_task(uint32_t slot, uint64_t task_id, Tensor* tensors, const int32_t* tags,
                                       uint32_t count);
    // Takes the views of the task in `slot` out of the indexes.
    void remove_task(uint32_t slot, const Tensor* tensors, uint32_t count) noexcept;
    // Ends a run: the write counts start again from 0. Call with no live task.
    void clear() noexcept;

    // Views filed now, over every backing.
    [[nodiscard]] size_t size() const noexcept { return filed_; }

private:
    enum class Filed : uint8_t { NO, WRITER, READER };
    struct View {
        ViewBox box;
        Filed filed = Filed::NO;
    };
    struct SlotViews {
        uint64_t task_id = 0;
        uint64_t mark = UINT64_MAX;  // the last task that took this slot as a predecessor
        std::vector<View> views;     // per tensor of the slot's task
    };
    struct Backing {
        explicit Backing(std::pmr::memory_resource* memory) : writers(memory), readers(memory) {}
        ViewIndex writers;
        ViewIndex readers;
        int32_t version = 0;  // writes filed on this backing this run
    };
    struct Superseded {
        Backing* backing;
        uint32_t id;
    };
    static uint32_t id_of(uint32_t slot, uint32_t tensor) noexcept { return slot * CORE_MAX_TENSOR_ARGS + tensor; }
    View& view_of(uint32_t id) noexcept { return slots_[id / CORE_MAX_TENSOR_ARGS].views[id % CORE_MAX_TENSOR_ARGS]; }
    Backing& backing_of(uint64_t addr);
    void unfile(Backing& b, uint32_t id) noexcept;

    // Backings kept (with their empty indexes) from one run to the next.
    static constexpr size_t KEPT_BACKINGS = 64;

    std::pmr::unsynchronized_pool_resource memory_;
    std::unordered_map<uint64_t, Backing> backings_;
    std::vector<SlotViews> slots_;
    Backing* backing_at_[CORE_MAX_TENSOR_ARGS] = {};  // scratch of add_task: each tensor's backing
    std::vector<uint32_t> preds_;       // add_task's answer
    std::vector<Superseded> superseded_;  // scratch of add_task: the views its writes cover
    size_t filed_ = 0;
};

}  // namespace simpler::chip
