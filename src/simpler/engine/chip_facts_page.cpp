#include "simpler/engine/chip_facts_page.h"

#include <algorithm>
#include <cstring>

#include "simpler/ipc/shared_word.h"

namespace simpler {

struct ChipFactsPage::Page {
    ipc::SharedWord state;  // State, published last
    uint8_t kind;
    uint8_t unified_host_memory;
    uint8_t _pad0[6];
    uint64_t memory_bytes;
    uint32_t compute_units;
    uint32_t concurrent_kernels;
    uint32_t platform_len;
    uint32_t name_len;
    uint32_t version_len;
    uint32_t uuid_len;
    uint32_t why_len;
    uint32_t _pad1;
    char platform[CHIP_FACTS_TEXT_BYTES];
    char name[CHIP_FACTS_TEXT_BYTES];
    char version[CHIP_FACTS_TEXT_BYTES];
    char uuid[CHIP_FACTS_TEXT_BYTES];
    char why[CHIP_FACTS_WHY_BYTES];
};

namespace {

uint32_t put(char* field, size_t capacity, std::string_view text) noexcept {
    const size_t n = std::min(text.size(), capacity);
    std::memcpy(field, text.data(), n);
    return static_cast<uint32_t>(n);
}

}  // namespace

ChipFactsPage::ChipFactsPage() : region_(sizeof(Page)), page_(static_cast<Page*>(region_.data())) {}

void ChipFactsPage::publish(const chip::DeviceFacts& facts) noexcept {
    page_->kind = static_cast<uint8_t>(facts.kind);
    page_->unified_host_memory = facts.unified_host_memory ? 1 : 0;
    page_->memory_bytes = facts.memory_bytes;
    page_->compute_units = facts.compute_units;
    page_->concurrent_kernels = facts.concurrent_kernels;
    page_->platform_len = put(page_->platform, CHIP_FACTS_TEXT_BYTES, facts.platform);
    page_->name_len = put(page_->name, CHIP_FACTS_TEXT_BYTES, facts.name);
    page_->version_len = put(page_->version, CHIP_FACTS_TEXT_BYTES, facts.version);
    page_->uuid_len = put(page_->uuid, CHIP_FACTS_TEXT_BYTES, facts.uuid);
    ipc::publish(page_->state, static_cast<uint32_t>(State::OPENED));
}

void ChipFactsPage::publish_failure(std::string_view why) noexcept {
    page_->why_len = put(page_->why, CHIP_FACTS_WHY_BYTES, why);
    ipc::publish(page_->state, static_cast<uint32_t>(State::FAILED));
}

ChipFactsPage::Reading ChipFactsPage::read() const {
    Reading r;
    const uint32_t state = ipc::load_acquire(page_->state);
    if (state == static_cast<uint32_t>(State::PENDING)) return r;
    r.state = State::FAILED;
    if (state == static_cast<uint32_t>(State::FAILED)) {
        if (page_->why_len > CHIP_FACTS_WHY_BYTES) {
            r.why = "its facts page is spoiled (the reason's length " + std::to_string(page_->why_len) + " exceeds " +
                    std::to_string(CHIP_FACTS_WHY_BYTES) + ")";
            return r;
        }
        r.why.assign(page_->why, page_->why_len);
        return r;
    }
    if (state != static_cast<uint32_t>(State::OPENED)) {
        r.why = "its facts page is spoiled (state " + std::to_string(state) + ")";
        return r;
    }
    const uint8_t kind = page_->kind;
    if (kind > static_cast<uint8_t>(chip::LAST_DEVICE_KIND)) {
        r.why = "its facts page is spoiled (device kind " + std::to_string(kind) + ")";
        return r;
    }
    for (const uint32_t len : {page_->platform_len, page_->name_len, page_->version_len, page_->uuid_len}) {
        if (len > CHIP_FACTS_TEXT_BYTES) {
            r.why = "its facts page is spoiled (a text's length " + std::to_string(len) + " exceeds " +
                    std::to_string(CHIP_FACTS_TEXT_BYTES) + ")";
            return r;
        }
    }
    r.state = State::OPENED;
    r.facts.kind = static_cast<chip::DeviceKind>(kind);
    r.facts.unified_host_memory = page_->unified_host_memory != 0;
    r.facts.memory_bytes = page_->memory_bytes;
    r.facts.compute_units = page_->compute_units;
    r.facts.concurrent_kernels = page_->concurrent_kernels;
    r.facts.platform.assign(page_->platform, page_->platform_len);
    r.facts.name.assign(page_->name, page_->name_len);
    r.facts.version.assign(page_->version, page_->version_len);
    r.facts.uuid.assign(page_->uuid, page_->uuid_len);
    return r;
}

void ChipFactsPage::wait(ipc::Deadline deadline) const noexcept {
    const uint32_t pending = static_cast<uint32_t>(State::PENDING);
    while (ipc::load_acquire(page_->state) == pending && ipc::Clock::now() < deadline)
        (void)ipc::sleep_while_equal(page_->state, pending, deadline);
}

}  // namespace simpler
