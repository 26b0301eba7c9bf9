// Runtime: the simulated chip's task runtime. set_orch_args adopts each
// ChipTensor of the entry arguments into a working tensor; run() calls a chip
// orchestration on the caller's thread, which submits kernel tasks; each task
// takes a slot of a ring of TaskPayloads, is ordered against the live tasks
// whose views it may share a byte with (RAW / WAW / WAR, live_views.h: a
// ViewIndex per backing, decided by working_overlap.h), and runs on one of a few core threads
// once its predecessors completed. run() returns when every submitted task has
// finished, or with the first error (a kernel's failure names the kernel, the
// task and the kernel's message; tasks not yet started are then skipped).
//
// Who runs a kernel: at most core_threads kernels run at once, each with a
// distinct core id in [0, core_threads). The core threads take ready tasks,
// and so does run()'s caller once the orchestration has returned and it waits
// for the run's last kernels (a run of a few small kernels then often needs no
// core thread woken at all), and while a submit waits for a full ring to free
// its oldest slot (no wake-up per task when the ring is small); a submit that
// can take none sleeps until an eighth of the ring has drained. A core thread (and the waiting caller) with nothing
// to do spins for RuntimeConfig::idle_spin, then sleeps on a condition
// variable; a ready task wakes a sleeping core thread only when no spinning
// one can take it, and one ready task is left to the caller (a run of one
// kernel wakes no core thread; a lone task submitted early by a long
// orchestration waits for it to return unless a core thread is awake, or the
// ring fills). With idle_spin 0 nothing spins, so an idle chip burns no CPU;
// with a budget, an idle chip spins at most one budget per thread.
//
// Owns its core threads and the ring; borrows the registry (kernel names and
// ids) and the device (device.h), which runs each kernel (Device::launch) and
// holds the run's device temporaries, freed when the run ends. Trusts nothing an orchestration
// submits: every tensor, tag, count and kernel id is checked and refused with a
// message. One run at a time (a second concurrent run waits). The dispatch path
// is noexcept.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "simpler/chip/device.h"
#include "simpler/chip/entry_args.h"
#include "simpler/chip/kernel_registry.h"
#include "simpler/chip/live_views.h"
#include "simpler/chip/runtime_config.h"
#include "simpler/chip/task_payload.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler::chip {

struct RunResult {
    bool ok = true;
    std::string error;           // empty when ok
    uint64_t first_task_id = 0;    // task ids of this run are [first_task_id, first_task_id + tasks_submitted)
    uint64_t tasks_submitted = 0;
    uint64_t tasks_run = 0;      // kernels that ran (a failure skips the rest)
};

class Runtime {
public:
    // Starts the core threads. Throws std::invalid_argument for a config out of range.
    Runtime(const KernelRegistry& registry, Device& device, RuntimeConfig config = {});
    ~Runtime();  // stops and joins the core threads (waits for a run in flight)
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    // Adopts every ChipTensor of `args` into the entry arguments. A refused
    // tensor (validate_chip_tensor) leaves the previous entry arguments intact;
    // the error names the argument index.
    ValidationError set_orch_args(const ChipStorageTaskArgs& args) noexcept;
    [[nodiscard]] const EntryArgs& entry_args() const noexcept { return *entry_; }

    // set_orch_args(args), then the orchestration, then waits for every task.
    // block_dim > 0 caps the core count the orchestration is told to tile for
    // (OrchestrationContext::core_count); 0 tells it every core thread. A
    // device that runs fewer kernels at once (DeviceFacts::concurrent_kernels)
    // caps it too.
    RunResult run(OrchestrationFn orchestration, const ChipStorageTaskArgs& args, uint32_t block_dim = 0) noexcept;
    // As run(), on the entry arguments already set.
    RunResult run_adopted(OrchestrationFn orchestration, uint32_t block_dim = 0) noexcept;
    // set_orch_args(args), then one task of kernel `kernel_id` on every entry
    // tensor (tags[i] for tensor i) and scalar, and waits for it: a callable
    // that is one kernel (an OpenCL C kernel, opencl_source.h).
    RunResult run_kernel(uint32_t kernel_id, const ChipStorageTaskArgs& args,
                         std::span<const TensorArgType> tags) noexcept;

    [[nodiscard]] uint32_t core_count() const noexcept { return config_.core_threads; }
    [[nodiscard]] const KernelRegistry& registry() const noexcept { return registry_; }

    // The orchestration ops (also reachable through OrchestrationOps).
    int32_t submit(uint32_t kernel_id, const Tensor* tensors, const int32_t* tags, uint32_t tensor_count,
                   const uint64_t* scalars, uint32_t scalar_count) noexcept;
    int32_t alloc_tensor(const uint32_t* shapes, uint32_t ndims, uint8_t dtype, Tensor* out) noexcept;
    void fail(const char* message) noexcept;
    int32_t read_entry(int32_t index, void* dst, uint64_t nbytes) noexcept;

private:
    // The body of a run: `orchestrate` submits the run's tasks (its status
    // fails the run when not CHIP_OK), then waits for every task.
    template <class Orchestrate>
    RunResult run_with(Orchestrate&& orchestrate) noexcept;
    void core_loop() noexcept;
    // Whether a ready task may start now (fewer than core_threads kernels run).
    [[nodiscard]] bool can_start_locked() const noexcept;
    // Whether a submit waiting on a full ring may go on: the oldest slot is
    // free and at least an eighth of the ring (one slot at least) is.
    [[nodiscard]] bool has_room_locked() const noexcept;
    // Takes ready_.front() and runs its kernel on this thread under the lowest
    // free core id, unlocking `lock` around the kernel; then finishes the task.
    void run_one_locked(std::unique_lock<std::mutex>& lock) noexcept;
    // Wakes a sleeping core thread for each ready task beyond the `taken` this
    // thread will take itself and those the spinning threads will.
    void wake_cores_locked(uint32_t taken) noexcept;
    // Spins (without the lock) up to idle_spin until `done()`; returns done().
    template <class Done>
    bool spin_until(Done&& done) const noexcept;
    void finish_task_locked(uint32_t slot) noexcept;
    void record_error_locked(std::string message) noexcept;
    int32_t check_submit(uint32_t kernel_id, const Tensor* tensors, const int32_t* tags, uint32_t tensor_count,
                         const uint64_t* scalars, uint32_t scalar_count) noexcept;
    // Takes the views of the tasks finished since the last submit out of
    // live_views_ (the submitting thread does, not the finishing core thread).
    void forget_retired_locked() noexcept;
    // Links the task of `p` after every live task it must follow (live_views_);
    // false when that ran out of memory (nothing of the task is then filed).
    bool link_dependencies_locked(TaskPayload& p) noexcept;

    const KernelRegistry& registry_;
    Device& device_;
    RuntimeConfig config_;
    std::unique_ptr<EntryArgs> entry_;

    std::mutex run_mu_;   // one run at a time
    std::mutex mu_;       // everything below
    std::condition_variable work_cv_;   // core threads: a task became ready, or stop
    std::condition_variable done_cv_;   // run()'s caller: all tasks finished, or a task it may take
    std::condition_variable room_cv_;   // a submit waiting on a full ring: has_room_locked(), or a failure
    std::vector<TaskPayload> ring_;
    std::vector<std::vector<uint32_t>> successors_;  // per slot
    std::deque<uint32_t> ready_;
    uint32_t ring_head_ = 0;
    uint64_t next_task_id_ = 0;   // increasing for the runtime's lifetime
    uint64_t first_task_id_ = 0;  // of the current run
    uint64_t tasks_run_ = 0;
    bool failed_ = false;
    std::string error_;
    // Written under mu_; atomic so a spinning thread can read them without it.
    std::atomic<uint64_t> in_flight_{0};    // submitted, not finished
    std::atomic<uint32_t> ready_count_{0};  // ready_.size()
    std::atomic<uint32_t> running_{0};      // kernels running now
    std::atomic<bool> stop_{false};
    std::vector<uint8_t> core_busy_;        // per core id: a kernel runs under it
    uint32_t spinning_ = 0;                 // core threads spinning for work
    uint32_t sleeping_ = 0;                 // core threads asleep on work_cv_
    bool room_wanted_ = false;              // a submit sleeps on room_cv_
    LiveViews live_views_;                            // the views of the live tasks, per backing
    std::vector<uint32_t> retired_;                   // slots finished, views not yet forgotten
    std::vector<uint64_t> temporaries_;               // device temporaries of this run
    std::vector<std::thread> cores_;
};

}  // namespace simpler::chip
