// Worker: one level of the hierarchy as running processes — N next-level
// children (chips at level 3; next-level Workers above it, each running a
// Worker of its own in its process) and M sub-workers, forked before any
// thread exists, each fed through its own mailbox by whichever thread drives
// the lanes (see Threads).
//
// Life: construct (nothing runs) -> init() forks every child in a fixed order
// (chips, then sub-workers, then next-level Workers), then starts the child
// watcher and the scheduler thread -> submit()/wait() any number of times ->
// close(). What a child does with a task, with a forget of a freed buffer and
// with the install of a late callable, is the job of the handlers its factory
// makes inside the child (child_handlers.h), so a child owns what it builds
// there (an import registry, a chip runtime, a next-level Worker).
//
// Released buffers: from init() to close() the Worker is one of the process's
// live Workers (live_workers.h). A host buffer released while unfinished tasks
// name it is freed when the last of them finishes (hold_users() marks them;
// their holds go back to process_backing_retention() as they finish, and all
// of them at close()), and once it is freed every lane is sent a forget.
//
// Failure: a task's failure is data carried to wait(), which throws RunError
// carrying a FailureReport (failure_report.h: the task, the child, the cause's
// code and text, and a next-level Worker child's own report below it), after
// every other task has finished or been poisoned. A child that dies makes its in-flight task fail,
// poisons the work that needed it, and is never used again; the Worker stays
// usable for everything else (child_status() says what is left). close()
// stops every child (shutdown word, grace period, SIGKILL) and reaps it; the
// destructor closes. A child whose parent dies kills itself: it watches the
// owner process's pidfd from a thread of its own (ipc/child_process.h).
//
// Threads: submit() may be called from one orchestration thread at a time;
// wait_run() and take_finished_runs() from any thread, several at once (runs in
// flight: see end_run()). The mailboxes' parent halves are driven under the one engine mutex
// (held only for bookkeeping, never while waiting) by whichever thread makes
// progress: submit() collects finished results and publishes ready tasks to
// their free lanes at once; wait()
// collects results and dispatches what they release while it waits, and the
// scheduler thread does so only while no wait() is running (between, while
// the orchestration function is still submitting). Each hop through a thread
// is a hand-off, so this keeps a round trip to one hand-off each way.
// With config.trace, a TraceRecorder (trace.h) records when each task was
// submitted and each member published and collected, under that same mutex.
//
// Late callables: after init(), begin_install() sends a callable registered
// then (a chip orchestration or a sub-worker callable) to every child of its
// kind as an install message (child_handlers.h), which each child gets when
// its lane is free and handles before any later task; wait_install() drives
// the lanes until every such child has answered and returns the refusals,
// in child order.
// Their definitions are worker_install.cpp.
//
// Relay lanes: a next-level child on another host (a remote L3) has a lane
// like any other, served by a relay thread of this process instead of a forked
// child (WorkerConfig::relay_handler); when its child is lost the thread marks
// the mailbox's child exited, and the lane is lost with the relay's reason.
//
// Waiting: every waiter of a Worker follows WorkerConfig.spin — each child for
// its next task and wait() on the doorbell: spin for the budget, then
// sleep on a futex. With a zero budget nothing spins; while idle, nothing spins
// beyond one budget. The scheduler thread never spins: it sleeps on the
// doorbell, or, while a wait() drives, parks (re-checking every 1-16 ms).
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
// Definitions by concept: worker.cpp (options, init, submit, close, buffers),
// worker_lanes.cpp (driving the lanes), worker_runs.cpp (waits, runs, cancels),
// worker_status.cpp (status and losses below), worker_install.cpp,
// worker_windows.cpp.
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
#include "simpler/engine/progress.h"
#include "simpler/engine/status_channel.h"
#include "simpler/engine/task_handles.h"
#include "simpler/engine/trace.h"
#include "simpler/engine/window_memory.h"
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

// Tasks a chip's lane holds at once: the one it runs and up to three behind it,
// chained or ready (EngineConfig::chip_lane_depth; docs/internals/ipc.md,
// MailboxRing). Each slot's blob area is reserved, not touched, until used.
inline constexpr uint32_t CHIP_LANE_DEPTH = 4;

// Everything a Worker is built from: its options (each default is the
// initializer here and nowhere else) and its collaborators (handlers, hooks).
// The Python Worker fills one from its keywords (python/simpler/worker.py).
struct WorkerConfig {
    uint32_t level = 3;  // 3: a host (chips below); 4 to 8: a pod (Workers below); names hops in failure reports
    uint32_t num_chips = 0;
    uint32_t num_sub_workers = 0;
    uint32_t num_workers = 0;  // next-level Worker children (an L4's L3s); a Worker has chips or Workers, not both
    size_t blob_capacity = ipc::DEFAULT_BLOB_CAPACITY;
    ipc::SpinPolicy spin{};                         // every waiter's; a fixed budget is at most MAX_SPIN
    std::chrono::milliseconds task_timeout{0};      // per task; 0: none
    std::chrono::milliseconds close_grace{2000};    // before close() SIGKILLs a child
    ChildHandlerFactory chip_handler;               // empty: each chip child serves a ChipLane built from chip_lane
    ChipLaneConfig chip_lane;                       // the simulated chips (used when chip_handler is empty)
    uint64_t device_memory_bytes = DEFAULT_DEVICE_HEAP_BYTES;  // per chip, for alloc_device
    uint64_t window_heap_bytes = DEFAULT_WINDOW_HEAP_BYTES;    // per chip, for allocate_domain's windows
    bool record_edges = false;                      // keep every inferred edge (take_edge_log)
    size_t edge_log_capacity = DEFAULT_EDGE_LOG_CAPACITY;  // edges kept until taken; later ones are counted
    uint64_t max_unfinished = DEFAULT_MAX_UNFINISHED;  // see DEFAULT_MAX_UNFINISHED; 0: no limit
    // A chip task whose producers are in flight on other chips goes to its chip at once and waits there
    // (EngineConfig::cross_chip, on the Worker's LaneBoard); its task_timeout counts from when they are
    // collected. False (the default until it beats the parent path on METG: docs/benchmarks/cross-lane.md):
    // it waits here until they complete.
    bool chip_conditions = false;
    [[nodiscard]] bool cross_chip() const noexcept { return chip_conditions && num_chips > 1; }
    std::vector<std::string> sub_callable_names;    // by callable id, for error messages (chips: chip_lane's)
    ChildHandlerFactory sub_handler;                // required when num_sub_workers > 0; likewise
    ChildHandlerFactory worker_handler;             // required when num_workers > 0: runs a next-level Worker
    std::vector<std::string> worker_callable_names; // by callable id: the next-level Workers' orchestrations
    // The last num_relay_workers of the num_workers children live on other
    // hosts: nothing is forked for them; init() calls relay_handler(index) here
    // after the forks, and a relay thread serves each one's lane (RelayLane).
    uint32_t num_relay_workers = 0;
    RelayLaneFactory relay_handler;                 // required when num_relay_workers > 0
    // Consulted after the Worker's own device memory and this process's minter (see EngineConfig).
    std::function<std::optional<uint32_t>(const CanonicalIdentity&)> device_owner;
    std::function<std::string(const CanonicalIdentity&)> identity_problem;
    bool trace = false;                              // record a TraceRecorder timeline (see trace.h)
    size_t trace_capacity = DEFAULT_TRACE_CAPACITY;  // events kept; later ones are counted as dropped
    // This Worker's place in its tree ("L4/L3[0]"): device memory of chip i
    // carries the owner path "<path>/chip i". Empty: no path (id 0).
    std::string path;
    // Level 4: the chips of each local next-level child, by child index. The
    // Worker maps one window heap of window_heap_bytes per (child, chip) — a
    // member slot, numbered child by child — before it forks them, for
    // allocate_global_domain; global_window_child_names name the children in
    // messages ("L3[1]"). Empty: no global windows.
    std::vector<uint32_t> global_window_chips;
    std::vector<std::string> global_window_child_names;
    // Level 4: the device kind each such child's chips drive (empty: all
    // simulated); a global domain is refused a member on a child whose chips
    // drive another kind (their kernels reach only their own device memory).
    std::vector<chip::DeviceKind> global_window_devices;
    // A level-3 child of such a Worker: its parent's global windows (inherited
    // at the fork) and the slot of this Worker's chip 0 there. Its chips reach
    // the windows of global domains they are members of.
    std::shared_ptr<WindowMemory> global_windows;
    uint32_t global_window_slot = 0;

    static constexpr std::chrono::seconds MAX_SPIN{1};

    // Throws std::invalid_argument naming the field and the rule for an option
    // out of range: spin (0 <= budget <= MAX_SPIN, a valid SpinPolicy),
    // task_timeout and close_grace (>= 0), chip_lane.chip (ChipServiceConfig::
    // validate), num_chips and num_workers (not both above 0: the next level is
    // chips or Workers). The Worker constructor calls it first.
    void validate() const;
    // Whether every option equals other's; the collaborators (handlers and
    // hooks, which have no equality) are not compared.
    [[nodiscard]] bool same_options(const WorkerConfig& other) const;
};

// A child that refused an install (Worker::wait_install), and why.
struct InstallRefusal {
    ChildRef child;
    std::string why;
};

class Worker {
public:
    explicit Worker(WorkerConfig config);
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
    ~Worker();

    // Forks the children, then starts the threads. std::logic_error when called
    // twice or after close(); std::runtime_error when a fork fails (the children
    // already forked are stopped).
    void init();

    // Publishes a task (see EngineCore::submit), after await_room(); std::invalid_argument on
    // refusal (nothing recorded), std::logic_error before init() or after close().
    TaskHandle submit(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> members,
                      const TaskConfig& config);
    // How many tasks may go in now (WorkerConfig::max_unfinished; UINT64_MAX: no limit), and a wait
    // until one may, driving the lanes (std::logic_error when close() ends it). Every submit waits so first.
    [[nodiscard]] uint64_t room() const;
    void await_room();

    // N one-member tasks (tasks[i] alone is task i), each checked, inferred and
    // recorded exactly as tasks.size() submit() calls in order would be (edges
    // among the batch's own tasks too), all or none: every task is checked
    // first (submit's checks depend on the task, the children and the buffers,
    // not on the tasks before it), then every one is recorded, under one lock
    // and with no progress in between (a batch's children start once it is
    // recorded), after await_room(). A refusal returns which task and why, with nothing recorded
    // and `out` unchanged; otherwise `out` is the batch's handles (consecutive
    // ids, one run).
    struct BatchRefusal {
        size_t index = 0;
        std::string why;
    };
    std::optional<BatchRefusal> submit_many(TaskKind kind, uint64_t callable, BatchSource& tasks,
                                            const TaskConfig& config, TaskHandles& out);
    std::optional<BatchRefusal> submit_many(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> tasks,
                                            const TaskConfig& config, TaskHandles& out) {
        SpanBatch batch(tasks);
        return submit_many(kind, callable, batch, config, out);
    }

    // Waits (spin, then futex) until every submitted task has finished or been poisoned; throws
    // RunError for the first failure since the last wait() (and clears it). Returning or
    // throwing ends the run: later submits carry the next run number (TaskHandle::run).
    // close() from another thread ends the wait at once with a RunError naming
    // the tasks that had not finished.
    void wait() { (void)wait_until(ipc::NO_DEADLINE); }
    // wait(), giving up at `until`: false when tasks are still unfinished then
    // (the run goes on; wait again or cancel_run()), true when wait() would have returned.
    bool wait_until(ipc::Deadline until);

    // Ends the run early (Ctrl-C in the run's wait): every task not yet
    // dispatched is poisoned with `why` and never runs, the run's failure is
    // forgotten, and the next submit starts a new run. A task waiting on a
    // chip's lane that the chip has not begun is withdrawn and never runs
    // either. Tasks a child has begun are not stopped: they finish there (or
    // hit task_timeout), and the next wait() waits for them too. Returns what
    // it did, in words (for the user); nothing when the Worker is closed.
    std::string cancel_run(const std::string& why);

    // Per-run waiting, for several runs in flight at once. A run is the tasks
    // submitted between two end_run() calls; one thread at a time submits
    // (runs are built one after another), any thread may wait.
    //
    // Ends the run being submitted and returns its number. `collected`: its
    // outcome is reported by take_finished_runs(), not by wait_run().
    uint64_t end_run(bool collected);
    // Waits (driving the lanes, as wait() does) until run `run` has finished:
    // it has ended and every task of it has finished or been poisoned, and so
    // has every task an earlier cancelled run left on a child. Then forgets
    // the run and returns true, or throws RunError naming its first failure (a
    // task of it poisoned by another run's failure names that one too). False
    // at `until` while it has not finished. close() ends the wait with a
    // RunError naming the run's tasks that had not finished. std::logic_error
    // for a run not ended, or already reported.
    bool wait_run(uint64_t run, ipc::Deadline until);
    // Ends a run early, as cancel_run(why) does, for run `run` only: its tasks
    // not yet started never run (nor what depends on them, in any run).
    std::string cancel_run(uint64_t run, const std::string& why);
    // The collected runs that finished, each with its outcome: no failure for
    // success, else the report wait_run() would throw; each is then forgotten.
    // Blocks (asleep, on a condition variable; the lanes are driven by the
    // other threads) until at least one has finished, or until `until`. Once
    // the Worker is closed it returns every collected run left, unfinished
    // ones with the close() error, and `closed` true.
    struct RunOutcome {
        uint64_t run;
        std::optional<FailureReport> failure;
    };
    struct FinishedRuns {
        std::vector<RunOutcome> runs;
        bool closed = false;
    };
    FinishedRuns take_finished_runs(ipc::Deadline until);

    // Stops every child and thread; idempotent, and a close() racing another
    // returns when the first has finished. Unstarted tasks are poisoned.
    // Device memory still allocated is dropped with the chips, and released
    // host buffers that only this Worker's unfinished tasks held are freed. In a process
    // forked from the one that built the Worker (user code calling fork()), it
    // touches nothing the owner shares (mailboxes, children, threads): it only
    // marks this copy closed, and the destructor then lets go of the copy's
    // handles without stopping or reaping anything.
    void close() noexcept;

    // Device memory (DEVICE_MALLOC) on chip `chip`, usable by tasks on that
    // chip only; see device_memory.h for the errors.
    DeviceBacking alloc_device(uint32_t chip, uint64_t nbytes, AccessMode access = AccessMode::READWRITE);
    // Refuses the block at submit from now on and frees it once every task
    // submitted before this call has finished.
    void release_device(const CanonicalIdentity& id);
    [[nodiscard]] std::optional<uint32_t> device_owner(const CanonicalIdentity& id) const;
    // A communication domain: a symmetric window on each chip of `workers`
    // (rank order) holding `buffers`; see window_memory.h for the checks and
    // errors. A chip lost since init() may not join. A name whose domain was
    // released is taken until its windows are freed: this waits (driving the
    // lanes) for the tasks submitted before that release, bounded by their
    // task_timeout.
    WindowDomain allocate_domain(const std::string& name, const std::vector<uint32_t>& workers, uint64_t window_size,
                                 const std::vector<WindowBufferSpec>& buffers);
    // Refuses the domain's buffers at submit from now on and frees its windows
    // once every task submitted before this call has finished; then every
    // chip forgets the buffers (forget()).
    void release_domain(uint64_t id);
    // Level 4: a domain across chips of its local children, `slots` the member
    // slots (WorkerConfig::global_window_chips) in rank order; as
    // allocate_domain otherwise. A child lost since init() may not join.
    // std::invalid_argument when this Worker has no global windows.
    WindowDomain allocate_global_domain(const std::string& name, const std::vector<uint32_t>& slots,
                                        uint64_t window_size, const std::vector<WindowBufferSpec>& buffers);
    void release_global_domain(uint64_t id);
    // The global windows this Worker carves (level 4) or inherited (level 3); null: none.
    [[nodiscard]] std::shared_ptr<WindowMemory> global_windows() const noexcept { return global_windows_; }

    // Queues a forget of these identities to every lane of this Worker
    // (child_handlers.h): an idle lane gets it at once, a busy one when its
    // task is back, and the engine hands the lane no task until the child has
    // answered it. The process's frees send it to every live Worker
    // (live_workers.h). Ignored after close() and in a forked copy.
    void forget(std::span<const CanonicalIdentity> identities);
    // Installs callable `callable`, the next id of `kind`'s table (a chip
    // orchestration or a sub-worker callable), named `name` in errors from now
    // on, in every child of `kind` not lost: an install message carrying
    // `payload`, which an idle child gets at once and a busy one when its task
    // is back, before any later task. Returns the ticket wait_install() takes.
    // std::invalid_argument for another id, ChildKind::WORKER (next-level
    // Workers take no late callables) or a message the mailbox cannot hold;
    // std::logic_error before init(), after close() and in a forked copy.
    uint64_t begin_install(ChildKind kind, uint64_t callable, const std::string& name,
                           std::span<const std::byte> payload);
    // Drives the lanes until every child the install went to has answered it,
    // giving up at `until` (nullopt: not yet; the install goes on, wait again).
    // Returns the children that refused it, with why: a refusal, or a child
    // that died with the install on it; a child lost before the install reached
    // it is not listed (it runs nothing any more). std::logic_error for a
    // ticket not pending, and when close() ends the wait.
    std::optional<std::vector<InstallRefusal>> wait_install(uint64_t ticket, ipc::Deadline until);
    // Stops tracking install `ticket` (its waiter gave up, e.g. on Ctrl-C): the
    // children still install it; their answers are dropped. Nothing for a
    // ticket not pending.
    void abandon_install(uint64_t ticket);
    // Marks every unfinished task naming `id` as holding it for a release
    // (backing_retention.h: retains each one); they release it when they finish.
    void hold_users(const CanonicalIdentity& id);
    // The edges inferred since the last call (WorkerConfig::record_edges), and clears them.
    [[nodiscard]] EdgeLog take_edge_log();
    [[nodiscard]] DeviceMemory& device_memory() noexcept { return *device_; }
    [[nodiscard]] WindowMemory& window_memory() noexcept { return *windows_; }

    [[nodiscard]] bool initialized() const noexcept { return initialized_; }
    // False in a process forked from the one that built this Worker: every entry
    // point that would drive the children refuses there (std::logic_error).
    [[nodiscard]] bool in_owner_process() const noexcept;
    [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
    // One ChildStatus per child, lane by lane (a relay lane too).
    [[nodiscard]] std::vector<ChildStatus> child_states() const;
    // child_states() as lines: "chip 0: usable" / "chip 1: lost (child killed
    // by signal 9 ...)"; a next-level Worker child that lost children below it:
    // "worker 0: usable; lost below it: chip 1: lost (...)" (below_status.h).
    [[nodiscard]] std::vector<std::string> child_status() const;
    // The channel that says when the children's status changed (a child lost
    // here or below a child); closed with the Worker (status_channel.h).
    [[nodiscard]] uint64_t status_channel() const noexcept { return status_->id(); }
    // The pids of the forked children, lane by lane (a relay lane has none).
    [[nodiscard]] std::vector<pid_t> child_pids() const;
    // The device chip `chip` opened, as the chip child tells it
    // (chip_facts_page.h), waiting while the chip is still starting.
    // std::logic_error before init() or after close(); std::out_of_range for
    // no such chip; std::runtime_error when it could not start, or was lost first.
    [[nodiscard]] chip::DeviceFacts device_facts(uint32_t chip);
    // What has been submitted, finished and is running, child by child (progress.h).
    [[nodiscard]] WorkerProgress progress() const;
    // Children lost since init(): read without the engine mutex, so a caller
    // can notice a loss cheaply after every run.
    [[nodiscard]] uint64_t lost_count() const noexcept { return lost_count_.load(std::memory_order_acquire); }
    [[nodiscard]] const WorkerConfig& config() const noexcept { return config_; }

    // The timeline recorded so far (empty unless config().trace), copied under
    // the lock; members still in flight are not in it yet.
    [[nodiscard]] std::vector<TraceEvent> trace_events() const;
    [[nodiscard]] size_t trace_dropped() const;
    void trace_clear();

private:
    struct QueuedInstall {
        uint64_t ticket;
        std::shared_ptr<const std::vector<std::byte>> blob;  // one per install, shared by its lanes
    };
    struct InstallState {
        size_t pending = 0;  // lanes yet to answer
        std::vector<InstallRefusal> refused;
    };
    struct Lane {
        ChildRef ref;
        // A chip's lane holds CHIP_LANE_DEPTH tasks (the one it runs, then
        // chained or ready ones); every other lane one.
        std::unique_ptr<ipc::MailboxRing> mailbox;
        ipc::ChildProcess child;
        std::deque<Dispatch> in_flight;  // on the child, in publish order
        std::vector<CanonicalIdentity> forgets;  // queued for the child, oldest first
        std::deque<QueuedInstall> installs;      // queued for the child, oldest first
        bool control_in_flight = false;          // a forget or install message is on the child
        uint64_t install_on_child = 0;           // the install ticket on the child (0: none, or a forget)
        std::deque<Dispatch> held;               // taken for this lane while a forget was on it, in order
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
    // Queues the forget inbox on every lane and sends it to the idle ones.
    void deliver_forgets_locked();
    void publish_forget_locked(size_t lane);
    // After a control message's answer: the lane's next forget, else its next
    // install, else the task held for it.
    void publish_next_control_locked(size_t lane);
    // Sends its next install to each idle lane that has one queued.
    void deliver_installs_locked();
    void publish_install_locked(size_t lane);
    // A lane's answer to install `ticket` (`why` empty: installed).
    void finish_install_locked(uint64_t ticket, ChildRef child, const std::string& why);
    // lose_lane_locked's part for installs: queued ones are dropped, one on the child is refused.
    void drop_installs_locked(Lane& l);
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
    ipc::SharedWord drive_word_{0, 0};       // bumped on close() to unpark the scheduler thread
    std::atomic<int> driving_{0};            // waits driving the lanes; the scheduler thread stands down
    std::condition_variable runs_cv_;        // take_finished_runs()'s, with mu_
    std::shared_ptr<StatusChannel> status_ = StatusChannel::create();  // status_channel()
    ipc::SpinWaiter wait_waiter_;  // the waits' (wait(), wait_run()), one at a time: wait_waiter_mu_
    // A publish since the last wait had to wake its child (guarded by mu_): the
    // next wait covers the child's wake-up (spin_wait.h).
    bool woke_child_ = false;
    std::mutex wait_waiter_mu_;
    EngineCore core_;
    pid_t owner_pid_ = ipc::current_process_id();  // the process that built the Worker; only it drives the children
    bool stopping_ = false;
    bool initialized_ = false;
    std::atomic<bool> closed_{false};  // written under mu_; read without it by the entry points' checks
    std::vector<Dispatch> batch_;
    std::vector<CanonicalIdentity> unheld_;     // scratch for release_holds_locked
    std::vector<std::byte> forget_blob_;        // scratch for publish_forget_locked
    std::mutex forget_mu_;                      // a leaf: guards forget_inbox_ only
    std::vector<CanonicalIdentity> forget_inbox_;  // forget() -> the lanes, at the next progress
    std::atomic<bool> forget_posted_{false};    // forget_inbox_ may be non-empty
    std::atomic<uint64_t> lost_count_{0};     // lanes lost (lost_count())
    size_t lanes_forgetting_ = 0;               // lanes with forgets queued (under mu_)
    std::unordered_map<uint64_t, InstallState> installs_;  // by ticket, until wait_install returns (under mu_)
    uint64_t next_install_ = 1;                  // the next install ticket (under mu_)
    size_t lanes_installing_ = 0;                // lanes with installs queued (under mu_)
    bool live_registered_ = false;              // listed in process_live_workers()
    std::unique_ptr<TraceRecorder> trace_;  // set when config_.trace; used under mu_
};

}  // namespace simpler
