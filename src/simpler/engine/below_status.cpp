#include "simpler/engine/below_status.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <unistd.h>

namespace simpler {

struct BelowStatus::Page {
    std::atomic<uint32_t> sequence;  // odd while the writer is writing
    uint32_t lost;
    uint32_t length;
    char text[BELOW_TEXT_BYTES];
};

static_assert(std::atomic<uint32_t>::is_always_lock_free, "the page is shared between processes");

BelowStatus::BelowStatus() : region_(sizeof(Page)), page_(static_cast<Page*>(region_.data())) {}

void BelowStatus::publish(uint32_t lost, std::string_view text) noexcept {
    const uint32_t s = page_->sequence.load(std::memory_order_relaxed);
    page_->sequence.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    const size_t n = std::min(text.size(), BELOW_TEXT_BYTES - 1);
    page_->lost = lost;
    page_->length = static_cast<uint32_t>(n);
    std::memcpy(page_->text, text.data(), n);
    page_->sequence.store(s + 2, std::memory_order_release);
}

std::optional<BelowStatus::Report> BelowStatus::read_if_changed(uint32_t seen) const {
    // A write in progress (or one that overlapped this read) is not waited for:
    // the writer may have died in it. It rings the doorbell when it finishes,
    // and the parent reads again then.
    const uint32_t before = page_->sequence.load(std::memory_order_acquire);
    if (before == seen || (before & 1U) != 0) return std::nullopt;
    Report r;
    r.version = before;
    r.lost = page_->lost;
    const uint32_t n = std::min<uint32_t>(page_->length, BELOW_TEXT_BYTES - 1);
    r.text.assign(page_->text, n);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (page_->sequence.load(std::memory_order_relaxed) != before) return std::nullopt;
    return r;
}

namespace {

BelowStatus* g_up = nullptr;
const ipc::Doorbell* g_up_bell = nullptr;
pid_t g_up_pid = 0;

}  // namespace

void set_reporting_up(BelowStatus* status, const ipc::Doorbell* parent_bell) noexcept {
    g_up = status;
    g_up_bell = parent_bell;
    g_up_pid = getpid();
}

bool report_up(uint32_t lost, std::string_view text) noexcept {
    if (g_up == nullptr || g_up_pid != getpid()) return false;
    g_up->publish(lost, text);
    if (g_up_bell != nullptr) g_up_bell->ring();
    return true;
}

}  // namespace simpler
