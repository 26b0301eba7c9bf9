#include "simpler/chip/live_views.h"

#include "simpler/chip/working_overlap.h"
#include "simpler/task_interface/tensor_arg_type.h"
#include "simpler/view/overlap.h"

namespace simpler::chip {

LiveViews::LiveViews(uint32_t slots) : slots_(slots) {}

LiveViews::Backing& LiveViews::backing_of(uint64_t addr) { return backings_.try_emplace(addr, &memory_).first->second; }

void LiveViews::unfile(Backing& b, uint32_t id) noexcept {
    View& v = view_of(id);
    if (v.filed == Filed::NO) return;
    (void)(v.filed == Filed::WRITER ? b.writers : b.readers).erase(id, v.box);
    v.filed = Filed::NO;
    --filed_;
}

std::span<const uint32_t> LiveViews::add_task(uint32_t slot, uint64_t task_id, Tensor* tensors, const int32_t* tags,
                                              uint32_t count) {
    SlotViews& own = slots_[slot];
    own.task_id = task_id;
    if (own.views.size() < count) own.views.resize(count);
    preds_.clear();
    superseded_.clear();
    // Every view is looked up before any is filed or superseded, so each sees
    // the live views as they were before the task (its producer included).
    for (uint32_t i = 0; i < count; ++i) {
        View& view = own.views[i];
        view.filed = Filed::NO;
        const auto tag = static_cast<TensorArgType>(tags[i]);
        if (tag == TensorArgType::NO_DEP) continue;
        const bool writes = tag_writes(tag);
        Tensor& t = tensors[i];
        view.box = view_box_of(t);
        Backing& b = backing_of(t.addr);
        backing_at_[i] = &b;
        uint64_t producer = NO_PRODUCER;
        const auto visit = [&](const ViewIndex::Item& item, bool entry_writes) {
            const uint32_t pred = item.id / CORE_MAX_TENSOR_ARGS;
            const OverlapAnswer answer = simpler::overlap(view.box, view_of(item.id).box);
            if (answer.overlap == TensorOverlap::NONE) return;
            SlotViews& p = slots_[pred];
            if (entry_writes && (producer == NO_PRODUCER || p.task_id > producer)) producer = p.task_id;
            if (writes && answer.overlap == TensorOverlap::COVERED) superseded_.push_back({&b, item.id});
            if (p.mark == task_id) return;
            p.mark = task_id;
            preds_.push_back(pred);
        };
        b.writers.for_each_candidate(view.box, [&](const ViewIndex::Item& item) { visit(item, true); });
        if (writes) b.readers.for_each_candidate(view.box, [&](const ViewIndex::Item& item) { visit(item, false); });
        t.producer_task = producer;
    }
    for (const Superseded& s : superseded_) unfile(*s.backing, s.id);
    for (uint32_t i = 0; i < count; ++i) {
        const auto tag = static_cast<TensorArgType>(tags[i]);
        if (tag == TensorArgType::NO_DEP) continue;
        Tensor& t = tensors[i];
        Backing& b = *backing_at_[i];
        View& view = own.views[i];
        t.overlap_version = b.version;
        if (tag_writes(tag)) {
            ++b.version;
            b.writers.insert(id_of(slot, i), view.box);
            view.filed = Filed::WRITER;
        } else {
            b.readers.insert(id_of(slot, i), view.box);
            view.filed = Filed::READER;
        }
        ++filed_;
    }
    return preds_;
}

void LiveViews::remove_task(uint32_t slot, const Tensor* tensors, uint32_t count) noexcept {
    std::vector<View>& views = slots_[slot].views;
    for (uint32_t i = 0; i < count && i < views.size(); ++i) {
        if (views[i].filed == Filed::NO) continue;
        if (const auto it = backings_.find(tensors[i].addr); it != backings_.end()) unfile(it->second, id_of(slot, i));
    }
}

void LiveViews::clear() noexcept {
    if (filed_ != 0) {  // a task was not removed: start over
        backings_.clear();
        filed_ = 0;
        for (SlotViews& s : slots_)
            for (View& v : s.views) v.filed = Filed::NO;
        return;
    }
    // The indexes are empty: the next run (often over the same backings) reuses them.
    if (backings_.size() > KEPT_BACKINGS) backings_.clear();  // many backings: a run's temporaries
    for (auto& [addr, b] : backings_) b.version = 0;
}

}  // namespace simpler::chip
