// TaskTable<T>: one value per task, keyed by TaskId, in pooled slots.
//
// The engine keeps values per task (its record, its graph node, its state in
// the dependency tracker) from submit until the task is retired. A node-based map pays an allocation and a free per
// task for the node alone, and more for every vector the value owns; at
// hundreds of thousands of tasks a second that is a fifth of a submit. Here an
// erased task's slot goes on a free list and the next insert takes it back,
// with the value reset by `T::reset()`: a reset value holds nothing of the task
// before (no edges, no arguments, no flags) but keeps its vectors' capacity, so
// a steady stream of tasks allocates nothing. Past `KEEP_WARM` free slots an
// erased value is replaced by a fresh `T{}` instead, returning its memory: the
// table keeps the capacity of a working set, not of the largest batch ever.
//
// Slots live in a deque, so a reference to a value stays valid until its task
// is erased (inserting others moves nothing). Ids map to the slots' addresses
// through an open-addressing index (Fibonacci hashing, linear probing, deletion
// by backward shift: no tombstones), at most half full.
//
// T: default-constructible, move-assignable, with `void reset() noexcept`.
// Not thread-safe (the engine's mutex guards it); ids are nonzero.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simpler/deps/task_id.h"

namespace simpler {

template <class T>
class TaskTable {
public:
    // Free slots whose values keep their capacity; more are freed on erase.
    // Enough for a batch of 100,000 tasks to reuse the previous batch's
    // storage (an engine record of a 4-argument task keeps ~0.8 KB).
    static constexpr size_t KEEP_WARM = size_t{1} << 17;

    TaskTable() = default;
    // The index holds the slots' addresses: a copy would point into the
    // original. A move takes the deque's storage whole, so they stay right.
    TaskTable(const TaskTable&) = delete;
    TaskTable& operator=(const TaskTable&) = delete;
    TaskTable(TaskTable&&) = default;
    TaskTable& operator=(TaskTable&&) = default;
    ~TaskTable() = default;

    // The value of a new task `id` (reset, or fresh). Throws std::logic_error
    // when `id` is 0 or already in the table.
    T& insert(TaskId id) {
        if (id == 0) throw std::logic_error("TaskTable: task id 0");
        T* value = try_insert(id);
        if (value == nullptr) throw std::logic_error("TaskTable: task " + std::to_string(id) + " added twice");
        return *value;
    }

    // insert(id), or null (nothing changed) when `id` is already in the table:
    // one lookup where contains() then insert() take two. `id` is nonzero.
    T* try_insert(TaskId id) {
        if ((size_ + 1) * 2 > buckets_.size()) grow();
        size_t b = home(id);
        for (; buckets_[b].id != 0; b = (b + 1) & mask_)
            if (buckets_[b].id == id) return nullptr;
        Slot* slot;
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            slot = &slots_.emplace_back();
        }
        slot->id = id;
        buckets_[b] = {id, slot};
        ++size_;
        return &slot->value;
    }

    [[nodiscard]] T* find(TaskId id) noexcept {
        const size_t b = bucket_of(id);
        return b == NONE ? nullptr : &buckets_[b].slot->value;
    }
    [[nodiscard]] const T* find(TaskId id) const noexcept {
        const size_t b = bucket_of(id);
        return b == NONE ? nullptr : &buckets_[b].slot->value;
    }
    [[nodiscard]] bool contains(TaskId id) const noexcept { return bucket_of(id) != NONE; }

    // Drops task `id` (false when absent); its slot is reused by a later insert.
    bool erase(TaskId id) {
        return erase_if(id, [](const T&) {});
    }

    // erase(id) after `check(value)` returned (it may throw, and then nothing
    // changes): one lookup where find() then erase() take two.
    template <class Check>
    bool erase_if(TaskId id, Check&& check) {
        size_t b = bucket_of(id);
        if (b == NONE) return false;
        check(std::as_const(buckets_[b].slot->value));
        Slot* s = buckets_[b].slot;
        s->id = 0;
        if (free_.size() < KEEP_WARM) {
            s->value.reset();
        } else {
            s->value = T{};
        }
        free_.push_back(s);
        --size_;
        // Backward shift: pull up every later bucket of the run whose home does
        // not lie cyclically in (b, j], so that no probe run has a hole.
        for (size_t j = (b + 1) & mask_; buckets_[j].id != 0; j = (j + 1) & mask_) {
            const size_t h = home(buckets_[j].id);
            const bool stays = b <= j ? (b < h && h <= j) : (b < h || h <= j);
            if (stays) continue;
            buckets_[b] = buckets_[j];
            b = j;
        }
        buckets_[b] = {};
        return true;
    }

    [[nodiscard]] size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    // Slots allocated: the most tasks ever in the table at once.
    [[nodiscard]] size_t slot_count() const noexcept { return slots_.size(); }

    // Calls f(id, value) for every task in the table, in no particular order.
    // f must not insert or erase.
    template <class F>
    void for_each(F&& f) {
        for (Slot& s : slots_)
            if (s.id != 0) f(s.id, s.value);
    }
    template <class F>
    void for_each(F&& f) const {
        for (const Slot& s : slots_)
            if (s.id != 0) f(s.id, s.value);
    }

private:
    struct Slot {
        TaskId id = 0;  // 0: free
        T value;
    };
    // The slot's address, not its index: a find is one load, no deque arithmetic.
    struct Bucket {
        TaskId id = 0;  // 0: empty
        Slot* slot = nullptr;
    };
    static constexpr size_t NONE = SIZE_MAX;

    // Blocked Fibonacci hashing: ids that share id / GROUP get one block of
    // GROUP adjacent buckets, picked by the top bits of (id / GROUP) times
    // 2^64/phi, at the position id % GROUP within it. Consecutive ids (a
    // batch) thus fill one 64-byte block after another instead of one random
    // cache line each (a miss per task at 100,000 live), while blocks land far
    // apart, so probe runs stay short; with the id's own low bits a window of
    // live ids would be one run, and an erase's backward shift would walk all of it.
    static constexpr size_t GROUP = 4;  // 16-byte buckets: a block is 64 bytes
    [[nodiscard]] size_t home(TaskId id) const noexcept {
        const size_t block = static_cast<size_t>(((id / GROUP) * 0x9E3779B97F4A7C15ULL) >> shift_) & ~(GROUP - 1);
        return block | static_cast<size_t>(id % GROUP);
    }

    [[nodiscard]] size_t bucket_of(TaskId id) const noexcept {
        if (size_ == 0 || id == 0) return NONE;
        for (size_t b = home(id); buckets_[b].id != 0; b = (b + 1) & mask_)
            if (buckets_[b].id == id) return b;
        return NONE;
    }

    void grow() {
        std::vector<Bucket> old =
            std::exchange(buckets_, std::vector<Bucket>(buckets_.empty() ? 64 : buckets_.size() * 2));
        mask_ = buckets_.size() - 1;
        shift_ = 64 - static_cast<unsigned>(std::countr_zero(buckets_.size()));
        for (const Bucket& o : old) {
            if (o.id == 0) continue;
            size_t b = home(o.id);
            while (buckets_[b].id != 0) b = (b + 1) & mask_;
            buckets_[b] = o;
        }
    }

    std::vector<Bucket> buckets_;  // a power of two long, at most half full
    size_t mask_ = 0;
    unsigned shift_ = 63;  // 64 - log2(buckets_.size())
    size_t size_ = 0;
    std::deque<Slot> slots_;
    std::vector<Slot*> free_;  // free slots, most recently freed last
};

}  // namespace simpler
