// A chip library that loads only in the process whose pid is in
// SIMPLER_TEST_PARENT_PID (tests/py/test_register_late.py): anywhere else, a
// chip child among them, its table claims another chip ABI, so the chip
// refuses it. It offers parent_only.noop, which does nothing.
#include <unistd.h>

#include <cstdlib>

#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static int32_t noop_orch(const OrchestrationContext* /*ctx*/) { return CHIP_OK; }

static const LibraryEntry ENTRIES[] = {
    orchestration_entry("parent_only.noop", noop_orch),
};

extern "C" __attribute__((visibility("default"))) const LibraryTable* simpler_chip_library() {
    static const LibraryTable here{CHIP_ABI_VERSION, 1, ENTRIES};
    static const LibraryTable elsewhere{CHIP_ABI_VERSION + 1000, 1, ENTRIES};
    const char* parent = std::getenv("SIMPLER_TEST_PARENT_PID");
    return parent != nullptr && std::atol(parent) == static_cast<long>(getpid()) ? &here : &elsewhere;
}
