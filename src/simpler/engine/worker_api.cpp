// The Worker's API (worker.h): each entry point hands its call to the Impl
// (internal/worker_impl.h), which does the work.
#include <utility>

#include "simpler/engine/internal/worker_impl.h"

namespace simpler {

Worker::Worker(WorkerConfig config) : impl_(std::make_unique<Impl>(*this, std::move(config))) {}

// Closes first, while impl_ still names the Impl: a release on another thread
// may reach this Worker through the live list until close() takes it off.
Worker::~Worker() { impl_->close(); }

void Worker::init() { impl_->init(); }

TaskHandle Worker::submit(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> members,
                          const TaskConfig& config) {
    return impl_->submit(kind, callable, members, config);
}

uint64_t Worker::room() const { return impl_->room(); }
void Worker::await_room() { impl_->await_room(); }

std::optional<Worker::BatchRefusal> Worker::submit_many(TaskKind kind, uint64_t callable, BatchSource& tasks,
                                                        const TaskConfig& config, TaskHandles& out) {
    return impl_->submit_many(kind, callable, tasks, config, out);
}

bool Worker::wait_until(ipc::Deadline until) { return impl_->wait_until(until); }
std::string Worker::cancel_run(const std::string& why) { return impl_->cancel_run(why); }
uint64_t Worker::end_run(bool collected) { return impl_->end_run(collected); }
bool Worker::wait_run(uint64_t run, ipc::Deadline until) { return impl_->wait_run(run, until); }
std::string Worker::cancel_run(uint64_t run, const std::string& why) { return impl_->cancel_run(run, why); }
Worker::FinishedRuns Worker::take_finished_runs(ipc::Deadline until) { return impl_->take_finished_runs(until); }
void Worker::close() noexcept { impl_->close(); }

DeviceBacking Worker::alloc_device(uint32_t chip, uint64_t nbytes, AccessMode access) {
    return impl_->alloc_device(chip, nbytes, access);
}
void Worker::release_device(const CanonicalIdentity& id) { impl_->release_device(id); }
std::optional<uint32_t> Worker::device_owner(const CanonicalIdentity& id) const { return impl_->device_owner(id); }

WindowDomain Worker::allocate_domain(const std::string& name, const std::vector<uint32_t>& workers,
                                     uint64_t window_size, const std::vector<WindowBufferSpec>& buffers) {
    return impl_->allocate_domain(name, workers, window_size, buffers);
}
void Worker::release_domain(uint64_t id) { impl_->release_domain(id); }
WindowDomain Worker::allocate_global_domain(const std::string& name, const std::vector<uint32_t>& slots,
                                            uint64_t window_size, const std::vector<WindowBufferSpec>& buffers) {
    return impl_->allocate_global_domain(name, slots, window_size, buffers);
}
void Worker::release_global_domain(uint64_t id) { impl_->release_global_domain(id); }
std::shared_ptr<WindowMemory> Worker::global_windows() const noexcept { return impl_->global_windows(); }

void Worker::forget(std::span<const CanonicalIdentity> identities) { impl_->forget(identities); }
uint64_t Worker::begin_install(ChildKind kind, uint64_t callable, const std::string& name,
                               std::span<const std::byte> payload) {
    return impl_->begin_install(kind, callable, name, payload);
}
std::optional<std::vector<InstallRefusal>> Worker::wait_install(uint64_t ticket, ipc::Deadline until) {
    return impl_->wait_install(ticket, until);
}
void Worker::abandon_install(uint64_t ticket) { impl_->abandon_install(ticket); }
void Worker::hold_users(const CanonicalIdentity& id) { impl_->hold_users(id); }
EdgeLog Worker::take_edge_log() { return impl_->take_edge_log(); }
DeviceMemory& Worker::device_memory() noexcept { return impl_->device_memory(); }
WindowMemory& Worker::window_memory() noexcept { return impl_->window_memory(); }

bool Worker::initialized() const noexcept { return impl_->initialized(); }
bool Worker::in_owner_process() const noexcept { return impl_->in_owner_process(); }
bool Worker::closed() const noexcept { return impl_->closed(); }
std::vector<ChildStatus> Worker::child_states() const { return impl_->child_states(); }
std::vector<std::string> Worker::child_status() const { return impl_->child_status(); }
uint64_t Worker::status_channel() const noexcept { return impl_->status_channel(); }
std::vector<pid_t> Worker::child_pids() const { return impl_->child_pids(); }
chip::DeviceFacts Worker::device_facts(uint32_t chip) { return impl_->device_facts(chip); }
WorkerProgress Worker::progress() const { return impl_->progress(); }
uint64_t Worker::lost_count() const noexcept { return impl_->lost_count(); }
const WorkerConfig& Worker::config() const noexcept { return impl_->config(); }

std::vector<TraceEvent> Worker::trace_events() const { return impl_->trace_events(); }
size_t Worker::trace_dropped() const { return impl_->trace_dropped(); }
void Worker::trace_clear() { impl_->trace_clear(); }

}  // namespace simpler
