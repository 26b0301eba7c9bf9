// The edge log: the edges a Worker created with record_edges inferred since
// its owner last took them (Worker::take_edge_log), each with its explanation.
// Bounded like the trace: once `capacity` edges are kept, later ones are only
// counted, so a long run that never takes its log holds at most `capacity`
// edges; taking the log frees them and starts the count again.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "simpler/deps/edge_explanation.h"

namespace simpler {

inline constexpr size_t DEFAULT_EDGE_LOG_CAPACITY = 1'000'000;

// What take_edge_log() hands over: the edges kept, in submit order, and how
// many more were inferred after the capacity was reached.
struct EdgeLog {
    std::vector<EdgeExplanation> edges;
    uint64_t dropped = 0;
};

class EdgeLogRecorder {
public:
    explicit EdgeLogRecorder(size_t capacity = DEFAULT_EDGE_LOG_CAPACITY) : capacity_(capacity) {}

    // Keeps as many of `edges` as the capacity leaves room for and counts the rest.
    void append(std::span<const EdgeExplanation> edges) {
        const size_t room = capacity_ - std::min(capacity_, log_.edges.size());
        const size_t kept = std::min(room, edges.size());
        log_.edges.insert(log_.edges.end(), edges.begin(), edges.begin() + static_cast<std::ptrdiff_t>(kept));
        log_.dropped += edges.size() - kept;
    }

    // The log so far; this one starts empty, its memory freed.
    [[nodiscard]] EdgeLog take() noexcept { return std::exchange(log_, EdgeLog{}); }

    [[nodiscard]] size_t capacity() const noexcept { return capacity_; }

private:
    size_t capacity_;
    EdgeLog log_;
};

}  // namespace simpler
