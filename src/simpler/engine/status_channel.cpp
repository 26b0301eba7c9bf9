#include "simpler/engine/status_channel.h"

#include <unordered_map>

namespace simpler {

namespace {

struct Channels {
    std::mutex mu;
    uint64_t next = 1;
    std::unordered_map<uint64_t, std::weak_ptr<StatusChannel>> listed;
};

Channels& channels() {
    static Channels c;
    return c;
}

}  // namespace

std::shared_ptr<StatusChannel> StatusChannel::create() {
    Channels& c = channels();
    std::lock_guard lock(c.mu);
    std::shared_ptr<StatusChannel> channel(new StatusChannel(c.next++));
    c.listed.emplace(channel->id_, channel);
    return channel;
}

std::shared_ptr<StatusChannel> StatusChannel::find(uint64_t id) {
    Channels& c = channels();
    std::lock_guard lock(c.mu);
    const auto it = c.listed.find(id);
    return it == c.listed.end() ? nullptr : it->second.lock();
}

void StatusChannel::changed() {
    std::lock_guard lock(mu_);
    ++serial_;
    cv_.notify_all();
}

void StatusChannel::close() {
    {
        Channels& c = channels();
        std::lock_guard lock(c.mu);
        c.listed.erase(id_);
    }
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
}

std::optional<uint64_t> StatusChannel::wait(uint64_t seen, ipc::Deadline until) {
    std::unique_lock lock(mu_);
    const auto moved = [&] { return serial_ != seen || closed_; };
    if (until == ipc::NO_DEADLINE) {
        cv_.wait(lock, moved);
    } else {
        cv_.wait_until(lock, until, moved);
    }
    if (closed_) return std::nullopt;
    return serial_;
}

}  // namespace simpler
