// The Worker round-trip loop the runtime benchmarks share: per iteration, one
// task of one member (of callable 0, or the one given) is submitted and waited
// for. Real time per round trip.
//
// Owns nothing; the caller builds, inits and closes the Worker.
#pragma once

#include <benchmark/benchmark.h>

#include "simpler/engine/worker.h"

namespace simpler::bench {

inline void worker_round_trips(benchmark::State& state, Worker& w, TaskKind kind, const MemberSubmit& member,
                               uint64_t callable = 0) {
    for (auto _ : state) {
        w.submit(kind, callable, {&member, 1}, TaskConfig{});
        w.wait();
    }
}

}  // namespace simpler::bench
