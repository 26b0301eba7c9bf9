// Ordering against an oracle (docs/explanation/dependencies.md: "sequential consistency per
// byte"): random sequences of tasks with random tags and views over a few
// backings are executed on real bytes, in many random orders that respect the
// inferred graph (with tasks completing, and so retiring, along the way). Every
// task must observe the bytes it observes in sequential execution, and the final
// bytes must match. Every edge resting on a proven overlap must join two tasks
// whose byte sets share a byte; with the different-stride extension no edge
// joins two tasks whose byte sets are disjoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <random>
#include <vector>

#include "deps_fixtures.h"

using namespace simpler;

using simpler::DependencyTracker;
using simpler::TaskId;
using simpler::TrackerConfig;
using TT = TensorArgType;

namespace {

struct Backing {
    BufferDescriptor desc;
    uint32_t rows, cols;  // a row-major UINT8 matrix over the whole backing
};

struct Task {
    std::vector<Tensor> tensors;
    std::vector<TT> tags;
};

// Byte positions of a view, in element order.
std::vector<uint64_t> positions(const Tensor& t) {
    std::vector<uint64_t> out;
    const uint32_t elem = data_type_element_size(t.dtype);
    uint32_t k[MAX_TENSOR_DIMS] = {};
    for (;;) {
        uint64_t at = t.byte_offset;
        for (uint32_t i = 0; i < t.ndims; ++i) at += uint64_t{k[i]} * t.strides[i] * elem;
        for (uint32_t b = 0; b < elem; ++b) out.push_back(at + b);
        uint32_t i = t.ndims;
        while (i-- > 0) {
            if (++k[i] < t.shapes[i]) break;
            k[i] = 0;
        }
        if (i == UINT32_MAX) return out;
    }
}

uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xbf58476d1ce4e5b9ULL;
}

class Scenario {
public:
    explicit Scenario(uint64_t seed) : rng_(seed) {
        const uint32_t nb = static_cast<uint32_t>(uniform(1, 3));
        for (uint32_t b = 0; b < nb; ++b) {
            const uint32_t rows = static_cast<uint32_t>(uniform(2, 12)), cols = static_cast<uint32_t>(uniform(2, 16));
            backings_.push_back({deps_test::host_backing(uint64_t{rows} * cols, b + 1), rows, cols});
        }
        const size_t ntasks = uniform(5, 40);
        for (size_t i = 0; i < ntasks; ++i) {
            Task t;
            const size_t nargs = uniform(1, 4);
            for (size_t a = 0; a < nargs; ++a) {
                t.tensors.push_back(random_view(backings_[uniform(0, nb - 1)]));
                const uint64_t r = uniform(0, 99);
                t.tags.push_back(r < 35   ? TT::INPUT
                                 : r < 55 ? TT::OUTPUT
                                 : r < 70 ? TT::OUTPUT_EXISTING
                                 : r < 92 ? TT::INOUT
                                          : TT::NO_DEP);
            }
            tasks_.push_back(std::move(t));
        }
    }

    uint64_t uniform(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_); }
    std::mt19937_64& rng() { return rng_; }
    const std::vector<Backing>& backings() const { return backings_; }
    const std::vector<Task>& tasks() const { return tasks_; }

private:
    Tensor random_view(const Backing& b) {
        const uint32_t r0 = static_cast<uint32_t>(uniform(0, b.rows - 1));
        const uint32_t r1 = static_cast<uint32_t>(uniform(r0 + 1, b.rows));
        const uint32_t c0 = static_cast<uint32_t>(uniform(0, b.cols - 1));
        const uint32_t c1 = static_cast<uint32_t>(uniform(c0 + 1, b.cols));
        const uint32_t rs = static_cast<uint32_t>(uniform(1, 2)), cs = static_cast<uint32_t>(uniform(1, 2));
        const uint64_t off = uint64_t{r0} * b.cols + c0;
        const uint32_t h = (r1 - r0 + rs - 1) / rs, w = (c1 - c0 + cs - 1) / cs;
        std::vector<uint32_t> shapes{h, w}, strides{b.cols * rs, cs};
        switch (uniform(0, 5)) {
            case 0:  // transposed
                std::swap(shapes[0], shapes[1]);
                std::swap(strides[0], strides[1]);
                break;
            case 1: {  // a 1-D run of bytes
                const uint64_t n = uint64_t{b.rows} * b.cols;
                const uint64_t lo = uniform(0, n - 1);
                shapes = {static_cast<uint32_t>(uniform(1, n - lo))};
                strides = {1};
                return make_tensor(b.desc, shapes, DataType::UINT8, strides, lo);
            }
            case 2:  // 16-bit elements over whole rows of an even row length
                if (b.cols % 2 == 0 && cs == 1)
                    return make_tensor(b.desc, std::vector<uint32_t>{h, b.cols / 2}, DataType::FLOAT16,
                                       std::vector<uint32_t>{b.cols * rs / 2, 1}, uint64_t{r0} * b.cols);
                break;
            default: break;
        }
        return make_tensor(b.desc, shapes, DataType::UINT8, strides, off);
    }

    std::mt19937_64 rng_;
    std::vector<Backing> backings_;
    std::vector<Task> tasks_;
};

using Memory = std::vector<std::vector<uint8_t>>;  // one byte vector per backing

size_t backing_of(const std::vector<Backing>& bs, const Tensor& t) {
    for (size_t i = 0; i < bs.size(); ++i)
        if (bs[i].desc.identity == t.buffer.identity) return i;
    return SIZE_MAX;
}

// Runs one task: hashes every byte it reads, then writes every byte it writes
// with values derived from that hash. Returns the hash (what the task observed).
uint64_t execute(const std::vector<Backing>& bs, Memory& mem, size_t id, const Task& t) {
    uint64_t h = mix(0, id);
    for (size_t a = 0; a < t.tensors.size(); ++a) {
        if (!tag_reads(t.tags[a])) continue;
        const auto& m = mem[backing_of(bs, t.tensors[a])];
        for (uint64_t p : positions(t.tensors[a])) h = mix(h, m[p]);
    }
    for (size_t a = 0; a < t.tensors.size(); ++a) {
        if (!tag_writes(t.tags[a])) continue;
        auto& m = mem[backing_of(bs, t.tensors[a])];
        uint64_t k = 0;
        for (uint64_t p : positions(t.tensors[a])) m[p] = static_cast<uint8_t>(mix(h, (a << 32) | k++) >> 56);
    }
    return h;
}

Memory initial_memory(const std::vector<Backing>& bs) {
    Memory mem;
    for (const Backing& b : bs) {
        std::vector<uint8_t> bytes(b.desc.nbytes);
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 31 + b.desc.identity.buffer_id);
        mem.push_back(std::move(bytes));
    }
    return mem;
}

// True when tasks a and b touch a common byte that at least one of them writes.
bool conflict(const std::vector<Backing>& bs, const Task& a, const Task& b) {
    for (size_t i = 0; i < a.tensors.size(); ++i)
        for (size_t j = 0; j < b.tensors.size(); ++j) {
            const TT ta = a.tags[i], tb = b.tags[j];
            if (ta == TT::NO_DEP || tb == TT::NO_DEP || !(tag_writes(ta) || tag_writes(tb))) continue;
            if (backing_of(bs, a.tensors[i]) != backing_of(bs, b.tensors[j])) continue;
            std::vector<uint64_t> pa = positions(a.tensors[i]), pb = positions(b.tensors[j]);
            std::sort(pa.begin(), pa.end());
            std::sort(pb.begin(), pb.end());
            std::vector<uint64_t> common;
            std::set_intersection(pa.begin(), pa.end(), pb.begin(), pb.end(), std::back_inserter(common));
            if (!common.empty()) return true;
        }
    return false;
}

struct Counts {
    uint64_t edges = 0, false_edges = 0, schedules = 0;
};

// Task i of a scenario is submitted as id i + 1 (task ids are nonzero).
TaskId id_of(size_t i) { return static_cast<TaskId>(i) + 1; }
size_t index_of(TaskId id) { return static_cast<size_t>(id - 1); }

void run_scenario(uint64_t seed, const TrackerConfig& config, bool exact, Counts& counts) {
    Scenario sc(seed);
    const auto& bs = sc.backings();
    const auto& tasks = sc.tasks();

    // Sequential reference; tasks a submit refuses are left out of every run.
    std::vector<bool> accepted(tasks.size(), true);
    {
        DependencyTracker probe(config);
        for (size_t i = 0; i < tasks.size(); ++i) {
            try {
                probe.submit(id_of(i), tasks[i].tensors, tasks[i].tags);
            } catch (const std::invalid_argument&) {
                accepted[i] = false;
            }
        }
    }
    Memory seq = initial_memory(bs);
    std::vector<uint64_t> seen(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i)
        if (accepted[i]) seen[i] = execute(bs, seq, i, tasks[i]);

    for (int schedule = 0; schedule < 8; ++schedule) {
        ++counts.schedules;
        DependencyTracker tracker(config);
        Memory mem = initial_memory(bs);
        std::vector<std::vector<TaskId>> preds(tasks.size());
        std::vector<bool> done(tasks.size(), false);
        std::vector<size_t> pending;
        auto run_one_ready = [&]() -> bool {
            std::vector<size_t> ready;
            for (size_t p : pending) {
                bool ok = true;
                for (TaskId q : preds[p]) ok = ok && done[index_of(q)];
                if (ok) ready.push_back(p);
            }
            if (ready.empty()) return false;
            const size_t pick = ready[sc.uniform(0, ready.size() - 1)];
            EXPECT_EQ(execute(bs, mem, pick, tasks[pick]), seen[pick]) << "seed " << seed << " task " << pick;
            done[pick] = true;
            tracker.complete(id_of(pick));
            pending.erase(std::find(pending.begin(), pending.end(), pick));
            return true;
        };
        for (size_t i = 0; i < tasks.size(); ++i) {
            if (!accepted[i]) continue;
            const auto p = tracker.submit(id_of(i), tasks[i].tensors, tasks[i].tags);
            preds[i].assign(p.begin(), p.end());
            for (TaskId q : preds[i]) {
                ++counts.edges;
                const auto why = tracker.explain(q, id_of(i));
                EXPECT_TRUE(why.has_value());
                const bool real = conflict(bs, tasks[index_of(q)], tasks[i]);
                if (!real) ++counts.false_edges;
                if (why && why->proven()) {
                    EXPECT_TRUE(real) << "proven edge without a shared byte: " << why->to_string();
                }
                if (exact) {
                    EXPECT_TRUE(real) << "false edge with the extension: " << (why ? why->to_string() : "");
                }
            }
            pending.push_back(i);
            while (!pending.empty() && sc.uniform(0, 2) == 0 && run_one_ready()) {}
        }
        while (!pending.empty()) ASSERT_TRUE(run_one_ready()) << "seed " << seed << ": no ready task (a cycle)";
        EXPECT_EQ(mem, seq) << "seed " << seed << " schedule " << schedule;
        EXPECT_EQ(tracker.live_entries(), 0u);
    }
}

}  // namespace

TEST(OrderingOracle, EveryScheduleOfTheInferredGraphGivesTheSequentialBytes) {
    Counts base, exact;
    for (uint64_t seed = 1; seed <= 400; ++seed) {
        run_scenario(seed, TrackerConfig{.overlap = {.exact_strides = false}}, false, base);
        run_scenario(seed, TrackerConfig{}, true, exact);
        if (HasFailure()) return;
    }
    EXPECT_GT(exact.edges, 1000u);
    std::printf("[ordering] %llu schedules; base model %llu edges, %llu false; with extension %llu edges, %llu false\n",
                static_cast<unsigned long long>(base.schedules) + exact.schedules,
                static_cast<unsigned long long>(base.edges), static_cast<unsigned long long>(base.false_edges),
                static_cast<unsigned long long>(exact.edges), static_cast<unsigned long long>(exact.false_edges));
}
