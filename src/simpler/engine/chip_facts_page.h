// ChipFactsPage: what a chip child tells its Worker, once, about the device it
// opened — the DeviceFacts of its own device (kind, platform, name, driver
// version, UUID, memory, compute units, concurrent kernels, whether kernels use
// host memory in place), or why it could not open one.
//
// The Worker maps one page per chip before it forks the chip. The chip child
// writes it once, after its ChipLane is built and before it serves a task, then
// publishes the page's state word (a SharedWord: a sleeping reader is woken);
// the parent reads the state and, once it is written, the fields. Nothing is
// written again, so no sequence lock is needed.
//
// The parent trusts nothing on the page: a kind out of range, a length past its
// field or a state it does not know reads as a page the chip spoiled
// (std::nullopt, with why). Does not own the chip, nor decide how long to wait
// (the Worker waits on it while the chip's lane is alive).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "simpler/chip/device.h"
#include "simpler/ipc/futex.h"
#include "simpler/ipc/shared_region.h"

namespace simpler {

inline constexpr size_t CHIP_FACTS_TEXT_BYTES = 256;   // platform, name, version, uuid: each cut to fit
inline constexpr size_t CHIP_FACTS_WHY_BYTES = 2048;   // why the device could not be opened

class ChipFactsPage {
public:
    enum class State : uint32_t { PENDING = 0, OPENED = 1, FAILED = 2 };

    // Maps the page (zeroed: PENDING); std::runtime_error when mmap fails.
    ChipFactsPage();

    // Child side, once: the device it opened, or why none was.
    void publish(const chip::DeviceFacts& facts) noexcept;
    void publish_failure(std::string_view why) noexcept;

    struct Reading {
        State state = State::PENDING;
        chip::DeviceFacts facts;  // OPENED
        std::string why;          // FAILED: the chip's reason; a spoiled page: what is wrong with it
    };
    // Parent side: the page as it is now. A page whose state or fields are out
    // of range reads FAILED, naming what is wrong.
    [[nodiscard]] Reading read() const;
    // Sleeps while the page is PENDING, until it is written or `deadline`.
    void wait(ipc::Deadline deadline) const noexcept;

private:
    struct Page;
    ipc::SharedRegion region_;
    Page* page_ = nullptr;
};

}  // namespace simpler
