// EngineCore: one Worker's graph state — the submit path (checks, dependency
// inference, publication) and the completion path (release, failure poisoning)
// over the DependencyTracker, the TaskGraph and the DispatchQueue. No processes
// and no threads: the Worker calls every member (submit, take,
// member_finished) under its one engine mutex, from whichever thread makes
// progress: submit(), wait(), or the scheduler thread while no wait() runs.
//
// Submit snapshots each member's arguments as an argument blob, so a TaskArgs
// changed after submit changes nothing, and gives each NEXT_LEVEL member its own
// copy of the call config carrying the member's write mask (task_config.h). A refused submit throws
// std::invalid_argument naming the task, member, argument, buffer and rule, and
// records nothing anywhere.
//
// Collaborators that only the owner of the buffers knows (which chip owns a
// DEVICE backing, whether an identity is stale) are injected through
// EngineConfig; without them a DEVICE tensor is refused and every identity is
// taken as live.
//
// Definitions by concept: engine_core.cpp (records, take, completion, holds,
// releases, a child lost, abandon), engine_submit.cpp (the submit path),
// engine_runs.cpp (runs: failures, ends, collection, cancel), engine_chain.cpp
// (a chip's lane: chained dispatch, a ready task behind the one it runs).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "simpler/deps/dependency_tracker.h"
#include "simpler/deps/task_table.h"
#include "simpler/engine/batch_source.h"
#include "simpler/engine/child_ref.h"
#include "simpler/engine/dispatch_queue.h"
#include "simpler/engine/edge_log.h"
#include "simpler/engine/failure_report.h"
#include "simpler/engine/ids.h"
#include "simpler/engine/task_config.h"
#include "simpler/engine/task_graph.h"
#include "simpler/engine/task_handle.h"
#include "simpler/task_interface/task_args_wire.h"

namespace simpler {

struct EngineConfig {
    ChildCounts children{};                  // per ChildKind
    ChildKind next_level = ChildKind::CHIP;  // the kind of child NEXT_LEVEL members run on
    // The tracker's settings; record_explanations is record_edges', and
    // validate_tensors is false: every tensor of a member is in a TaskArgs,
    // which validated it when it was added (TaskArgs::add_tensor, the only
    // way in), so the tracker does not validate it a second time.
    TrackerConfig tracker{};
    // The chip that owns a DEVICE backing, or nullopt when unknown.
    std::function<std::optional<uint32_t>(const CanonicalIdentity&)> device_owner;
    // Empty when the identity is live; else why it is refused (e.g. its generation is stale).
    std::function<std::string(const CanonicalIdentity&)> identity_problem;
    // Empty when the descriptor is one its owner handed out (or not this
    // process's to judge); else why it is refused (a forged identity or
    // grant). Asked once per distinct descriptor of a member, before
    // identity_problem.
    std::function<std::string(const BufferDescriptor&)> descriptor_problem;
    // For a VMM_WINDOW tensor: nullopt when the descriptor is no window
    // buffer of this Worker (nor of the global windows it sees); else empty
    // when a member on `target` may name it, or why not (`who` names the target).
    std::function<std::optional<std::string>(const BufferDescriptor&, ChildRef, const std::string&)> window_problem;
    // Keep every inferred edge with its explanation (take_edge_log()); off, the
    // tracker records none (tracker.record_explanations is overridden).
    bool record_edges = false;
    size_t edge_log_capacity = DEFAULT_EDGE_LOG_CAPACITY;  // edges kept until taken; later ones are counted
    // Tasks a chip's lane holds at once (its MailboxRing's depth). Above 1, a
    // one-member chip task whose only unfinished producers are one-member
    // tasks in flight on that same chip is handed to the chip behind them
    // (chained dispatch, engine_chain.cpp) instead of waiting for them here,
    // and a ready task naming a busy chip goes to its lane behind what it runs.
    uint32_t chip_lane_depth = 1;
    // With chip_lane_depth above 1: a chained task's producers may also be
    // in flight on other chips' lanes (up to Dispatch::MAX_LANE_PRODUCERS, each
    // on a lane `lane_open` allows), named in Dispatch::lane_producers; its
    // chip waits for them (the Worker's LaneBoard). A failure that poisons
    // such a task asks `withdraw` to take it off its lane first.
    bool cross_chip = false;
    std::function<bool(TaskId, ChildRef)> withdraw;
};

// One member ready to be written to one child's mailbox.
struct Dispatch {
    TaskHandle task;
    TaskKind kind;
    uint32_t member;
    ChildRef child;
    uint64_t callable;
    std::span<const std::byte> blob;  // valid until the member is reported finished
    const TaskConfig* config;
    // Chained dispatch: bit i-1 names the task dispatched i before this one to
    // the same chip, a producer still in flight there (the chip runs this one
    // after it, and skips it if it failed). 0: nothing of this task is in flight.
    uint32_t after_mask = 0;
    // Cross-chip chained dispatch: its producers still in flight on other
    // chips' lanes (the chip waits for each there; EngineConfig::cross_chip).
    // The engine names each by chip and task; the Worker, as it publishes
    // this task, keeps only those it waits for (a condition each).
    struct LaneProducer {
        uint32_t chip = 0;
        TaskId task = 0;
    };
    static constexpr uint32_t MAX_LANE_PRODUCERS = 4;  // a mailbox frame's conditions (ipc::MAX_LANE_CONDITIONS)
    std::array<LaneProducer, MAX_LANE_PRODUCERS> lane_producers{};
    uint32_t lane_producer_count = 0;
    [[nodiscard]] std::span<const LaneProducer> producers_elsewhere() const noexcept {
        return {lane_producers.data(), lane_producer_count};
    }
    // Worker: a cancel withdrew it from its chip's lane before the chip began it
    // (poisoned; the lane's SKIPPED answer is awaited, not reported).
    bool withdrawn = false;
};

// The task of a batch check_batch() refused (its index in the batch) and why.
struct BatchCheckRefusal {
    size_t index;
    std::string message;
};

// The last few descriptors the owner passed (descriptor_problem and
// identity_problem both said nothing), compared field by field: no hashing,
// a bounded cost per argument. A batch of tiles over a handful of buffers asks
// the owner once per buffer; more distinct buffers than it keeps are asked
// again when they come back after others.
class PassedDescriptors {
public:
    static constexpr size_t KEPT = 8;
    [[nodiscard]] bool contains(const BufferDescriptor& d) const noexcept {
        for (size_t i = 0; i < count_; ++i)
            if (kept_[i] == d) return true;
        return false;
    }
    void add(const BufferDescriptor& d) noexcept {
        kept_[next_] = d;
        next_ = (next_ + 1) % KEPT;
        count_ = count_ < KEPT ? count_ + 1 : KEPT;
    }
    void clear() noexcept { count_ = next_ = 0; }

private:
    std::array<BufferDescriptor, KEPT> kept_{};
    size_t count_ = 0;
    size_t next_ = 0;
};

// Why run() fails: the first task that failed, where, and what it poisoned.
struct RunFailure {
    TaskHandle task;
    TaskKind kind;
    uint64_t callable;
    uint32_t member;
    MemberTarget where;  // the child it ran on, or would have run on
    MemberFault fault;
    // Set when `task` was not run because a task of another run failed: that
    // task's failure (its `cause` is empty).
    std::shared_ptr<const RunFailure> cause;
};

// One run's bookkeeping (a run: the tasks submitted between two end_run()
// calls). Several runs may be in flight; each counts its own unfinished tasks
// and keeps its own first failure, so each is waited for and reported alone.
struct RunState {
    size_t unfinished = 0;     // its tasks submitted and not finished
    bool ended = false;        // end_run() was called: no task joins it any more
    bool collected = false;    // its outcome goes to Worker::take_finished_runs, not to wait_run
    bool cancelled = false;    // cancel_run(): forgotten once its tasks on children are back
    std::optional<RunFailure> first_failure;  // its first task that failed or was not run
    size_t poisoned = 0;       // its tasks not run because a task they needed failed
    std::vector<TaskId> failed_kept;  // its FAILED / POISONED tasks, retired when it is forgotten

    // The state of a run just begun, keeping failed_kept's capacity (a forgotten
    // run's node is reused: EngineCore::run_of).
    void reset() noexcept {
        unfinished = 0;
        ended = collected = cancelled = false;
        first_failure.reset();
        poisoned = 0;
        failed_kept.clear();
    }
};

class EngineCore {
public:
    explicit EngineCore(EngineConfig config);

    // Checks, infers edges, records the node and queues it if ready; returns its
    // handle. Throws std::invalid_argument (nothing recorded) on refusal.
    // checked: check_submit() passed these members as this task with nothing
    // changed since (no child lost, no buffer released): neither the engine's
    // rules nor the tracker's checks are run again (both depend on the members,
    // the children and the buffers, not on the tasks submitted in between).
    TaskHandle submit(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> members, const TaskConfig& config,
                      bool checked = false);
    // Every check submit() would make of these members as task `task` (the
    // engine's rules and the tracker's), throwing what it would refuse with;
    // records nothing. Submit checks depend on the members and on the
    // Worker's children and buffers, not on the tasks live: a task that passes
    // here passes submit() as long as no child is lost and no buffer released
    // in between (Worker::submit_many checks a whole batch so, then submits
    // each with checked=true).
    void check_submit(TaskId task, TaskKind kind, std::span<const MemberSubmit> members);
    // check_submit() of every tasks[i] (one member each) as task first + i, in
    // order, stopping at the first refusal: its index and message. The
    // owner's verdict on a buffer is asked once per distinct descriptor of the
    // batch (recent ones: see PassedDescriptors), not once per argument; the
    // caller holds what the verdicts depend on still (Worker::submit_many: the
    // engine's lock, no progress in between). Records nothing.
    // `also`, when given, is asked about each task first (its refusal, or an
    // empty string): the caller's own rules, in the same pass.
    using BatchRule = std::function<std::string(const MemberSubmit&)>;
    std::optional<BatchCheckRefusal> check_batch(TaskId first, TaskKind kind, BatchSource& tasks,
                                                 const BatchRule& also = {});
    std::optional<BatchCheckRefusal> check_batch(TaskId first, TaskKind kind, std::span<const MemberSubmit> tasks) {
        SpanBatch batch(tasks);
        return check_batch(first, kind, batch);
    }
    // The id the next submit gets.
    [[nodiscard]] TaskId next_task_id() const noexcept { return next_task_; }

    // Whether a chip's lane may take a task behind the one it runs now (the
    // Worker: no control message of that lane waits for it to empty).
    using LaneOpen = std::function<bool(ChildRef)>;
    // Appends every member that can be dispatched now; their children are busy
    // until member_finished(). With chip_lane_depth above 1, a ready task for a
    // busy chip also goes to the chip's lane behind what it runs, where
    // `lane_open` (when given) allows it (take_behind).
    void take(std::vector<Dispatch>& out, const LaneOpen& lane_open = {});

    // Reports one dispatched member finished (fault.failed() false on
    // success). A task finishes when all its members have; its first failing
    // member fails it and poisons every task after it.
    void member_finished(const Dispatch& d, const MemberFault& fault);

    // A child is gone for good: nothing is dispatched to it again, every
    // unstarted task that needs it is poisoned with `why`, and a later submit
    // that needs it is refused.
    void child_lost(ChildRef child, const std::string& why);
    // Per child of `kind`: why it was lost (empty: it is not).
    [[nodiscard]] const std::vector<std::string>& lost_why(ChildKind kind) const noexcept {
        return lost_[static_cast<size_t>(kind)];
    }

    // Asked by cancel_run and abandon for each chained task they would cancel
    // (on its chip already, behind producers still in flight there): whether
    // its lane withdrew it before the chip started it. One withdrawn is
    // cancelled like a task not yet dispatched (the lane answers it SKIPPED,
    // and that answer is ignored); one not withdrawn stays, and finishes as
    // any dispatched task does.
    using Withdraw = std::function<bool(TaskId, ChildRef)>;

    // Poisons every task not yet dispatched (the Worker is closing or a
    // caller cancels everything). With `withdraw`, a chained task is poisoned
    // only if it withdraws it; without, every chained task is (closing: no
    // lane's answer is waited for).
    void abandon(const std::string& why, const Withdraw& withdraw = {});

    // Runs `action` once every task submitted before this call has finished
    // (succeeded, failed or been poisoned) — at once when none is unfinished.
    // For freeing memory that queued or running tasks may still name: it waits
    // for all earlier tasks, a superset of those naming the memory, so it never
    // frees early. Actions run in order of request, on the thread that finished
    // the last such task, under the caller's lock; they must not call back in.
    void release_after(std::function<void()> action);
    [[nodiscard]] size_t pending_releases() const noexcept { return releases_.size(); }

    // Exact holds for a released host backing (backing_retention.h): marks
    // every unfinished task whose arguments name `id` and returns how many.
    // When a marked task finishes, `id` is queued once for it in
    // take_unheld(). One lookup: the engine counts, per backing, the
    // unfinished tasks naming it (users_, kept at submit and finish).
    size_t hold_users(const CanonicalIdentity& id);
    // Appends (and forgets) the holds of tasks that finished since the last call.
    void take_unheld(std::vector<CanonicalIdentity>& out);
    [[nodiscard]] bool has_unheld() const noexcept { return !unheld_.empty(); }
    // Appends (and forgets) every hold, finished or not (the Worker is closing:
    // its unfinished tasks never finish).
    void drop_all_holds(std::vector<CanonicalIdentity>& out);

    // Tasks submitted and not finished: a task is finished when every member
    // dispatched has come back (a failed group's other members included).
    [[nodiscard]] size_t unfinished() const noexcept { return records_.size(); }
    // Tasks submitted since construction (ids count up from 1).
    [[nodiscard]] uint64_t submitted() const noexcept { return next_task_ - 1; }
    // Ends the current run and returns its number: tasks submitted from now
    // on carry the next one. `collected`: RunState::collected.
    uint64_t end_run(bool collected = false);
    // The run tasks are submitted in now.
    [[nodiscard]] uint64_t current_run() const noexcept { return run_; }
    // A run not yet forgotten (nullptr for one forgotten or never started).
    [[nodiscard]] const RunState* run_state(uint64_t run) const;
    // Whether unfinished task `task` was poisoned: it must not run.
    [[nodiscard]] bool poisoned(TaskId task) const {
        return graph_.contains(task) && graph_.state(task) == TaskState::POISONED;
    }
    // Whether `run` has ended and every task of it has finished, and so has
    // every task of each earlier cancelled run (what a cancelled run left on
    // its children is waited for by every later run).
    [[nodiscard]] bool run_finished(uint64_t run) const;
    // The ended, finished, collected runs not yet forgotten, in run order.
    [[nodiscard]] std::vector<uint64_t> finished_collected_runs() const;
    // The ended, collected runs not yet forgotten, finished or not, in run order.
    [[nodiscard]] std::vector<uint64_t> collected_runs() const;
    // Whether a run ended or a run's last task finished since the last call (then clears it).
    [[nodiscard]] bool take_run_progress() noexcept { return std::exchange(run_progress_, false); }
    // Drops a reported run: its failed and poisoned tasks are retired (they
    // kept poisoning every later task that needed their bytes until now).
    void forget_run(uint64_t run);
    // Poisons every task of `run` not yet dispatched with `why` (and what
    // depends on them, in any run), and each chained task of it `withdraw`
    // withdraws; ends the run if it is the current one, forgets its failure,
    // and marks it cancelled. Returns how many of its own tasks it poisoned.
    size_t cancel_run(uint64_t run, const std::string& why, const Withdraw& withdraw = {});
    // The first failure since the last clear_failure(), of any run.
    [[nodiscard]] const std::optional<RunFailure>& first_failure() const noexcept { return first_failure_; }
    // Tasks of any run not run since the last clear_failure() because a task they needed failed.
    [[nodiscard]] size_t poisoned_count() const noexcept { return poisoned_count_; }
    // Forgets every run's failure, retires every failed and poisoned task, and
    // forgets every ended run whose tasks have all finished.
    void clear_failure() noexcept;
    [[nodiscard]] const DependencyTracker& tracker() const noexcept { return tracker_; }
    [[nodiscard]] const ChildCounts& children() const noexcept { return config_.children; }
    // The edges inferred since the last call, in submit order (record_edges),
    // at most edge_log_capacity of them, and how many more there were; clears them.
    [[nodiscard]] EdgeLog take_edge_log() noexcept { return edge_log_.take(); }

private:
    // A task's record, from submit until it finishes, in a pooled slot
    // (task_table.h): reset() empties it for the next task and keeps the
    // capacity of its vectors (the blobs' bytes included).
    struct Record {
        TaskKind kind = TaskKind::SUB;
        uint64_t run = 0;
        uint64_t callable = 0;
        // Member 0's target, config and blob are held in the record itself: most
        // tasks have one member, and its submit then writes one block instead of
        // three separately allocated vectors (each a cache miss at 100,000 tasks
        // live). A group's members 1.. keep theirs in `rest`, and all its targets,
        // in order, in `group_targets` (what the dispatch queue reads).
        struct GroupMember {
            TaskConfig config{};
            std::vector<std::byte> blob;
        };
        uint32_t members = 0;
        MemberTarget target0;
        TaskConfig config0{};
        std::vector<std::byte> blob0;             // kept, with its capacity, for the next task
        std::vector<GroupMember> rest;            // members 1..; rest.size() may exceed members - 1: spares
        std::vector<MemberTarget> group_targets;  // a group's targets (empty for one member)
        uint32_t outstanding = 0;                   // members dispatched and not yet finished
        uint32_t undispatched = 0;
        bool failed = false;
        // Handed to its chip behind producers still in flight there: PENDING in
        // the graph until they complete (then started, never queued).
        bool chained = false;
        // Ready, and handed to its busy chip behind what that chip runs
        // (take_behind): READY in the graph until its result comes back.
        bool behind = false;
        // Its chip's lane withdrew it (a cancel): the chip never begins it.
        bool withdrawn = false;
        // Chained with producers on other chips' lanes (EngineConfig::cross_chip).
        bool across = false;
        std::vector<TaskId> preds;                  // a chip task's producers as inferred (chained dispatch)
        std::vector<CanonicalIdentity> names;       // the distinct backings its arguments name (users_)

        void reset() noexcept;
        // One per member, in member order.
        [[nodiscard]] std::span<const MemberTarget> targets() const noexcept {
            return members > 1 ? std::span<const MemberTarget>(group_targets)
                               : std::span<const MemberTarget>(&target0, members);
        }
        // Member m's config and argument blob; m < members.
        [[nodiscard]] TaskConfig& config(size_t m) noexcept { return m == 0 ? config0 : rest[m - 1].config; }
        [[nodiscard]] const TaskConfig& config(size_t m) const noexcept {
            return m == 0 ? config0 : rest[m - 1].config;
        }
        [[nodiscard]] std::vector<std::byte>& blob(size_t m) noexcept { return m == 0 ? blob0 : rest[m - 1].blob; }
        [[nodiscard]] const std::vector<std::byte>& blob(size_t m) const noexcept {
            return m == 0 ? blob0 : rest[m - 1].blob;
        }
    };

    // The record of an unfinished task; std::logic_error (an engine bug) when there is none.
    Record& record(TaskId task);
    [[nodiscard]] MemberTarget target_of(TaskKind kind, const MemberSubmit& m) const noexcept;
    // Throws std::invalid_argument on refusal; returns where the member runs.
    MemberTarget check_engine_rules(TaskId task, TaskKind kind, uint32_t member, const MemberSubmit& m) const;
    // submit()'s engine checks of task `task`, leaving its tracker members and
    // targets in submit_tracked_ / submit_targets_.
    // rules false (submit's `checked`): the targets and tracker members only.
    void check_members(TaskId task, TaskKind kind, std::span<const MemberSubmit> members, bool rules);
    void on_ready(std::span<const TaskId> ready);
    // Chained dispatch (engine_chain.cpp). A chip member dispatched to its lane:
    void chip_member_started(TaskId task, ChildRef chip);
    // A chip member back from its lane: the chip is free once nothing of its lane is in flight.
    void chip_member_done(TaskId task, ChildRef chip);
    // Queues the waiting successors of `task` to be tried for chained dispatch.
    void note_chain_candidates(TaskId task);
    // Hands each candidate whose only unfinished producers are in flight on its
    // chip (or, cross_chip, on other chips' lanes `lane_open` allows) to that chip.
    void take_chained(std::vector<Dispatch>& out, const LaneOpen& lane_open);
    // Whether every unfinished producer of `r` is a one-member task in flight
    // on `chip`'s lane (its bit in d.after_mask) or, cross_chip, on another
    // chip's open lane (in d.lane_producers), and at least one is.
    bool producers_on_lanes(const Record& r, ChildRef chip, const LaneOpen& lane_open, Dispatch& d) const;
    // Hands each busy chip with room on its lane the ready tasks queued for it
    // by name (DispatchQueue::take_behind), oldest first.
    void take_behind(std::vector<Dispatch>& out, const LaneOpen& lane_open);
    [[nodiscard]] bool chains() const noexcept { return config_.chip_lane_depth > 1; }
    [[nodiscard]] bool chainable(const Record& r) const noexcept;
    // Whether `r` (task `id`) is a chained task, or one behind its chip's
    // running task, that `withdraw` withdrew from its chip's lane (then
    // marked so in r.withdrawn).
    [[nodiscard]] bool withdrawn(TaskId id, Record& r, const Withdraw& withdraw);
    void on_poisoned(std::span<const TaskId> poisoned);
    // users_: counts a recorded task's names in, or (at its finish) out, queuing its holds.
    void count_users(const Record& r);
    void uncount_users(const Record& r);
    void finish_task(TaskId task);
    // finish_task() of a task whose graph state `s` and record `r` (null: none) the caller holds.
    void finish_task(TaskId task, TaskState s, Record* r);
    void run_due_releases();
    // Pops finished ids off live_order_'s front (and rebuilds it when it is mostly finished ones).
    void trim_live_order();
    // Records `f` as the first failure of its run (and of the Worker) unless one is recorded.
    void note_failure(const RunFailure& f);
    // Counts a poisoned task in its run, and makes it the run's failure when it has none yet.
    void account_poisoned(TaskId task);
    // Retires the run's FAILED / POISONED tasks.
    void retire_kept(RunState& state);
    // The run's state, made (in the spare node when there is one) when it has none.
    RunState& run_of(uint64_t run);
    // Forgets a run's state, keeping its node as the spare (a run per round
    // trip then allocates nothing); returns the next run's.
    std::map<uint64_t, RunState>::iterator drop_run(std::map<uint64_t, RunState>::iterator it);

    struct PendingRelease {
        TaskId before;  // every task with a smaller id must have finished
        std::function<void()> action;
    };

    EngineConfig config_;
    DependencyTracker tracker_;
    TaskGraph graph_;
    DispatchQueue queue_;
    TaskTable<Record> records_;  // the unfinished tasks
    TaskId next_task_ = 1;
    uint64_t run_ = 0;
    std::optional<RunFailure> first_failure_;
    size_t poisoned_count_ = 0;
    std::map<uint64_t, RunState> runs_;  // runs not yet forgotten, by number
    std::map<uint64_t, RunState>::node_type spare_run_;  // a forgotten run's node, for the next run
    // The run run_of() last gave (a map node's value stays put until drop_run
    // forgets it): a task's submit, finish and its run's end ask for the same one.
    uint64_t last_run_id_ = 0;
    RunState* last_run_ = nullptr;
    // The failures of FAILED tasks not yet retired: what a poisoned task of another run names as its cause.
    std::unordered_map<TaskId, std::shared_ptr<const RunFailure>> failed_roots_;
    bool run_progress_ = false;
    std::vector<TaskId> scratch_;
    std::vector<Assignment> take_scratch_;  // take()'s assignments, kept so that a take allocates none
    // submit()'s per-call lists, kept so that a submit allocates none of them.
    std::vector<TaskMember> submit_tracked_;
    std::vector<MemberTarget> submit_targets_;
    // Descriptors the owner passed in the member (or batch) being checked.
    mutable PassedDescriptors passed_;
    bool in_batch_ = false;  // check_batch() runs: passed_ holds across its tasks
    // The unfinished tasks' ids in submit order, with finished ones not yet
    // dropped: its front, once finished ones are popped, is the oldest
    // unfinished task (release_after). Rebuilt from records_ when it grows
    // past twice their number (a task that runs long keeps its front).
    std::deque<TaskId> live_order_;
    std::deque<PendingRelease> releases_;  // in request order, so `before` never decreases
    EdgeLogRecorder edge_log_;
    std::vector<CanonicalIdentity> unheld_;  // holds of finished tasks, until take_unheld()
    // Per backing some unfinished task names: how many do, and how many holds
    // (hold_users) each of them carries — queued in unheld_ as each finishes.
    struct Users {
        uint32_t tasks = 0;
        uint32_t holds = 0;
    };
    std::unordered_map<CanonicalIdentity, Users> users_;
    // Per kind, per child: why it is gone, empty while it lives.
    std::array<std::vector<std::string>, CHILD_KIND_COUNT> lost_;
    std::array<std::string, CHILD_KIND_COUNT> last_lost_;  // per kind: why the last one went, when one did
    // Chained dispatch: per chip, the tasks in flight on its lane in dispatch order.
    std::vector<std::deque<TaskId>> chip_flight_;
    std::vector<TaskId> chain_candidates_;  // waiting tasks to try at the next take()
    // Results of chained tasks that came back before their producers' (a chip
    // starts one waiting across chips as soon as the board says its producers
    // finished, so the parent may collect it, and what its lane ran after it,
    // first): kept until the graph starts or poisons the task, then finished
    // in that order (early_due_).
    struct EarlyResult {
        Dispatch dispatch;
        MemberFault fault;
    };
    std::unordered_map<TaskId, EarlyResult> early_;
    std::vector<TaskId> early_due_;
    void finish_member(const Dispatch& d, const MemberFault& fault);  // member_finished past its lane
    void finish_early();
};

}  // namespace simpler
