#include "simpler/deps/node_pool.h"

namespace simpler {

NodePool::~NodePool() {
    for (void* chunk : chunks_) upstream_->deallocate(chunk, CHUNK, alignof(std::max_align_t));
}

void* NodePool::do_allocate(size_t bytes, size_t alignment) {
    if (!pooled(bytes, alignment)) return upstream_->allocate(bytes, alignment);
    const size_t c = class_of(bytes);
    if (FreeBlock* b = free_[c]) {
        free_[c] = b->next;
        return b;
    }
    const size_t size = (c + 1) * STEP;
    if (static_cast<size_t>(limit_ - cursor_) < size) {
        // The rest of the old chunk (less than one block of this class) is left unused.
        chunks_.reserve(chunks_.size() + 1);  // a throw here leaves nothing allocated
        auto* chunk = static_cast<std::byte*>(upstream_->allocate(CHUNK, alignof(std::max_align_t)));
        chunks_.push_back(chunk);
        cursor_ = chunk;
        limit_ = chunk + CHUNK;
    }
    void* p = cursor_;
    cursor_ += size;
    return p;
}

void NodePool::do_deallocate(void* p, size_t bytes, size_t alignment) {
    if (!pooled(bytes, alignment)) {
        upstream_->deallocate(p, bytes, alignment);
        return;
    }
    const size_t c = class_of(bytes);
    auto* b = static_cast<FreeBlock*>(p);
    b->next = free_[c];
    free_[c] = b;
}

}  // namespace simpler
