// RemoteChildren: the remote L3 Workers of a Worker, as the relay factory its
// EngineWorker serves them with (bound in bind_remote.cpp, taken by
// EngineWorker's constructor in bind_engine.cpp).
#pragma once

#include <cstdint>

#include "simpler/engine/child_handlers.h"

struct RemoteChildren {
    simpler::RelayLaneFactory factory;  // by next-level child index
    uint32_t count = 0;
};
