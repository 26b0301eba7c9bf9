#include "simpler/engine/internal/worker_impl.h"

#include <signal.h>

#include <string>
#include <utility>
#include <vector>

#include "simpler/backing/backing_retention.h"
#include "simpler/backing/fork_region_table.h"
#include "simpler/backing/grant_fault.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/backing/owned_backing_table.h"
#include "simpler/backing/owner_path_table.h"
#include "simpler/chip/cuda_driver.h"
#include "simpler/chip/device_catalog.h"
#include "simpler/engine/below_status.h"
#include "simpler/engine/device_probe.h"
#include "simpler/engine/live_workers.h"
#include "simpler/engine/seconds_text.h"
#include "simpler/task_interface/field_refusal.h"

namespace simpler {

static_assert(sizeof(ipc::CallConfig) == sizeof(CallConfig));

namespace {

// The lane this child serves; the grant-fault handler reports through the
// slot it serves now (a forked child serves one lane).
ipc::MailboxRing* g_fault_ring = nullptr;

void report_grant_fault(const char* message, size_t length) noexcept {
    if (g_fault_ring != nullptr)
        g_fault_ring->serving_slot().finish_failed(ipc::TaskError::TASK_FAILED, std::string_view(message, length));
}

WorkerConfig validated(WorkerConfig config) {
    config.validate();
    return config;
}

}  // namespace

Worker::Impl::Impl(Worker& self, WorkerConfig config)
    : self_(self),
      config_(validated(std::move(config))),
      device_(std::make_unique<DeviceMemory>(config_.num_chips, config_.device_memory_bytes)),
      windows_(std::make_unique<WindowMemory>(config_.num_chips, config_.window_heap_bytes)),
      core_(engine_config()) {
    if (config_.num_sub_workers > 0 && !config_.sub_handler)
        throw std::invalid_argument("WorkerConfig.sub_handler: required when num_sub_workers > 0");
    if (config_.num_workers > config_.num_relay_workers && !config_.worker_handler)
        throw std::invalid_argument("WorkerConfig.worker_handler: required when num_workers > 0");
    if (config_.num_relay_workers > 0 && !config_.relay_handler)
        throw std::invalid_argument("WorkerConfig.relay_handler: required when num_relay_workers > 0");
    if (config_.trace) trace_ = std::make_unique<TraceRecorder>(config_.trace_capacity);
    if (!config_.global_window_chips.empty()) {
        if (config_.global_window_chips.size() != config_.global_window_child_names.size())
            throw std::invalid_argument(
                "WorkerConfig.global_window_child_names: one name per global_window_chips "
                "entry");
        if (!config_.global_window_devices.empty() &&
            config_.global_window_devices.size() != config_.global_window_chips.size())
            throw std::invalid_argument(
                "WorkerConfig.global_window_devices: one device kind per global_window_chips entry, or none");
        std::vector<std::string> names;
        global_first_slot_.push_back(0);
        for (size_t c = 0; c < config_.global_window_chips.size(); ++c) {
            for (uint32_t chip = 0; chip < config_.global_window_chips[c]; ++chip)
                names.push_back(config_.global_window_child_names[c] + " chip " + std::to_string(chip));
            global_first_slot_.push_back(static_cast<uint32_t>(names.size()));
        }
        if (!names.empty()) {
            global_windows_ =
                std::make_shared<WindowMemory>(static_cast<uint32_t>(names.size()), config_.window_heap_bytes);
            global_windows_->set_slot_names(std::move(names));
            global_windows_->set_operation("allocate_global_domain");
            global_owner_ = true;
        }
    } else {
        global_windows_ = config_.global_windows;
    }
    if (!config_.path.empty()) {
        std::vector<uint32_t> ids;
        for (uint32_t i = 0; i < config_.num_chips; ++i)
            ids.push_back(process_owner_paths().intern(config_.path + "/" + ChildRef{ChildKind::CHIP, i}.name()));
        device_->set_chip_path_ids(ids);
        windows_->set_chip_path_ids(std::move(ids));
    }
}

Worker::Impl::~Impl() {
    close();
    if (in_owner_process()) return;
    // A forked copy: the threads do not exist here and the children are the
    // owner's, so the copy's handles are left undestroyed (a std::thread still
    // "joinable" would terminate, the watcher would join a thread that is not
    // there, a ChildProcess would SIGKILL the owner's child). What they hold is
    // this process's copy of memory and goes with it.
    new (&scheduler_) std::thread();
    ipc::ChildWatcher* left_watcher = watcher_.release();
    static_cast<void>(left_watcher);
    new (&lanes_) std::vector<Lane>();
}

bool Worker::Impl::in_owner_process() const noexcept { return ipc::current_process_id() == owner_pid_; }

void Worker::Impl::require_owner_process(const char* what) const {
    if (!in_owner_process())
        throw std::logic_error(std::string(what) +
                               ": this process was forked from the Worker's owner; a Worker runs only in the "
                               "process that created it");
}

EngineConfig Worker::Impl::engine_config() {
    EngineConfig e;
    e.children[static_cast<size_t>(ChildKind::CHIP)] = config_.num_chips;
    e.children[static_cast<size_t>(ChildKind::SUB_WORKER)] = config_.num_sub_workers;
    e.children[static_cast<size_t>(ChildKind::WORKER)] = config_.num_workers;
    if (config_.num_workers > 0) e.next_level = ChildKind::WORKER;
    e.record_edges = config_.record_edges;
    e.edge_log_capacity = config_.edge_log_capacity;
    e.chip_lane_depth = CHIP_LANE_DEPTH;
    e.cross_chip = config_.cross_chip();
    e.withdraw = withdrawer();
    e.device_owner = [this](const CanonicalIdentity& id) -> std::optional<uint32_t> {
        if (std::optional<uint32_t> chip = device_->owner_of(id)) return chip;
        if (std::optional<uint32_t> chip = windows_->owner_of(id)) return chip;
        return config_.device_owner ? config_.device_owner(id) : std::nullopt;
    };
    e.descriptor_problem = [this](const BufferDescriptor& d) -> std::string {
        if (d.address_space != static_cast<uint8_t>(AddressSpace::DEVICE)) {
            std::string why = process_owned_backings().problem(d);  // one lookup; foreign owners are not ours to judge
            if (why.empty() && d.backend_kind == static_cast<uint8_t>(BackendKind::FORK_COW))
                why = process_fork_regions().cow_write_problem(d.identity);
            return why;
        }
        if (std::string why = device_->descriptor_problem(d); !why.empty()) return why;
        if (std::string why = windows_->descriptor_problem(d); !why.empty()) return why;
        if (global_owner_)
            if (std::string why = global_windows_->descriptor_problem(d); !why.empty()) return why;
        // One minter lookup: an identity another incarnation minted is not ours to judge.
        if (const Liveness l = process_identity_minter().check_live(d.identity);
            !l.live() && l.status != LivenessStatus::NOT_MINTED_HERE)
            return describe_liveness(d.identity, l);
        return {};
    };
    if (config_.identity_problem) e.identity_problem = config_.identity_problem;
    e.window_problem = [this](const BufferDescriptor& d, ChildRef to,
                              const std::string& who) -> std::optional<std::string> {
        const std::optional<uint32_t> chip = to.kind == ChildKind::CHIP ? std::optional(to.index) : std::nullopt;
        if (std::optional<std::string> why = windows_->member_problem(d.identity, chip, who)) return why;
        return global_window_problem(d, to, who);
    };
    return e;
}

ChildHandlers Worker::Impl::make_child_handler(ChildRef child) {
    switch (child.kind) {
        case ChildKind::SUB_WORKER:
            windows_->seal();  // only chips reach the windows
            if (global_windows_) global_windows_->seal();
            return config_.sub_handler(child.index);
        case ChildKind::CHIP: {
            device_->enter_chip(child.index);
            windows_->enter_chip();
            if (global_windows_) global_windows_->enter_chip();
            if (config_.chip_handler) return config_.chip_handler(child.index);
            ChipLaneConfig lane = config_.chip_lane;
            lane.device_memory = device_.get();
            lane.window_memory = windows_.get();
            lane.global_window_memory = global_windows_.get();
            lane.global_window_slot = config_.global_window_slot + child.index;
            lane.facts = lanes_[lane_of(child)].facts.get();
            // The chip's core threads (and its serving thread waiting for a run's
            // last kernels) wait under the Worker's spin policy too.
            lane.chip.runtime.idle_spin = config_.spin.max_spin;
            return make_chip_lane_child(child.index, lane);
        }
        case ChildKind::WORKER:
            windows_->seal();
            // A next-level child's chips reach the global windows this Worker carves.
            if (global_windows_ && !global_owner_) global_windows_->seal();
            return config_.worker_handler(child.index);
    }
    throw std::logic_error("Worker: no handler for " + child.name());
}

void Worker::Impl::init() {
    require_owner_process("Worker.init");
    if (closed_) throw std::logic_error("Worker.init: the Worker is closed; create a new one");
    if (initialized_) throw std::logic_error("Worker.init: already initialized");
    const ChildCounts children = core_.children();
    // Chips on a device other than the simulated one: is there one? Asked in a throwaway child (device_probe.h).
    if (const chip::DeviceChoice& device = config_.chip_lane.chip.device;
        children[static_cast<size_t>(ChildKind::CHIP)] > 0 && !config_.chip_handler &&
        device.kind != chip::DeviceKind::SIMULATED) {
        if (device.kind == chip::DeviceKind::CUDA && chip::cuda_driver_loaded())
            throw std::runtime_error(
                "Worker.init: chips on cuda devices: this process has already loaded the CUDA driver, and CUDA does "
                "not survive fork; create and init() the Worker before anything touches CUDA (torch.cuda, CuPy, ...)");
        try {
            probe_devices(device);
            chip::require_chips_run_on(device.kind);
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(std::string("Worker.init: chips on ") + chip::device_kind_name(device.kind) +
                                     " devices: " + e.what());
        }
    }
    // Chips wait on each other's lanes there (engine_config: cross_chip); chip i is lane i.
    if (config_.cross_chip()) board_ = std::make_unique<ipc::LaneBoard>(config_.num_chips);
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) {
        lane_base_[k] = lanes_.size();
        for (uint32_t i = 0; i < children[k]; ++i) {
            Lane& l = lanes_.emplace_back();
            control_.add_lane();
            l.ref = ChildRef{static_cast<ChildKind>(k), i};
            ipc::MailboxRingConfig ring{config_.blob_capacity, 1};
            if (l.ref.kind == ChildKind::CHIP) ring = {config_.blob_capacity, CHIP_LANE_DEPTH, board_.get(), i};
            l.mailbox = std::make_unique<ipc::MailboxRing>(ring, bell_);
        }
    }
    // The relay lanes are the last next-level Worker lanes; nothing is forked for them.
    const size_t first_relay =
        lane_base_[static_cast<size_t>(ChildKind::WORKER)] + config_.num_workers - config_.num_relay_workers;
    // A chip tells which device it opened through its page (chip_facts_page.h).
    if (!config_.chip_handler)
        for (size_t i = lane_base_[static_cast<size_t>(ChildKind::CHIP)];
             i < lane_base_[static_cast<size_t>(ChildKind::CHIP)] + children[static_cast<size_t>(ChildKind::CHIP)]; ++i)
            lanes_[i].facts = std::make_unique<ChipFactsPage>();
    // A forked next-level Worker child reports the children it loses up through its page (below_status.h).
    for (size_t i = lane_base_[static_cast<size_t>(ChildKind::WORKER)]; i < first_relay; ++i)
        lanes_[i].below = std::make_unique<BelowStatus>();
    try {
        for (size_t i = 0; i < first_relay; ++i) {
            lanes_[i].child = ipc::ChildProcess::spawn([this, i] {
                // Ctrl-C at a terminal signals the whole process group: it is the
                // owner's to handle (Worker.run ends the run), not a child's to die of.
                ::signal(SIGINT, SIG_IGN);
                // A write to read-only granted bytes fails the task in flight
                // with the buffer and the grant, then ends this child.
                g_fault_ring = lanes_[i].mailbox.get();
                if (lanes_[i].below) set_reporting_up(lanes_[i].below.get(), &bell_);
                install_grant_fault_handler(&report_grant_fault, lanes_[i].ref.name().c_str());
                ChildHandlers handlers = make_child_handler(lanes_[i].ref);
                ipc::TaskHandler handler = serve_with_control(std::move(handlers));
                const int status = ipc::serve_ring(*lanes_[i].mailbox, handler, config_.spin);
                // What the handler owns goes now, before the child exits: a
                // next-level Worker's handler closes that Worker (stops its children).
                handler = nullptr;
                return status;
            });
        }
        std::vector<ipc::WatchedChild> watched;
        for (size_t i = 0; i < first_relay; ++i) watched.push_back({lanes_[i].child.pid(), lanes_[i].child.pidfd()});
        watcher_ = std::make_unique<ipc::ChildWatcher>(watched, [this](size_t i, int status) {
            lanes_[i].mailbox->mark_child_exited(status);
            bell_.ring();
        });
        // After every fork: a relay may start threads and libraries that a fork would not carry.
        std::vector<RelayLane> relays;
        for (size_t i = first_relay; i < lanes_.size(); ++i)
            relays.push_back(config_.relay_handler(lanes_[i].ref.index));
        for (size_t i = first_relay; i < lanes_.size(); ++i) {
            lanes_[i].relay_lost = relays[i - first_relay].lost;
            lanes_[i].relay = std::thread(&Worker::Impl::relay_loop, this, i, std::move(relays[i - first_relay]));
        }
        scheduler_ = std::thread(&Worker::Impl::scheduler_loop, this);
    } catch (...) {
        config_.chip_handler = nullptr;
        config_.sub_handler = nullptr;
        config_.worker_handler = nullptr;
        config_.relay_handler = nullptr;
        closed_.store(true, std::memory_order_release);
        if (watcher_) watcher_->stop();
        for (Lane& l : lanes_) {
            if (!l.relay.joinable()) continue;
            l.mailbox->request_shutdown();
            l.relay.join();
        }
        lanes_.clear();  // ChildProcess destructors SIGKILL and reap
        throw;
    }
    // Only the children use the handler factories; the parent lets go of what
    // they hold (for Python callables: references the garbage collector cannot see).
    config_.chip_handler = nullptr;
    config_.sub_handler = nullptr;
    config_.worker_handler = nullptr;
    config_.relay_handler = nullptr;
    // The children hold the FORK_COW regions made here as of their fork: this
    // process's writes to one are watched from now on, and a task naming a
    // written one is refused (descriptor_problem).
    process_fork_regions().watch_cow_writes();
    device_->seal_in_parent();  // device bytes live in the chip processes only
    windows_->seal();
    if (global_windows_) global_windows_->seal();
    initialized_ = true;
    process_live_workers().add(&self_);  // a release from now on waits for this Worker's tasks too
    live_registered_ = true;
}

std::string Worker::Impl::reserved_callable_refusal(uint64_t callable) {
    if (callable != FORGET_CALLABLE && callable != INSTALL_CALLABLE) return {};
    return "submit refused: callable id " + std::to_string(callable) + " is reserved for the Worker's " +
           (callable == FORGET_CALLABLE ? "forget" : "install") + " message";
}

std::string Worker::Impl::blob_refusal(size_t member, const MemberSubmit& m) const {
    if (m.args == nullptr) return {};  // refused by the engine with its message
    const size_t need = blob_size(*m.args);
    if (need <= config_.blob_capacity) return {};
    return "submit refused: member " + std::to_string(member) + "'s argument blob needs " + std::to_string(need) +
           " bytes, the mailbox holds " + std::to_string(config_.blob_capacity);
}

TaskHandle Worker::Impl::submit(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> members,
                                const TaskConfig& config) {
    require_owner_process("Worker.submit");
    if (closed_) throw std::logic_error("Worker.submit: the Worker is closed");
    if (!initialized_) throw std::logic_error("Worker.submit: the Worker is not running (call init())");
    if (std::string why = reserved_callable_refusal(callable); !why.empty()) throw std::invalid_argument(why);
    for (size_t m = 0; m < members.size(); ++m)
        if (std::string why = blob_refusal(m, members[m]); !why.empty()) throw std::invalid_argument(why);
    TaskHandle id;
    {
        std::unique_lock lock(mu_);
        wait_for_room_locked(lock);
        if (stopping_) throw std::logic_error("Worker.submit: the Worker is closed");
        id = core_.submit(kind, callable, members, config);
        if (trace_) trace_->submitted(id, kind, callable, static_cast<uint32_t>(members.size()));
        // Progress on the submitting thread: finished results are collected and a
        // ready task goes to its free lane now, not through the scheduler thread.
        (void)progress_locked();
    }
    // Whoever drives the lanes learns of new work from the children's rings;
    // only a task deadline needs it awake now, to time the task.
    if (config_.task_timeout.count() > 0) bell_.ring();
    return id;
}

std::optional<Worker::BatchRefusal> Worker::Impl::submit_many(TaskKind kind, uint64_t callable, BatchSource& tasks,
                                                              const TaskConfig& config, TaskHandles& out) {
    require_owner_process("Worker.submit_many");
    if (closed_) throw std::logic_error("Worker.submit_many: the Worker is closed");
    if (!initialized_) throw std::logic_error("Worker.submit_many: the Worker is not running (call init())");
    if (tasks.size() == 0) return std::nullopt;
    if (std::string why = reserved_callable_refusal(callable); !why.empty()) return BatchRefusal{0, std::move(why)};
    const auto blob_fits = [this](const MemberSubmit& t) { return blob_refusal(0, t); };
    {
        std::unique_lock lock(mu_);
        wait_for_room_locked(lock);  // a batch goes in whole once fewer than max_unfinished are unfinished
        if (stopping_) throw std::logic_error("Worker.submit_many: the Worker is closed");
        // Every task checked first (as the id it will get), then every one recorded:
        // nothing between the two loses a child or releases a buffer (no progress
        // runs, and the lock is held), so a batch is recorded whole or not at all.
        if (std::optional<BatchCheckRefusal> r = core_.check_batch(core_.next_task_id(), kind, tasks, blob_fits))
            return BatchRefusal{r->index, std::move(r->message)};
        // Under the lock ids count up by one per submit: the batch is (first id, count, run).
        const TaskHandles batch{core_.next_task_id(), 1, tasks.size(), core_.current_run()};
        for (size_t i = 0; i < tasks.size(); ++i) {
            const TaskHandle task = core_.submit(kind, callable, {&tasks.task(i), 1}, config, /*checked=*/true);
            if (trace_) trace_->submitted(task, kind, callable, 1);
        }
        out = batch;
        (void)progress_locked();
    }
    if (config_.task_timeout.count() > 0) bell_.ring();
    return std::nullopt;
}

void Worker::Impl::close() noexcept {
    if (!in_owner_process()) {
        closed_.store(true, std::memory_order_release);
        return;
    }
    // A second close() (another thread's) returns once the first has stopped everything.
    std::lock_guard closing(close_mu_);
    if (live_registered_) {
        process_live_workers().remove(&self_);  // no release waits for this Worker's tasks from now on
        live_registered_ = false;
    }
    {
        std::lock_guard lock(mu_);
        if (closed_.load(std::memory_order_relaxed)) return;
        closed_.store(true, std::memory_order_release);
        stopping_ = true;
        if (initialized_) core_.abandon("the Worker closed before the task was dispatched");
        runs_cv_.notify_all();
    }
    drivers_.unpark();
    bell_.ring();
    if (scheduler_.joinable()) scheduler_.join();
    for (Lane& l : lanes_)
        if (l.mailbox) l.mailbox->request_shutdown();
    const ipc::Deadline grace = ipc::Clock::now() + config_.close_grace;
    for (Lane& l : lanes_)
        if (l.child.pid() > 0 && !l.child.reaped()) l.child.stop(grace);
    for (Lane& l : lanes_)
        if (l.relay.joinable()) l.relay.join();  // each says goodbye to its child, bounded by the relay's own timeouts
    if (watcher_) watcher_->stop();
    device_->release_all();
    windows_->release_all();
    if (global_owner_) global_windows_->release_all();
    {
        // The children are gone: tasks that never finished hold nothing any more.
        std::lock_guard lock(mu_);
        release_holds_locked(/*all=*/true);
    }
    status_->close();  // whoever waits for a status change stops waiting
}

DeviceBacking Worker::Impl::alloc_device(uint32_t chip, uint64_t nbytes, AccessMode access) {
    if (closed_) throw std::logic_error("alloc_child_tensor: the Worker is closed");
    return device_->alloc(chip, nbytes, access);
}

void Worker::Impl::release_device(const CanonicalIdentity& id) {
    device_->begin_release(id);
    {
        std::lock_guard lock(mu_);
        core_.release_after([this, id] { device_->finish_release(id); });
    }
    bell_.ring();
}

std::optional<uint32_t> Worker::Impl::device_owner(const CanonicalIdentity& id) const {
    if (std::optional<uint32_t> chip = device_->owner_of(id)) return chip;
    return windows_->owner_of(id);
}

void Worker::Impl::forget(std::span<const CanonicalIdentity> identities) {
    if (identities.empty() || !in_owner_process() || closed_) return;
    control_.post_forgets(identities);
    bell_.ring();  // whoever drives the lanes delivers it now
}

void Worker::Impl::hold_users(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    if (!initialized_) return;
    process_backing_retention().retain(id, core_.hold_users(id));
}

}  // namespace simpler
