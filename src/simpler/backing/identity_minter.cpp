#include "simpler/backing/identity_minter.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <sys/random.h>
#include <unistd.h>

namespace simpler {

ShmTag parse_shm_tag(std::string_view text) {
    const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
    if (text.size() != 2 * SHM_TAG_BYTES || !std::all_of(text.begin(), text.end(), hex))
        throw std::invalid_argument(std::string(SHM_TAG_VARIABLE) + "='" + std::string(text) + "': must be " +
                                    std::to_string(2 * SHM_TAG_BYTES) +
                                    " lowercase hex digits (what every /dev/shm name this process mints "
                                    "starts with, after \"sp\")");
    ShmTag tag{};
    for (size_t i = 0; i < SHM_TAG_BYTES; ++i) {
        const auto digit = [](char c) { return static_cast<uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10); };
        tag[i] = static_cast<uint8_t>(digit(text[2 * i]) << 4 | digit(text[2 * i + 1]));
    }
    return tag;
}

std::optional<ShmTag> shm_tag_from_environment() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): simpler never changes the environment
    const char* text = std::getenv(SHM_TAG_VARIABLE);
    if (text == nullptr || *text == '\0') return std::nullopt;
    return parse_shm_tag(text);
}

OwnerNonce draw_owner_nonce(const std::optional<ShmTag>& tag) {
    OwnerNonce n{};
    size_t got = 0;
    while (got < n.size()) {
        const ssize_t r = getrandom(n.data() + got, n.size() - got, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(std::string("IdentityMinter: getrandom failed: ") + std::strerror(errno));
        }
        got += static_cast<size_t>(r);
    }
    if (tag) std::copy(tag->begin(), tag->end(), n.begin());
    return n;
}

void IdentityMinter::refresh_incarnation_locked() {
    const pid_t now = getpid();
    if (pid_ == now) return;
    const std::optional<ShmTag> tag = shm_tag_from_environment();
    OwnerNonce n = draw_owner_nonce(tag);
    while (n == OwnerNonce{}) n = draw_owner_nonce(tag);  // all-zero is never a nonce
    nonce_ = n;
    slots_.clear();
    free_.clear();
    pid_ = now;
}

CanonicalIdentity IdentityMinter::mint() {
    std::lock_guard lock(mu_);
    refresh_incarnation_locked();
    uint64_t buffer_id = 0;
    while (!free_.empty() && buffer_id == 0) {
        const uint64_t candidate = free_.back();
        free_.pop_back();
        Slot& s = slots_[candidate - 1];
        if (s.generation >= MAX_SLOT_GENERATION) continue;  // retired
        ++s.generation;
        s.live = true;
        buffer_id = candidate;
    }
    if (buffer_id == 0) {
        if (slots_.size() >= UINT32_MAX) throw std::runtime_error("IdentityMinter: buffer ids exhausted");
        slots_.push_back(Slot{1, true});
        buffer_id = slots_.size();
    }
    CanonicalIdentity id{};
    std::memcpy(id.owner_instance_id, nonce_.data(), OWNER_INSTANCE_ID_BYTES);
    id.buffer_id = buffer_id;
    id.generation = slots_[buffer_id - 1].generation;
    return id;
}

Liveness IdentityMinter::check_live(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    return check_live_locked(id);
}

Liveness IdentityMinter::check_live_locked(const CanonicalIdentity& id) {
    refresh_incarnation_locked();
    if (std::memcmp(id.owner_instance_id, nonce_.data(), OWNER_INSTANCE_ID_BYTES) != 0)
        return {LivenessStatus::NOT_MINTED_HERE, 0};
    if (id.buffer_id == 0 || id.buffer_id > slots_.size()) return {LivenessStatus::UNKNOWN_BUFFER, 0};
    const Slot& s = slots_[id.buffer_id - 1];
    if (id.generation < s.generation) return {LivenessStatus::STALE_GENERATION, s.generation};
    if (id.generation > s.generation) return {LivenessStatus::FUTURE_GENERATION, s.generation};
    if (!s.live) return {LivenessStatus::RELEASED, s.generation};
    return {LivenessStatus::LIVE, s.generation};
}

bool IdentityMinter::release(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    if (!check_live_locked(id).live()) return false;
    slots_[id.buffer_id - 1].live = false;
    free_.push_back(id.buffer_id);
    return true;
}

OwnerNonce IdentityMinter::nonce() {
    std::lock_guard lock(mu_);
    refresh_incarnation_locked();
    return nonce_;
}

bool IdentityMinter::minted_here(const CanonicalIdentity& id) {
    const OwnerNonce n = nonce();
    return std::memcmp(id.owner_instance_id, n.data(), OWNER_INSTANCE_ID_BYTES) == 0;
}

size_t IdentityMinter::live_count() {
    std::lock_guard lock(mu_);
    refresh_incarnation_locked();
    size_t n = 0;
    for (const Slot& s : slots_) n += s.live ? 1 : 0;
    return n;
}

IdentityMinter& process_identity_minter() {
    static IdentityMinter minter;
    return minter;
}

std::string describe_liveness(const CanonicalIdentity& id, const Liveness& l) {
    const std::string who = id.to_string();
    const std::string gen = std::to_string(id.generation);
    const std::string cur = std::to_string(l.current_generation);
    switch (l.status) {
        case LivenessStatus::LIVE: return {};
        case LivenessStatus::NOT_MINTED_HERE: return "identity " + who + " was not minted by this owner incarnation";
        case LivenessStatus::UNKNOWN_BUFFER:
            return "identity " + who + ": buffer_id " + std::to_string(id.buffer_id) + " was never minted by its owner";
        case LivenessStatus::STALE_GENERATION:
            return "stale descriptor " + who + ": generation " + gen + " of buffer_id " + std::to_string(id.buffer_id) +
                   " was released and the slot reused (live generation " + cur + ")";
        case LivenessStatus::RELEASED:
            return "stale descriptor " + who + ": generation " + gen + " of buffer_id " + std::to_string(id.buffer_id) +
                   " was released";
        case LivenessStatus::FUTURE_GENERATION:
            return "identity " + who + ": generation " + gen + " was never minted (newest is " + cur + ")";
    }
    return "identity " + who + ": unknown liveness";
}

}  // namespace simpler
