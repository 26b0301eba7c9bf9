#include "simpler/engine/worker.h"

#include <signal.h>

#include <cstring>
#include <sstream>
#include <utility>

#include "simpler/backing/backing_retention.h"
#include "simpler/backing/fork_region_table.h"
#include "simpler/backing/grant_fault.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/backing/owned_backing_table.h"
#include "simpler/backing/owner_path_table.h"
#include "simpler/engine/below_status.h"
#include "simpler/engine/live_workers.h"

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

// How long the parked scheduler thread sleeps before it looks whether a wait()
// still drives (it is woken at once only by close()): from 1 ms, doubling while
// one wait() goes on, up to 16 ms.
constexpr std::chrono::microseconds SCHEDULER_PARK_MIN{1000};
constexpr std::chrono::microseconds SCHEDULER_PARK_MAX{16000};

const char* publish_status_text(ipc::PublishStatus s) noexcept {
    switch (s) {
        case ipc::PublishStatus::OK: return "published";
        case ipc::PublishStatus::BUSY: return "the lane already has a task in flight";
        case ipc::PublishStatus::LANE_DEAD: return "the child is gone";
        case ipc::PublishStatus::BLOB_TOO_LARGE: return "the argument blob exceeds the mailbox capacity";
        case ipc::PublishStatus::BAD_AFTER_MASK: return "the task names producers its lane cannot know";
    }
    return "unknown publish status";
}

std::string seconds_text(std::chrono::nanoseconds t) {
    std::ostringstream out;
    out << std::chrono::duration<double>(t).count();
    return out.str();
}

WorkerConfig validated(WorkerConfig config) {
    config.validate();
    return config;
}

}  // namespace

void WorkerConfig::validate() const {
    if (spin.min_spin.count() < 0 || spin.max_spin > MAX_SPIN)
        throw std::invalid_argument("WorkerConfig.spin: a spin budget in seconds, 0 <= spin <= 1 (got " +
                                    seconds_text(spin.min_spin.count() < 0 ? spin.min_spin : spin.max_spin) + ")");
    try {
        ipc::validate_spin_policy(spin);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("WorkerConfig.spin: ") + e.what());
    }
    if (task_timeout.count() < 0)
        throw std::invalid_argument("WorkerConfig.task_timeout: must be >= 0 seconds, 0: none (got " +
                                    seconds_text(task_timeout) + ")");
    if (close_grace.count() < 0)
        throw std::invalid_argument("WorkerConfig.close_grace: must be >= 0 seconds (got " + seconds_text(close_grace) +
                                    ")");
    if (num_relay_workers > num_workers)
        throw std::invalid_argument("WorkerConfig.num_relay_workers: at most num_workers (got " +
                                    std::to_string(num_relay_workers) + " of " + std::to_string(num_workers) +
                                    " Workers)");
    if (num_chips > 0 && num_workers > 0)
        throw std::invalid_argument(
            "WorkerConfig.num_workers: a Worker's next level is chips or Workers, not both (got " +
            std::to_string(num_chips) + " chips and " + std::to_string(num_workers) + " Workers)");
    if (window_heap_bytes == 0 || window_heap_bytes > (uint64_t{1} << 46))
        throw std::invalid_argument("WorkerConfig.window_heap_bytes: must be > 0 and at most 64 TiB (got " +
                                    std::to_string(window_heap_bytes) + ")");
    try {
        chip_lane.chip.validate();
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("WorkerConfig.chip_lane.chip.") + e.what());
    }
}

bool WorkerConfig::same_options(const WorkerConfig& o) const {
    return num_chips == o.num_chips && num_sub_workers == o.num_sub_workers && num_workers == o.num_workers &&
           num_relay_workers == o.num_relay_workers && worker_callable_names == o.worker_callable_names &&
           blob_capacity == o.blob_capacity && spin == o.spin && task_timeout == o.task_timeout &&
           close_grace == o.close_grace && chip_lane == o.chip_lane && device_memory_bytes == o.device_memory_bytes &&
           window_heap_bytes == o.window_heap_bytes && record_edges == o.record_edges &&
           sub_callable_names == o.sub_callable_names && trace == o.trace && trace_capacity == o.trace_capacity &&
           path == o.path;
}

Worker::Worker(WorkerConfig config)
    : config_(validated(std::move(config))),
      device_(std::make_unique<DeviceMemory>(config_.num_chips, config_.device_memory_bytes)),
      windows_(std::make_unique<WindowMemory>(config_.num_chips, config_.window_heap_bytes)),
      wait_waiter_(config_.spin),
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

Worker::~Worker() {
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

bool Worker::in_owner_process() const noexcept { return ipc::current_process_id() == owner_pid_; }

void Worker::require_owner_process(const char* what) const {
    if (!in_owner_process())
        throw std::logic_error(std::string(what) +
                               ": this process was forked from the Worker's owner; a Worker runs only in the "
                               "process that created it");
}

EngineConfig Worker::engine_config() {
    EngineConfig e;
    e.children[static_cast<size_t>(ChildKind::CHIP)] = config_.num_chips;
    e.children[static_cast<size_t>(ChildKind::SUB_WORKER)] = config_.num_sub_workers;
    e.children[static_cast<size_t>(ChildKind::WORKER)] = config_.num_workers;
    if (config_.num_workers > 0) e.next_level = ChildKind::WORKER;
    e.record_edges = config_.record_edges;
    e.chip_lane_depth = CHIP_LANE_DEPTH;
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

ChildHandlers Worker::make_child_handler(ChildRef child) {
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

void Worker::init() {
    require_owner_process("Worker.init");
    if (closed_) throw std::logic_error("Worker.init: the Worker is closed; create a new one");
    if (initialized_) throw std::logic_error("Worker.init: already initialized");
    const ChildCounts children = core_.children();
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) {
        lane_base_[k] = lanes_.size();
        for (uint32_t i = 0; i < children[k]; ++i) {
            Lane& l = lanes_.emplace_back();
            l.ref = ChildRef{static_cast<ChildKind>(k), i};
            const uint32_t depth = l.ref.kind == ChildKind::CHIP ? CHIP_LANE_DEPTH : 1;
            l.mailbox = std::make_unique<ipc::MailboxRing>(ipc::MailboxRingConfig{config_.blob_capacity, depth}, bell_);
        }
    }
    // The relay lanes are the last next-level Worker lanes; nothing is forked for them.
    const size_t first_relay =
        lane_base_[static_cast<size_t>(ChildKind::WORKER)] + config_.num_workers - config_.num_relay_workers;
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
            lanes_[i].relay = std::thread(&Worker::relay_loop, this, i, std::move(relays[i - first_relay]));
        }
        scheduler_ = std::thread(&Worker::scheduler_loop, this);
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
    process_live_workers().add(this);  // a release from now on waits for this Worker's tasks too
    live_registered_ = true;
}

std::string Worker::reserved_callable_refusal(uint64_t callable) {
    if (callable != FORGET_CALLABLE && callable != INSTALL_CALLABLE) return {};
    return "submit refused: callable id " + std::to_string(callable) + " is reserved for the Worker's " +
           (callable == FORGET_CALLABLE ? "forget" : "install") + " message";
}

std::string Worker::blob_refusal(size_t member, const MemberSubmit& m) const {
    if (m.args == nullptr) return {};  // refused by the engine with its message
    const size_t need = blob_size(*m.args);
    if (need <= config_.blob_capacity) return {};
    return "submit refused: member " + std::to_string(member) + "'s argument blob needs " + std::to_string(need) +
           " bytes, the mailbox holds " + std::to_string(config_.blob_capacity);
}

TaskHandle Worker::submit(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> members,
                          const TaskConfig& config) {
    require_owner_process("Worker.submit");
    if (closed_) throw std::logic_error("Worker.submit: the Worker is closed");
    if (!initialized_) throw std::logic_error("Worker.submit: the Worker is not running (call init())");
    if (std::string why = reserved_callable_refusal(callable); !why.empty()) throw std::invalid_argument(why);
    for (size_t m = 0; m < members.size(); ++m)
        if (std::string why = blob_refusal(m, members[m]); !why.empty()) throw std::invalid_argument(why);
    TaskHandle id;
    {
        std::lock_guard lock(mu_);
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

std::optional<Worker::BatchRefusal> Worker::submit_many(TaskKind kind, uint64_t callable, BatchSource& tasks,
                                                        const TaskConfig& config, TaskHandles& out) {
    require_owner_process("Worker.submit_many");
    if (closed_) throw std::logic_error("Worker.submit_many: the Worker is closed");
    if (!initialized_) throw std::logic_error("Worker.submit_many: the Worker is not running (call init())");
    if (tasks.size() == 0) return std::nullopt;
    if (std::string why = reserved_callable_refusal(callable); !why.empty()) return BatchRefusal{0, std::move(why)};
    const auto blob_fits = [this](const MemberSubmit& t) { return blob_refusal(0, t); };
    {
        std::lock_guard lock(mu_);
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

template <class Settle>
bool Worker::drive_lanes_until(ipc::Deadline until, Settle&& settle) {
    // The waiting thread drives the lanes itself (collects results, dispatches
    // what they release) while the scheduler thread stands down: a finished
    // task reaches the waiter in one hand-off instead of two.
    driving_.fetch_add(1, std::memory_order_acq_rel);
    // On return the scheduler thread is not woken: when a wait returns nothing
    // it waited for is in flight, and a parked scheduler looks again within its
    // park time (a round trip per wait would otherwise pay for waking it).
    struct StandUp {
        Worker& w;
        ~StandUp() { w.driving_.fetch_sub(1, std::memory_order_acq_rel); }
    } stand_up{*this};
    // The Worker's adaptive waiter when no other wait holds it, else a fresh one.
    std::unique_lock owned(wait_waiter_mu_, std::try_to_lock);
    std::optional<ipc::SpinWaiter> spare;
    ipc::SpinWaiter& waiter = owned.owns_lock() ? wait_waiter_ : spare.emplace(config_.spin);
    for (;;) {
        const uint32_t seen = bell_.sequence();
        ipc::Deadline deadline = ipc::NO_DEADLINE;
        bool child_waking = false;
        {
            std::lock_guard lock(mu_);
            if (!stopping_) deadline = progress_locked();
            if (settle()) return true;
            child_waking = std::exchange(woke_child_, false);
        }
        if (until != ipc::NO_DEADLINE && ipc::Clock::now() >= until) return false;
        (void)bell_.wait_past(seen, waiter, std::min(deadline, until), child_waking);
    }
}

void Worker::await_released_name(const WindowMemory& windows, const std::string& name, const char* what) {
    if (!windows.releasing_named(name)) return;
    require_owner_process(what);
    (void)drive_lanes_until(ipc::NO_DEADLINE, [&] {
        if (stopping_) throw std::logic_error(std::string(what) + ": the Worker is closed");
        return !windows.releasing_named(name);
    });
}

bool Worker::wait_until(ipc::Deadline until) {
    if (!initialized_) throw std::logic_error("Worker.wait: the Worker was never initialized");
    require_owner_process("Worker.wait");
    return drive_lanes_until(until, [this] {
        if (stopping_ && core_.unfinished() > 0) {
            // close() ran (from another thread, or before this wait): the
            // children are going away, so what has not finished never will.
            std::string message = describe_closed_run_locked();
            (void)core_.end_run();
            core_.clear_failure();
            throw RunError(message);
        }
        if (core_.unfinished() > 0) return false;
        (void)core_.end_run();
        const std::optional<RunFailure>& f = core_.first_failure();
        std::string message = f ? describe_failure_locked(*f, core_.poisoned_count()) : std::string();
        core_.clear_failure();  // also forgets the runs, every one finished
        if (!message.empty()) throw RunError(message);
        return true;
    });
}

std::string Worker::cancel_run(const std::string& why) {
    require_owner_process("Worker.cancel_run");
    std::lock_guard lock(mu_);
    if (!initialized_ || stopping_) return {};
    const size_t poisoned_before = core_.poisoned_count();
    core_.abandon(why, withdrawer());
    release_holds_locked();  // a cancelled task names nothing any more
    const size_t cancelled = core_.poisoned_count() - poisoned_before;
    core_.end_run();
    core_.clear_failure();
    return cancelled_text_locked(cancelled, std::nullopt);
}

std::string Worker::cancelled_text_locked(size_t cancelled, std::optional<uint64_t> run) const {
    std::string out = std::to_string(cancelled) + " task(s) not yet dispatched were cancelled";
    const std::string running = describe_in_flight_locked(8, run);
    if (running.empty()) return out;
    return out + "; still running on their children, and waited for by the next run(): " + running;
}

std::string Worker::callable_name(TaskKind kind, uint64_t callable) const {
    const std::vector<std::string>& names = kind == TaskKind::SUB     ? config_.sub_callable_names
                                            : config_.num_workers > 0 ? config_.worker_callable_names
                                                                      : config_.chip_lane.chip.orchestrations;
    return callable < names.size() ? "'" + names[callable] + "'" : std::to_string(callable);
}

std::string Worker::describe_in_flight_locked(size_t limit, std::optional<uint64_t> run) const {
    std::string out;
    size_t listed = 0;
    size_t rest = 0;
    for (const Lane& l : lanes_) {
        // A member held behind a forget is the lane's as much as one on the child.
        for (const std::deque<Dispatch>* members : {&l.in_flight, &l.held}) {
            for (const Dispatch& d : *members) {
                if ((run && d.task.run != *run) || d.withdrawn) continue;  // a withdrawn task never runs
                if (listed == limit) {
                    ++rest;
                    continue;
                }
                out += std::string(listed++ > 0 ? ", " : "") + (d.kind == TaskKind::SUB ? "sub " : "") + d.task.name() +
                       " (callable " + callable_name(d.kind, d.callable) + ", member " + std::to_string(d.member) +
                       ") on " + d.child.name();
            }
        }
    }
    if (rest > 0) out += " and " + std::to_string(rest) + " more";
    return out;
}

std::string Worker::describe_closed_run_locked() const {
    std::string out = "the Worker was closed while the run waited";
    const std::string running = describe_in_flight_locked(8);
    if (!running.empty()) out += "; these had not finished and never will: " + running;
    if (const std::optional<RunFailure>& f = core_.first_failure())
        out += "; " + describe_failure_locked(*f, core_.poisoned_count());
    return out;
}

std::string Worker::describe_closed_run_locked(uint64_t run) const {
    std::string out = "the Worker was closed while the run waited";
    const std::string running = describe_in_flight_locked(8, run);
    if (!running.empty()) out += "; these had not finished and never will: " + running;
    if (const RunState* state = core_.run_state(run); state != nullptr && state->first_failure)
        out += "; " + describe_failure_locked(*state->first_failure, state->poisoned);
    return out;
}

ipc::Deadline Worker::progress_locked() {
    collect_results_locked();
    read_below_locked();
    // Holds go back before the dispatch: a buffer they free is forgotten on each
    // lane before that lane's next task. A task whose publish failed finishes
    // in the dispatch; its holds go back after it.
    release_holds_locked();
    dispatch_locked();
    release_holds_locked();
    ipc::Deadline deadline = ipc::NO_DEADLINE;
    for (const Lane& l : lanes_)
        if (!l.in_flight.empty() || l.control_in_flight) deadline = std::min(deadline, l.mailbox->deadline());
    notify_runs_locked();
    return deadline;
}

std::string Worker::describe_failure_locked(const RunFailure& f, size_t poisoned) const {
    const std::string task = std::string(f.kind == TaskKind::SUB ? "sub " : "") + f.task.name() + " (callable " +
                             callable_name(f.kind, f.callable) + ", member " + std::to_string(f.member) + ")";
    std::string out;
    if (f.cause) {
        // Poisoned by another run's failure: the task, then that failure.
        out = task + " was not run: it needs what " + describe_failure_locked(*f.cause, 0) + " (in another run)";
        if (poisoned > 1) out += "; " + std::to_string(poisoned - 1) + " more task(s) of this run were not run";
        return out;
    }
    out = task + " on " + f.where.name() + " failed: " + f.message;
    if (poisoned > 0) out += "; " + std::to_string(poisoned) + " dependent task(s) were not run";
    return out;
}

std::string Worker::run_outcome_locked(uint64_t run) const {
    const RunState* state = core_.run_state(run);
    if (state == nullptr || !state->first_failure) return {};
    return describe_failure_locked(*state->first_failure, state->poisoned);
}

void Worker::notify_runs_locked() {
    if (core_.take_run_progress()) runs_cv_.notify_all();
}

uint64_t Worker::end_run(bool collected) {
    require_owner_process("Worker.end_run");
    std::lock_guard lock(mu_);
    const uint64_t run = core_.end_run(collected);
    notify_runs_locked();
    return run;
}

bool Worker::wait_run(uint64_t run, ipc::Deadline until) {
    if (!initialized_) throw std::logic_error("Worker.wait_run: the Worker was never initialized");
    require_owner_process("Worker.wait_run");
    {
        std::lock_guard lock(mu_);
        const RunState* state = core_.run_state(run);
        if (state == nullptr || !state->ended)
            throw std::logic_error("Worker.wait_run: run " + std::to_string(run) +
                                   (state == nullptr ? " is not in flight (never ended, or already reported)"
                                                     : " has not ended (end_run)"));
    }
    return drive_lanes_until(until, [this, run] {
        if (stopping_ && !core_.run_finished(run)) {
            std::string message = describe_closed_run_locked(run);
            core_.forget_run(run);
            throw RunError(message);
        }
        if (!core_.run_finished(run)) return false;
        std::string message = run_outcome_locked(run);
        core_.forget_run(run);
        if (!message.empty()) throw RunError(message);
        return true;
    });
}

std::string Worker::cancel_run(uint64_t run, const std::string& why) {
    require_owner_process("Worker.cancel_run");
    std::lock_guard lock(mu_);
    if (!initialized_ || stopping_) return {};
    const size_t cancelled = core_.cancel_run(run, why, withdrawer());
    release_holds_locked();  // a cancelled task names nothing any more
    notify_runs_locked();
    return cancelled_text_locked(cancelled, run);
}

Worker::FinishedRuns Worker::take_finished_runs(ipc::Deadline until) {
    require_owner_process("Worker.take_finished_runs");
    std::unique_lock lock(mu_);
    for (;;) {
        FinishedRuns out;
        out.closed = stopping_;
        for (uint64_t run : out.closed ? core_.collected_runs() : core_.finished_collected_runs()) {
            std::string error = core_.run_finished(run) ? run_outcome_locked(run) : describe_closed_run_locked(run);
            core_.forget_run(run);
            out.runs.push_back({run, std::move(error)});
        }
        if (out.closed || !out.runs.empty() || ipc::Clock::now() >= until) return out;
        // Asleep until a run ends or finishes (notify_runs_locked), or close().
        if (until == ipc::NO_DEADLINE) {
            runs_cv_.wait(lock);
        } else {
            (void)runs_cv_.wait_until(lock, until);
        }
    }
}

void Worker::scheduler_loop() noexcept {
    // The background path (progress while the orchestration thread neither
    // submits nor waits): it never spins, so it takes no core from the threads
    // on the latency path.
    ipc::SpinWaiter waiter(ipc::never_spin_policy());
    std::chrono::microseconds park = SCHEDULER_PARK_MIN;
    for (;;) {
        const uint32_t seen = bell_.sequence();
        const uint32_t drive_seen = ipc::load_acquire(drive_word_);
        const bool stand_down = driving_.load(std::memory_order_acquire) > 0;
        ipc::Deadline deadline = ipc::NO_DEADLINE;
        {
            std::lock_guard lock(mu_);
            if (stopping_) return;
            if (!stand_down) deadline = progress_locked();
        }
        if (stand_down) {
            (void)waiter.wait_change(drive_word_, drive_seen, ipc::Clock::now() + park);
            park = std::min(park * 2, SCHEDULER_PARK_MAX);
            continue;
        }
        park = SCHEDULER_PARK_MIN;
        (void)bell_.wait_past(seen, waiter, deadline);
    }
}

void Worker::relay_loop(size_t lane, RelayLane relay) noexcept {
    ipc::MailboxRing& mailbox = *lanes_[lane].mailbox;
    std::string lost;
    {
        const ipc::TaskHandler handler = serve_with_control(std::move(relay.handlers));
        // Asked after every task, and after every idle spell of RELAY_IDLE_CHECK.
        const std::function<bool()> child_lost = [&] {
            try {
                lost = relay.lost();
            } catch (...) {
                lost = "its relay failed to say whether it is reachable";
            }
            return !lost.empty();
        };
        for (;;) {
            const int status = ipc::serve_ring(mailbox, handler, config_.spin, RELAY_IDLE_CHECK, child_lost);
            if (status == ipc::SERVE_SHUTDOWN || status == ipc::SERVE_STOPPED) break;
            if (child_lost()) break;
        }
    }
    const bool child_gone = !lost.empty();
    {
        // Under the engine mutex: whoever drives the lanes reads relay_lost_why under it.
        std::lock_guard lock(mu_);
        lanes_[lane].relay_lost = nullptr;
        if (child_gone) lanes_[lane].relay_lost_why = std::move(lost);
    }
    if (child_gone) {
        mailbox.mark_child_exited(0);
        bell_.ring();
    }
    // `relay` goes last, here: the relay says goodbye to its child on this thread.
}

bool Worker::withdraw_locked(TaskId task, ChildRef chip) {
    Lane& l = lanes_[lane_of(chip)];
    if (l.lost) return false;
    const std::vector<uint64_t> seqs = l.mailbox->in_flight_seqs();
    for (size_t k = 0; k < l.in_flight.size() && k < seqs.size(); ++k) {
        if (l.in_flight[k].task.id != task) continue;
        l.in_flight[k].withdrawn = l.mailbox->withdraw(seqs[k]);
        return l.in_flight[k].withdrawn;
    }
    // Held behind a control message: published withdrawn once the child answers
    // (skipped there, in its place, so the masks of the tasks after it still count right).
    for (Dispatch& d : l.held) {
        if (d.task.id != task) continue;
        d.withdrawn = true;
        return true;
    }
    return false;
}

std::string Worker::dead_lane_why_locked(const Lane& l) const {
    if (l.lost) return l.lost_why;
    return l.relay_lost_why.empty() ? l.mailbox->poison_reason() : l.relay_lost_why;
}

void Worker::collect_results_locked() {
    for (size_t i = 0; i < lanes_.size(); ++i) {
        Lane& l = lanes_[i];
        if (!l.in_flight.empty()) {
            // Results come in publish order; a lost lane reports every task on it at once.
            while (!l.in_flight.empty()) {
                std::optional<ipc::TaskResult> r = l.mailbox->poll_result();
                if (!r) break;
                const Dispatch d = l.in_flight.front();
                l.in_flight.pop_front();
                // The next task's time starts now: it ran only after this one.
                if (!l.in_flight.empty() && config_.task_timeout.count() > 0)
                    l.mailbox->restart_oldest_deadline(ipc::Clock::now() + config_.task_timeout);
                if (trace_) trace_->collected(i, r->ok() ? "" : ipc::task_error_name(r->error) + (": " + r->message));
                std::string failure =
                    r->ok() ? std::string() : std::string(ipc::task_error_name(r->error)) + ": " + r->message;
                // A relay that lost its child with a task published but not yet taken never ran it.
                if (r->error == ipc::TaskError::CHILD_DIED && !l.relay_lost_why.empty())
                    failure = "not dispatched to " + d.child.name() + ": the child is gone (" + l.relay_lost_why + ")";
                core_.member_finished(d, failure);
                ++l.done;
                if (!r->ok() && l.relay_lost && !l.lost) {
                    std::string why;
                    try {
                        why = l.relay_lost();
                    } catch (...) {
                        why.clear();  // asked again by the relay thread after the task
                    }
                    if (!why.empty()) lose_lane_locked(i, why);
                }
            }
        } else if (l.control_in_flight) {
            if (std::optional<ipc::TaskResult> r = l.mailbox->poll_result()) {
                // A forget the child refused changes nothing it holds; an install's answer goes to
                // its ticket; a dead child is lost below.
                l.control_in_flight = false;
                if (r->error == ipc::TaskError::TIMED_OUT && l.install_on_child == 0) {
                    // A child that does not answer a forget within task_timeout is lost as one
                    // that overruns a task: the tasks held behind the forget fail, not hang.
                    lose_lane_locked(i,
                                     "TIMED_OUT: it did not answer a forget message (buffers released) within "
                                     "task_timeout (" +
                                         seconds_text(config_.task_timeout) + " s); the child was killed");
                    continue;
                }
                if (l.install_on_child != 0) {
                    const uint64_t ticket = std::exchange(l.install_on_child, 0);
                    std::string why;
                    if (!r->ok())
                        why = r->error == ipc::TaskError::TASK_FAILED
                                  ? r->message
                                  : std::string(ipc::task_error_name(r->error)) + ": " + r->message;
                    finish_install_locked(ticket, l.ref, why);
                }
                if (r->ok() || l.mailbox->usable()) publish_next_control_locked(i);
            }
        }
        if (!l.lost && !l.mailbox->usable()) lose_lane_locked(i, dead_lane_why_locked(l));
    }
}

void Worker::dispatch_locked() {
    deliver_forgets_locked();
    deliver_installs_locked();
    batch_.clear();
    core_.take(batch_);
    for (const Dispatch& d : batch_) {
        const size_t i = lane_of(d.child);
        Lane& l = lanes_[i];
        if (l.control_in_flight || !l.held.empty()) {
            l.held.push_back(d);  // published once the child has answered the forget
            continue;
        }
        publish_locked(i, d);
    }
}

void Worker::publish_locked(size_t i, const Dispatch& d) {
    Lane& l = lanes_[i];
    ipc::CallConfig call{};
    std::memcpy(call.bytes, d.config, sizeof *d.config);
    const ipc::Deadline deadline = task_deadline();
    uint64_t seq = 0;
    // Stamped before the publish: the child may start at once, and the RUN
    // interval must contain its whole run.
    const int64_t published_ns = trace_ ? trace_now_ns() : 0;
    const ipc::PublishStatus st =
        l.mailbox->publish(d.callable, call, d.blob, seq, deadline, d.after_mask, d.withdrawn);
    if (st == ipc::PublishStatus::OK) {
        woke_child_ |= l.mailbox->publish_woke_child();
        l.in_flight.push_back(d);
        if (trace_) trace_->published(i, d, published_ns);
        return;
    }
    if (trace_) trace_->not_published(d, publish_status_text(st));
    // A dead lane says how its child went ("CHILD_DIED: child killed by signal 9 ...").
    std::string why = publish_status_text(st);
    if (st == ipc::PublishStatus::LANE_DEAD) {
        const std::string how = dead_lane_why_locked(l);
        if (!how.empty()) why += " (" + how + ")";
    }
    core_.member_finished(d, "not dispatched to " + d.child.name() + ": " + why);
    if (st == ipc::PublishStatus::LANE_DEAD && !l.lost) lose_lane_locked(i, dead_lane_why_locked(l));
}

void Worker::deliver_forgets_locked() {
    // The task path pays one relaxed load here while no forget is queued anywhere.
    if (forget_posted_.load(std::memory_order_acquire)) {
        std::lock_guard lock(forget_mu_);
        forget_posted_.store(false, std::memory_order_relaxed);
        for (Lane& l : lanes_) {
            if (l.lost) continue;
            if (l.forgets.empty() && !forget_inbox_.empty()) ++lanes_forgetting_;
            l.forgets.insert(l.forgets.end(), forget_inbox_.begin(), forget_inbox_.end());
        }
        forget_inbox_.clear();
    }
    if (lanes_forgetting_ == 0) return;
    for (size_t i = 0; i < lanes_.size(); ++i) {
        const Lane& l = lanes_[i];
        if (!l.lost && l.in_flight.empty() && !l.control_in_flight && !l.forgets.empty()) publish_forget_locked(i);
    }
}

void Worker::publish_forget_locked(size_t i) {
    Lane& l = lanes_[i];
    const size_t fit = std::max<size_t>(1, config_.blob_capacity / sizeof(CanonicalIdentity));
    const size_t n = std::min(fit, l.forgets.size());
    forget_blob_.resize(n * sizeof(CanonicalIdentity));
    std::memcpy(forget_blob_.data(), l.forgets.data(), forget_blob_.size());
    uint64_t seq = 0;
    // Bounded as a task is: a child that never answers (stopped, hung) is lost at the deadline.
    const ipc::PublishStatus st =
        l.mailbox->publish(FORGET_CALLABLE, ipc::CallConfig{}, forget_blob_, seq, task_deadline());
    if (st == ipc::PublishStatus::OK) {
        l.forgets.erase(l.forgets.begin(), l.forgets.begin() + static_cast<std::ptrdiff_t>(n));
        if (l.forgets.empty()) --lanes_forgetting_;
        l.control_in_flight = true;
        return;
    }
    if (st == ipc::PublishStatus::LANE_DEAD && !l.lost) lose_lane_locked(i, dead_lane_why_locked(l));
}

void Worker::release_holds_locked(bool all) {
    if (!all && !core_.has_unheld()) return;
    unheld_.clear();
    if (all) {
        core_.drop_all_holds(unheld_);
    } else {
        core_.take_unheld(unheld_);
    }
    for (const CanonicalIdentity& id : unheld_) process_backing_retention().release(id);
}

void Worker::lose_lane_locked(size_t lane, const std::string& why) {
    Lane& l = lanes_[lane];
    if (!l.lost) lost_count_.fetch_add(1, std::memory_order_acq_rel);
    l.lost = true;
    l.lost_why = why.empty() ? "lost" : why;
    if (!l.forgets.empty()) --lanes_forgetting_;
    l.forgets.clear();
    drop_installs_locked(l);
    l.control_in_flight = false;
    while (!l.held.empty()) {
        const Dispatch d = l.held.front();
        l.held.pop_front();
        core_.member_finished(d, "not dispatched to " + d.child.name() + ": the child is gone (" + l.lost_why + ")");
    }
    if (trace_) trace_->lane_lost(lane, l.lost_why);
    core_.child_lost(l.ref, l.ref.name() + " " + l.lost_why);
    status_changed_locked();
    if (l.child.pid() > 0 && !l.child.reaped()) l.child.signal(SIGKILL);  // a timed-out child may still run its task
}

void Worker::close() noexcept {
    if (!in_owner_process()) {
        closed_.store(true, std::memory_order_release);
        return;
    }
    // A second close() (another thread's) returns once the first has stopped everything.
    std::lock_guard closing(close_mu_);
    if (live_registered_) {
        process_live_workers().remove(this);  // no release waits for this Worker's tasks from now on
        live_registered_ = false;
    }
    {
        std::lock_guard lock(mu_);
        if (closed_.load(std::memory_order_relaxed)) return;
        closed_.store(true, std::memory_order_release);
        stopping_ = true;
        if (initialized_) core_.abandon("the Worker closed before the task was dispatched");
        runs_cv_.notify_all();
        status_cv_.notify_all();
    }
    ipc::bump(drive_word_);
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
}

DeviceBacking Worker::alloc_device(uint32_t chip, uint64_t nbytes, AccessMode access) {
    if (closed_) throw std::logic_error("alloc_child_tensor: the Worker is closed");
    return device_->alloc(chip, nbytes, access);
}

void Worker::release_device(const CanonicalIdentity& id) {
    device_->begin_release(id);
    {
        std::lock_guard lock(mu_);
        core_.release_after([this, id] { device_->finish_release(id); });
    }
    bell_.ring();
}

std::optional<uint32_t> Worker::device_owner(const CanonicalIdentity& id) const {
    if (std::optional<uint32_t> chip = device_->owner_of(id)) return chip;
    return windows_->owner_of(id);
}

void Worker::forget(std::span<const CanonicalIdentity> identities) {
    if (identities.empty() || !in_owner_process() || closed_) return;
    {
        std::lock_guard lock(forget_mu_);
        forget_inbox_.insert(forget_inbox_.end(), identities.begin(), identities.end());
        forget_posted_.store(true, std::memory_order_release);
    }
    bell_.ring();  // whoever drives the lanes delivers it now
}

void Worker::hold_users(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    if (!initialized_) return;
    process_backing_retention().retain(id, core_.hold_users(id));
}

}  // namespace simpler
