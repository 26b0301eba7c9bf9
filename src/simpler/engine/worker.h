// Worker: one level of the hierarchy as running processes — N next-level children (chips at level
// 3; next-level Workers above it, each running a Worker of its own) and M sub-workers, forked
// before any thread exists, each fed through its own mailbox. This header is its API; the
// machinery (lanes, control messages, run waits, threads) is Worker::Impl, declared in
// engine/internal/worker_impl.h, which is not installed.
//
// Life: construct (nothing runs) -> init() forks the children (chips, then sub-workers, then
// next-level Workers) and starts the threads -> submit()/wait() any number of times -> close().
// What a child does with a message is the job of the handlers its factory makes inside the child
// (child_handlers.h): a child owns what it builds there (a chip runtime, a next-level Worker).
//
// Failure: a task's failure is data carried to wait(), which throws RunError carrying a
// FailureReport (failure_report.h), after every other task has finished or been poisoned. A child
// that dies fails its in-flight task, poisons the work that needed it, and is never used again;
// the Worker stays usable for everything else (child_status()). close() stops every child
// (shutdown word, grace period, SIGKILL); the destructor closes. A child whose parent dies kills
// itself (it watches the owner's pidfd).
//
// Threads: submit() from one orchestration thread at a time; wait_run() and take_finished_runs()
// from any thread, several at once (see end_run()). Every waiter follows WorkerConfig::spin: spin
// for the budget, then sleep on a futex.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "simpler/chip/device.h"
#include "simpler/engine/batch_source.h"
#include "simpler/engine/child_ref.h"
#include "simpler/engine/child_status.h"
#include "simpler/engine/device_memory.h"
#include "simpler/engine/edge_log.h"
#include "simpler/engine/failure_report.h"
#include "simpler/engine/ids.h"
#include "simpler/engine/progress.h"
#include "simpler/engine/task_config.h"
#include "simpler/engine/task_handle.h"
#include "simpler/engine/task_handles.h"
#include "simpler/engine/trace_event.h"
#include "simpler/engine/window_memory.h"
#include "simpler/engine/worker_config.h"
#include "simpler/task_interface/task_args_wire.h"  // TaskArgs, what a MemberSubmit names

namespace simpler {

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

    // Forks the children, then starts the threads. std::logic_error when called twice or after
    // close(); std::runtime_error when a fork fails (the children already forked are stopped).
    void init();

    // Publishes a task (see EngineCore::submit), after await_room(); std::invalid_argument on
    // refusal (nothing recorded), std::logic_error before init() or after close().
    TaskHandle submit(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> members,
                      const TaskConfig& config);
    // How many tasks may go in now (WorkerConfig::max_unfinished; UINT64_MAX: no limit), and a wait
    // until one may, driving the lanes (std::logic_error when close() ends it); submit waits first.
    [[nodiscard]] uint64_t room() const;
    void await_room();

    // N one-member tasks (tasks[i] alone is task i), each checked, inferred and recorded exactly as
    // tasks.size() submit() calls in order would be (edges among the batch's own tasks too), all or
    // none: every task is checked first (submit's checks depend on the task, the children and the
    // buffers, not on the tasks before it), then every one is recorded, under one lock and with no
    // progress in between (a batch's children start once it is recorded), after await_room(). A
    // refusal returns which task and why, with nothing recorded and `out` unchanged; otherwise
    // `out` is the batch's handles (consecutive ids, one run).
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
    // RunError for the first failure since the last wait() (and clears it). Returning or throwing
    // ends the run: later submits carry the next run number (TaskHandle::run). close() from another
    // thread ends the wait at once with a RunError naming the tasks that had not finished.
    void wait() { (void)wait_until(ipc::NO_DEADLINE); }
    // wait(), giving up at `until`: false when tasks are still unfinished then (the run goes on;
    // wait again or cancel_run()), true when wait() would have returned.
    bool wait_until(ipc::Deadline until);

    // Ends the run early (Ctrl-C in the run's wait): every task not yet dispatched is poisoned with
    // `why` and never runs, the run's failure is forgotten, and the next submit starts a new run. A
    // task waiting on a chip's lane that the chip has not begun is withdrawn and never runs either.
    // Tasks a child has begun are not stopped: they finish there (or hit task_timeout), and the
    // next wait() waits for them too. Returns what it did, in words (for the user); nothing when
    // the Worker is closed.
    std::string cancel_run(const std::string& why);

    // Per-run waiting, for several runs in flight at once. A run is the tasks submitted between two
    // end_run() calls; one thread at a time submits, any thread may wait.
    //
    // Ends the run being submitted and returns its number. `collected`: its outcome is reported by
    // take_finished_runs(), not by wait_run().
    uint64_t end_run(bool collected);
    // Waits (driving the lanes, as wait() does) until run `run` has finished: it has ended and
    // every task of it has finished or been poisoned, and so has every task an earlier cancelled
    // run left on a child. Then forgets the run and returns true, or throws RunError naming its
    // first failure (a task of it poisoned by another run's failure names that one too). False at
    // `until` while it has not finished. close() ends the wait with a RunError naming the run's
    // tasks that had not finished. std::logic_error for a run not ended, or already reported.
    bool wait_run(uint64_t run, ipc::Deadline until);
    // Ends a run early, as cancel_run(why) does, for run `run` only: its tasks not yet started
    // never run (nor what depends on them, in any run).
    std::string cancel_run(uint64_t run, const std::string& why);
    // The collected runs that finished, each with its outcome: no failure for success, else the
    // report wait_run() would throw; each is then forgotten. Blocks (asleep, on a condition
    // variable; the lanes are driven by the other threads) until at least one has finished, or
    // until `until`. Once the Worker is closed it returns every collected run left, unfinished ones
    // with the close() error, and `closed` true.
    struct RunOutcome {
        uint64_t run;
        std::optional<FailureReport> failure;
    };
    struct FinishedRuns {
        std::vector<RunOutcome> runs;
        bool closed = false;
    };
    FinishedRuns take_finished_runs(ipc::Deadline until);

    // Stops every child and thread; idempotent, and a close() racing another returns when the first
    // has finished. Unstarted tasks are poisoned. Device memory still allocated is dropped with the
    // chips, and released host buffers that only this Worker's unfinished tasks held are freed. In
    // a process forked from the one that built the Worker (user code calling fork()), it touches
    // nothing the owner shares (mailboxes, children, threads): it only marks this copy closed, and
    // the destructor then lets go of the copy's handles without stopping or reaping anything.
    void close() noexcept;

    // Device memory (DEVICE_MALLOC) on chip `chip`, usable by tasks on that chip only; see
    // device_memory.h for the errors.
    DeviceBacking alloc_device(uint32_t chip, uint64_t nbytes, AccessMode access = AccessMode::READWRITE);
    // Refuses the block at submit from now on and frees it once every task submitted before this
    // call has finished.
    void release_device(const CanonicalIdentity& id);
    [[nodiscard]] std::optional<uint32_t> device_owner(const CanonicalIdentity& id) const;
    // A communication domain: a symmetric window on each chip of `workers` (rank order) holding
    // `buffers`; see window_memory.h for the checks and errors. A chip lost since init() may not
    // join. A name whose domain was released is taken until its windows are freed: this waits
    // (driving the lanes) for the tasks submitted before that release, bounded by their
    // task_timeout.
    WindowDomain allocate_domain(const std::string& name, const std::vector<uint32_t>& workers, uint64_t window_size,
                                 const std::vector<WindowBufferSpec>& buffers);
    // Refuses the domain's buffers at submit from now on and frees its windows once every task
    // submitted before this call has finished; then every chip forgets the buffers (forget()).
    void release_domain(uint64_t id);
    // Level 4: a domain across chips of its local children, `slots` the member slots
    // (WorkerConfig::global_window_chips) in rank order; as allocate_domain otherwise. A child lost
    // since init() may not join. std::invalid_argument when this Worker has no global windows.
    WindowDomain allocate_global_domain(const std::string& name, const std::vector<uint32_t>& slots,
                                        uint64_t window_size, const std::vector<WindowBufferSpec>& buffers);
    void release_global_domain(uint64_t id);
    // The global windows this Worker carves (level 4) or inherited (level 3); null: none.
    [[nodiscard]] std::shared_ptr<WindowMemory> global_windows() const noexcept;

    // Queues a forget of these identities to every lane of this Worker (child_handlers.h): an idle
    // lane gets it at once, a busy one when its task is back, and the engine hands the lane no task
    // until the child has answered it. The process's frees send it to every live Worker
    // (live_workers.h). Ignored after close() and in a forked copy.
    void forget(std::span<const CanonicalIdentity> identities);
    // Installs callable `callable`, the next id of `kind`'s table (a chip orchestration or a
    // sub-worker callable), named `name` in errors from now on, in every child of `kind` not lost:
    // an install message carrying `payload`, which an idle child gets at once and a busy one when
    // its task is back, before any later task. Returns the ticket wait_install() takes.
    // std::invalid_argument for another id, ChildKind::WORKER (next-level Workers take no late
    // callables) or a message the mailbox cannot hold; std::logic_error before init(), after
    // close() and in a forked copy.
    uint64_t begin_install(ChildKind kind, uint64_t callable, const std::string& name,
                           std::span<const std::byte> payload);
    // Drives the lanes until every child the install went to has answered it, giving up at `until`
    // (nullopt: not yet; the install goes on, wait again). Returns the children that refused it,
    // with why: a refusal, or a child that died with the install on it; a child lost before the
    // install reached it is not listed (it runs nothing any more). std::logic_error for a ticket
    // not pending, and when close() ends the wait.
    std::optional<std::vector<InstallRefusal>> wait_install(uint64_t ticket, ipc::Deadline until);
    // Stops tracking install `ticket` (its waiter gave up, e.g. on Ctrl-C): the children still
    // install it; their answers are dropped. Nothing for a ticket not pending.
    void abandon_install(uint64_t ticket);
    // Marks every unfinished task naming `id` as holding it for a release (backing_retention.h:
    // retains each one); they release it when they finish.
    void hold_users(const CanonicalIdentity& id);
    // The edges inferred since the last call (WorkerConfig::record_edges), and clears them.
    [[nodiscard]] EdgeLog take_edge_log();
    [[nodiscard]] DeviceMemory& device_memory() noexcept;
    [[nodiscard]] WindowMemory& window_memory() noexcept;

    [[nodiscard]] bool initialized() const noexcept;
    // False in a process forked from the one that built this Worker: every entry point that would
    // drive the children refuses there (std::logic_error).
    [[nodiscard]] bool in_owner_process() const noexcept;
    [[nodiscard]] bool closed() const noexcept;
    // One ChildStatus per child, lane by lane (a relay lane too).
    [[nodiscard]] std::vector<ChildStatus> child_states() const;
    // child_states() as lines: "chip 0: usable" / "chip 1: lost (child killed by signal 9 ...)"; a
    // next-level Worker child that lost children below it: "worker 0: usable; lost below it: chip
    // 1: lost (...)" (below_status.h).
    [[nodiscard]] std::vector<std::string> child_status() const;
    // The channel that says when the children's status changed (a child lost here or below a
    // child); closed with the Worker (status_channel.h).
    [[nodiscard]] uint64_t status_channel() const noexcept;
    // The pids of the forked children, lane by lane (a relay lane has none).
    [[nodiscard]] std::vector<pid_t> child_pids() const;
    // The device chip `chip` opened, as the chip child tells it (chip_facts_page.h), waiting while
    // the chip is still starting. std::logic_error before init() or after close();
    // std::out_of_range for no such chip; std::runtime_error when it could not start, or was lost
    // first.
    [[nodiscard]] chip::DeviceFacts device_facts(uint32_t chip);
    // What has been submitted, finished and is running, child by child (progress.h).
    [[nodiscard]] WorkerProgress progress() const;
    // Children lost since init(): read without the engine mutex, so a caller can notice a loss
    // cheaply after every run.
    [[nodiscard]] uint64_t lost_count() const noexcept;
    [[nodiscard]] const WorkerConfig& config() const noexcept;

    // The timeline recorded so far (empty unless config().trace), copied under the lock; members
    // still in flight are not in it yet.
    [[nodiscard]] std::vector<TraceEvent> trace_events() const;
    [[nodiscard]] size_t trace_dropped() const;
    void trace_clear();

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace simpler
