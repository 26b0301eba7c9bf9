// Worker::Impl: the machinery behind the Worker's API (engine/worker.h). Not
// installed: a program builds against worker.h alone.
//
// Driving the lanes: the mailboxes' parent halves are driven under the one
// engine mutex (held only for bookkeeping, never while waiting) by whichever
// thread makes progress: submit() collects finished results and publishes
// ready tasks to their free lanes at once; wait() collects results and
// dispatches what they release while it waits, and the scheduler thread does
// so only while no wait() is running (between, while the orchestration
// function is still submitting). Each hop through a thread is a hand-off, so
// this keeps a round trip to one hand-off each way. With config.trace, a
// TraceRecorder (trace.h) records when each task was submitted and each member
// published and collected, under that same mutex.
//
// Released buffers: from init() to close() the Worker is one of the process's
// live Workers (live_workers.h). hold_users() marks the unfinished tasks that
// name a released buffer; their holds go back to process_backing_retention()
// as they finish, and all of them at close().
//
// Late callables: after init(), begin_install() sends a callable registered
// then (a chip orchestration or a sub-worker callable) to every child of its
// kind as an install message (child_handlers.h), which each child gets when
// its lane is free and handles before any later task; wait_install() drives
// the lanes until every such child has answered and returns the refusals,
// in child order.
//
// Relay lanes: a next-level child on another host (a remote L3) has a lane
// like any other, served by a relay thread of this process instead of a forked
// child (WorkerConfig::relay_handler); when its child is lost the thread marks
// the mailbox's child exited, and the lane is lost with the relay's reason.
//
// Waiting: each child waits for its next task, and wait() on the doorbell:
// spin for the budget, then sleep on a futex. With a zero budget nothing
// spins; while idle, nothing spins beyond one budget. The scheduler thread
// never spins: it sleeps on the doorbell, or, while a wait() drives, parks
// (LaneDrivers, lane_drivers.h).
//
// Chips waiting on chips (WorkerConfig::chip_conditions): the Worker maps a
// LaneBoard (ipc/lane_board.h) before the fork, chip i its lane i, and a chip
// task published with producers on other chips' lanes waits for them there
// (worker_lanes.cpp: publish_locked; EngineCore's chained dispatch).
//
// Losses below: a next-level Worker child reports the children it loses up
// through a page its parent mapped before the fork (below_status.h);
// child_status() shows it and the status channel moves on.
//
// Definitions by concept: worker_api.cpp (the API, forwarding here),
// worker.cpp (construction, init, submit, close, buffers), worker_lanes.cpp
// (driving the lanes), worker_runs.cpp (waits, runs, cancels),
// worker_status.cpp (status and losses below), worker_install.cpp (the
// control messages: forgets and installs, kept lane by lane in ControlMessages,
// control_messages.h), worker_windows.cpp.
#pragma once

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "simpler/engine/below_status.h"
#include "simpler/engine/child_handlers.h"
#include "simpler/engine/child_status.h"
#include "simpler/engine/chip_facts_page.h"
#include "simpler/engine/chip_lane.h"
#include "simpler/engine/device_memory.h"
#include "simpler/engine/edge_log.h"
#include "simpler/engine/engine_core.h"
#include "simpler/engine/failure_report.h"
#include "simpler/engine/internal/control_messages.h"
#include "simpler/engine/internal/lane_drivers.h"
#include "simpler/engine/progress.h"
#include "simpler/engine/status_channel.h"
#include "simpler/engine/task_handles.h"
#include "simpler/engine/trace.h"
#include "simpler/engine/window_memory.h"
#include "simpler/engine/worker.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/child_watcher.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/mailbox_ring.h"
#include "simpler/ipc/process_id.h"
#include "simpler/ipc/serve_tasks.h"
#include "simpler/ipc/shared_word.h"
#include "simpler/ipc/spin_wait.h"

namespace simpler {

class Worker::Impl {
public:
    Impl(Worker& self, WorkerConfig config);
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    ~Impl();

    void init();

    TaskHandle submit(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> members,
                      const TaskConfig& config);
    [[nodiscard]] uint64_t room() const;
    void await_room();

    std::optional<BatchRefusal> submit_many(TaskKind kind, uint64_t callable, BatchSource& tasks,
                                            const TaskConfig& config, TaskHandles& out);

    bool wait_until(ipc::Deadline until);

    std::string cancel_run(const std::string& why);

    uint64_t end_run(bool collected);
    bool wait_run(uint64_t run, ipc::Deadline until);
    std::string cancel_run(uint64_t run, const std::string& why);
    FinishedRuns take_finished_runs(ipc::Deadline until);

    void close() noexcept;

    DeviceBacking alloc_device(uint32_t chip, uint64_t nbytes, AccessMode access = AccessMode::READWRITE);
    void release_device(const CanonicalIdentity& id);
    [[nodiscard]] std::optional<uint32_t> device_owner(const CanonicalIdentity& id) const;
    WindowDomain allocate_domain(const std::string& name, const std::vector<uint32_t>& workers, uint64_t window_size,
                                 const std::vector<WindowBufferSpec>& buffers);
    void release_domain(uint64_t id);
    WindowDomain allocate_global_domain(const std::string& name, const std::vector<uint32_t>& slots,
                                        uint64_t window_size, const std::vector<WindowBufferSpec>& buffers);
    void release_global_domain(uint64_t id);
    [[nodiscard]] std::shared_ptr<WindowMemory> global_windows() const noexcept { return global_windows_; }

    void forget(std::span<const CanonicalIdentity> identities);
    uint64_t begin_install(ChildKind kind, uint64_t callable, const std::string& name,
                           std::span<const std::byte> payload);
    std::optional<std::vector<InstallRefusal>> wait_install(uint64_t ticket, ipc::Deadline until);
    void abandon_install(uint64_t ticket);
    void hold_users(const CanonicalIdentity& id);
    [[nodiscard]] EdgeLog take_edge_log();
    [[nodiscard]] DeviceMemory& device_memory() noexcept { return *device_; }
    [[nodiscard]] WindowMemory& window_memory() noexcept { return *windows_; }

    [[nodiscard]] bool initialized() const noexcept { return initialized_; }
    [[nodiscard]] bool in_owner_process() const noexcept;
    [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
    [[nodiscard]] std::vector<ChildStatus> child_states() const;
    [[nodiscard]] std::vector<std::string> child_status() const;
    [[nodiscard]] uint64_t status_channel() const noexcept { return status_->id(); }
    [[nodiscard]] std::vector<pid_t> child_pids() const;
    [[nodiscard]] chip::DeviceFacts device_facts(uint32_t chip);
    [[nodiscard]] WorkerProgress progress() const;
    [[nodiscard]] uint64_t lost_count() const noexcept { return lost_count_.load(std::memory_order_acquire); }
    [[nodiscard]] const WorkerConfig& config() const noexcept { return config_; }

    [[nodiscard]] std::vector<TraceEvent> trace_events() const;
    [[nodiscard]] size_t trace_dropped() const;
    void trace_clear();

private:
    struct Lane {
        ChildRef ref;
        // A chip's lane holds CHIP_LANE_DEPTH tasks (the one it runs, then
        // chained or ready ones); every other lane one.
        std::unique_ptr<ipc::MailboxRing> mailbox;
        ipc::ChildProcess child;
        std::deque<Dispatch> in_flight;  // on the child, in publish order (held ones: control_)
        bool lost = false;
        std::string lost_why;
        uint64_t done = 0;  // members this lane's child finished (WorkerProgress)
        // A relay lane (WorkerConfig::num_relay_workers): served by this thread,
        // not a child process; relay_lost_why is written by it, under the
        // engine mutex, before it marks the mailbox's child exited.
        std::thread relay;
        std::string relay_lost_why;
        // The relay's lost(), asked under the engine mutex when a task of the
        // lane fails: a lost child's lane is lost before its failure is reported.
        std::function<std::string()> relay_lost;
        // A next-level Worker child's report of the children lost below it.
        std::unique_ptr<BelowStatus> below;
        std::unique_ptr<ChipFactsPage> facts;  // a chip's: the device it opened
        uint32_t below_version = 0;
        uint32_t below_lost = 0;
        std::string below_text;
    };

    // Lanes are laid out kind by kind in ChildKind order; a child's lane is its
    // kind's first lane plus its index.
    [[nodiscard]] size_t lane_of(ChildRef c) const noexcept {
        return lane_base_[static_cast<size_t>(c.kind)] + c.index;
    }
    // std::logic_error naming `what` in a process forked from the owner (see in_owner_process()).
    void require_owner_process(const char* what) const;
    void scheduler_loop() noexcept;
    // A waiting thread drives the lanes until `settle()` — asked under the
    // engine mutex after each round of progress (none once close() ran) —
    // returns true or throws; false once `until` passes first.
    template <class Settle>
    bool drive_lanes_until(ipc::Deadline until, Settle&& settle);
    // Waits until no domain named `name` is releasing in `windows` (its
    // operation(): allocate_domain or allocate_global_domain).
    void await_released_name(const WindowMemory& windows, const std::string& name);
    void wait_for_room_locked(std::unique_lock<std::mutex>& lock);  // await_room(), mu_ let go meanwhile
    // release_domain / release_global_domain of domain `id` of `windows`: refused
    // at submit now, freed (and forgotten on every chip) once the tasks before it finish.
    void release_windows(WindowMemory& windows, uint64_t id);
    // A relay lane's thread: serves the lane with the relay's handlers until
    // close(), or until the relay says its child is lost (then loses the lane).
    void relay_loop(size_t lane, RelayLane relay) noexcept;
    static constexpr std::chrono::milliseconds RELAY_IDLE_CHECK{250};
    // Collects results, dispatches what is ready, returns the nearest task deadline.
    ipc::Deadline progress_locked();
    void collect_results_locked();
    void dispatch_locked();
    void publish_locked(size_t lane, const Dispatch& d);
    // The lane sequence of `task` in flight on chip `chip`'s lane (0: not there).
    [[nodiscard]] uint64_t lane_seq_locked(uint32_t chip, TaskId task) const;
    // Task timeouts: a lane's oldest task `d` has its time counted from now, or,
    // waiting for producers still on other chips' lanes, from when the last is
    // collected (NO_DEADLINE until then: start_waiting_deadlines_locked).
    [[nodiscard]] ipc::Deadline oldest_deadline_locked(const Dispatch& d) const;
    void start_waiting_deadlines_locked(TaskId producer);
    // Queues the posted forgets on every lane, and sends each idle lane its next control message.
    void deliver_control_locked();
    // Sends lane `lane` the control message due next (control_.next(lane)).
    void publish_control_locked(size_t lane);
    // After a control message's answer: the lane's next one, else the tasks held for it.
    void publish_next_control_locked(size_t lane);
    // Hands the holds of finished tasks back to the process's retention; with
    // `all`, every task's (close(): the unfinished ones never finish).
    void release_holds_locked(bool all = false);
    // Reads the next-level Worker children's reports of what they lost below them.
    void read_below_locked();
    // A child was lost here or below a child: the status channel moves on, and
    // this Worker reports up when it is a next-level Worker child.
    void status_changed_locked();
    void lose_lane_locked(size_t lane, const std::string& why);
    // Why a lane's child is gone: the lane's loss, a relay's text, or the mailbox's poison.
    [[nodiscard]] std::string dead_lane_why_locked(const Lane& l) const;
    // EngineCore::Withdraw for a cancel: withdraws `task` from `chip`'s lane
    // if the chip has not started it — on the child (Mailbox::withdraw) or
    // held behind a control message (published withdrawn later) — and marks
    // its Dispatch withdrawn.
    bool withdraw_locked(TaskId task, ChildRef chip);
    [[nodiscard]] EngineCore::Withdraw withdrawer() {
        return [this](TaskId t, ChildRef chip) { return withdraw_locked(t, chip); };
    }
    // When a message published now is overdue: task_timeout from now, or never.
    [[nodiscard]] ipc::Deadline task_deadline() const {
        return config_.task_timeout.count() > 0 ? ipc::Clock::now() + config_.task_timeout : ipc::NO_DEADLINE;
    }
    // Why a submit of `callable` is refused (one of the Worker's own messages'), or empty.
    [[nodiscard]] static std::string reserved_callable_refusal(uint64_t callable);
    // Why member `member`'s argument blob cannot go to a mailbox (too large), or empty.
    [[nodiscard]] std::string blob_refusal(size_t member, const MemberSubmit& m) const;
    // This Worker's part of failure `f` of a run with `poisoned` tasks not run.
    [[nodiscard]] FailedTask failed_task_locked(const RunFailure& f, size_t poisoned) const;
    // The whole report: this Worker's part, then the next-level Worker's below it.
    [[nodiscard]] FailureReport report_locked(const RunFailure& f, size_t poisoned) const;
    // What wait_run(run) reports for a finished run: nothing for success.
    [[nodiscard]] std::optional<FailureReport> run_outcome_locked(uint64_t run) const;
    // Wakes take_finished_runs() when a run ended or finished since the last call.
    void notify_runs_locked();
    // A callable's registered name ("" when it has none), and as messages show it ("'name'", or the id).
    [[nodiscard]] std::string callable_label(TaskKind kind, uint64_t callable) const;
    [[nodiscard]] std::string callable_name(TaskKind kind, uint64_t callable) const;
    // The members still on a child, one per line item ("task 1 of run 0 (callable 'f', member 0) on
    // sub-worker 0"), at most `limit` of them and a count of the rest.
    // `run`: only that run's members.
    [[nodiscard]] std::string describe_in_flight_locked(size_t limit, std::optional<uint64_t> run = {}) const;
    // What a cancel did, in words: how many tasks it cancelled, and what of the
    // run (every run: nullopt) still runs on a child.
    [[nodiscard]] std::string cancelled_text_locked(size_t cancelled, std::optional<uint64_t> run) const;
    // wait()'s (nullopt) or wait_run(run)'s error when close() ended the run:
    // a CLOSED report saying what had not finished, and the run's first failure.
    [[nodiscard]] FailureReport closed_report_locked(std::optional<uint64_t> run) const;
    EngineConfig engine_config();
    ChildHandlers make_child_handler(ChildRef child);

    Worker& self_;  // the API this Impl serves: what process_live_workers() lists
    WorkerConfig config_;
    std::unique_ptr<DeviceMemory> device_;  // before core_: the engine's hooks read it
    std::unique_ptr<WindowMemory> windows_;  // likewise
    std::shared_ptr<WindowMemory> global_windows_;  // likewise; see WorkerConfig::global_window_chips
    bool global_owner_ = false;                     // this Worker carves them (level 4)
    std::vector<uint32_t> global_first_slot_;       // owner: by child, its first slot; one more at the end
    [[nodiscard]] std::optional<std::string> global_window_problem(const BufferDescriptor& d, ChildRef to,
                                                                   const std::string& who) const;
    ipc::Doorbell bell_;
    std::vector<Lane> lanes_;
    std::array<size_t, CHILD_KIND_COUNT> lane_base_{};
    // The chips' lanes' progress, mapped by every child before the fork: chips
    // wait there for producers on other chips (EngineConfig::cross_chip).
    std::unique_ptr<ipc::LaneBoard> board_;
    std::unique_ptr<ipc::ChildWatcher> watcher_;
    std::thread scheduler_;

    mutable std::mutex mu_;
    std::mutex close_mu_;  // held for the whole of close(), so that every close() returns with the children gone
    std::condition_variable runs_cv_;        // take_finished_runs()'s, with mu_
    std::shared_ptr<StatusChannel> status_ = StatusChannel::create();  // status_channel()
    LaneDrivers drivers_{config_.spin};  // which thread drives the lanes: a waiting one, else the scheduler
    EngineCore core_;
    pid_t owner_pid_ = ipc::current_process_id();  // the process that built the Worker; only it drives the children
    bool stopping_ = false;
    bool initialized_ = false;
    std::atomic<bool> closed_{false};  // written under mu_; read without it by the entry points' checks
    std::vector<Dispatch> batch_;
    std::vector<CanonicalIdentity> unheld_;     // scratch for release_holds_locked
    // The forgets and installs for the children, lane by lane, and the tasks held behind them
    // (post_forgets() from any thread; the rest under mu_).
    ControlMessages control_{config_.blob_capacity};
    std::atomic<uint64_t> lost_count_{0};     // lanes lost (lost_count())
    bool live_registered_ = false;              // listed in process_live_workers()
    std::unique_ptr<TraceRecorder> trace_;  // set when config_.trace; used under mu_
};

}  // namespace simpler
