// A batch of one-member tasks for Worker::submit_many (EngineCore::submit_many),
// handed over one task at a time.
#pragma once

#include <cstddef>
#include <span>

#include "simpler/engine/ids.h"

namespace simpler {

// The one-member tasks of a batch, produced one at a time: task(i) is task i's
// member, the same each time it is asked for, valid until the next call (a
// source may build it into scratch space: a tiling's tasks are never all held).
class BatchSource {
public:
    virtual ~BatchSource() = default;
    [[nodiscard]] virtual size_t size() const noexcept = 0;
    virtual const MemberSubmit& task(size_t i) = 0;
};

// A batch held whole.
class SpanBatch final : public BatchSource {
public:
    explicit SpanBatch(std::span<const MemberSubmit> tasks) noexcept : tasks_(tasks) {}
    [[nodiscard]] size_t size() const noexcept override { return tasks_.size(); }
    const MemberSubmit& task(size_t i) override { return tasks_[i]; }

private:
    std::span<const MemberSubmit> tasks_;
};

}  // namespace simpler
