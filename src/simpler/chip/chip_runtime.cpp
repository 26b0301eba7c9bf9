#include "simpler/chip/chip_runtime.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "simpler/chip/working_overlap.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace simpler::chip {
namespace {

int32_t op_kernel_id(void* rt, const char* name, uint32_t* out) {
    auto* self = static_cast<Runtime*>(rt);
    if (out == nullptr) return CHIP_ERR_INVALID_ARGUMENT;
    if (self->registry().find_kernel(name, out)) return CHIP_OK;
    char msg[200];
    std::snprintf(msg, sizeof msg, "no kernel named '%.120s' is registered", name ? name : "(null)");
    self->fail(msg);
    return CHIP_ERR_NOT_FOUND;
}
int32_t op_submit(void* rt, uint32_t kernel_id, const Tensor* tensors, const int32_t* tags, uint32_t tensor_count,
                  const uint64_t* scalars, uint32_t scalar_count) {
    return static_cast<Runtime*>(rt)->submit(kernel_id, tensors, tags, tensor_count, scalars, scalar_count);
}
int32_t op_alloc_tensor(void* rt, const uint32_t* shapes, uint32_t ndims, uint8_t dtype, Tensor* out) {
    return static_cast<Runtime*>(rt)->alloc_tensor(shapes, ndims, dtype, out);
}
void op_fail(void* rt, const char* message) { static_cast<Runtime*>(rt)->fail(message); }
int32_t op_read_entry(void* rt, int32_t index, void* dst, uint64_t nbytes) {
    return static_cast<Runtime*>(rt)->read_entry(index, dst, nbytes);
}

constexpr OrchestrationOps OPS{CHIP_ABI_VERSION, 0, op_kernel_id, op_submit, op_alloc_tensor, op_fail, op_read_entry};

// A spinning thread reads the clock once per this many pauses, and gives its
// core away (sched_yield) between rounds once it has spun YIELD_AFTER: on an
// oversubscribed machine the thread it waits for may need this very core.
constexpr int PAUSES_PER_CLOCK_READ = 16;
constexpr std::chrono::nanoseconds YIELD_AFTER{2'000};

void cpu_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

Runtime::Runtime(const KernelRegistry& registry, Device& device, RuntimeConfig config)
    : registry_(registry),
      device_(device),
      config_((validate_runtime_config(config), config)),
      entry_(std::make_unique<EntryArgs>()),
      live_views_(config_.ring_slots) {
    entry_->clear();
    ring_.resize(config_.ring_slots);
    for (uint32_t i = 0; i < config_.ring_slots; ++i) {
        ring_[i].header.slot = i;
        ring_[i].header.state = static_cast<uint32_t>(SlotState::FREE);
    }
    successors_.resize(config_.ring_slots);
    retired_.reserve(config_.ring_slots);
    core_busy_.assign(config_.core_threads, 0);
    for (uint32_t c = 0; c < config_.core_threads; ++c) cores_.emplace_back([this] { core_loop(); });
}

Runtime::~Runtime() {
    std::lock_guard<std::mutex> run_lock(run_mu_);
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : cores_) t.join();
}

ValidationError Runtime::set_orch_args(const ChipStorageTaskArgs& args) noexcept {
    if (args.tensor_count < 0 || args.tensor_count > CHIP_MAX_TENSOR_ARGS)
        return ValidationError::fail("ChipStorageTaskArgs", "tensor_count", "must be in [0, 256]",
                                     static_cast<uint64_t>(static_cast<int64_t>(args.tensor_count)))
            .as_signed();
    if (args.scalar_count < 0 || args.scalar_count > CHIP_MAX_SCALAR_ARGS)
        return ValidationError::fail("ChipStorageTaskArgs", "scalar_count", "must be in [0, 128]",
                                     static_cast<uint64_t>(static_cast<int64_t>(args.scalar_count)))
            .as_signed();
    for (int32_t i = 0; i < args.tensor_count; ++i) {
        if (ValidationError e = validate_chip_tensor(args.tensors[i]); !e.ok()) return e.at_element(i);
    }
    entry_->clear();
    for (int32_t i = 0; i < args.tensor_count; ++i) {
        (void)adopt_chip_tensor(args.tensors[i], entry_->tensors[i]);
    }
    entry_->tensor_count = args.tensor_count;
    for (int32_t i = 0; i < args.scalar_count; ++i) entry_->scalars[i] = args.scalars[i];
    entry_->scalar_count = args.scalar_count;
    return {};
}

RunResult Runtime::run(OrchestrationFn orchestration, const ChipStorageTaskArgs& args, uint32_t block_dim) noexcept {
    if (ValidationError e = set_orch_args(args); !e.ok()) {
        RunResult r;
        r.ok = false;
        r.error = "chip entry arguments: " + e.message();
        return r;
    }
    return run_adopted(orchestration, block_dim);
}

template <class Orchestrate>
RunResult Runtime::run_with(Orchestrate&& orchestrate) noexcept {
    std::lock_guard<std::mutex> run_lock(run_mu_);
    {
        std::lock_guard<std::mutex> lock(mu_);
        failed_ = false;
        error_.clear();
        tasks_run_ = 0;
        first_task_id_ = next_task_id_;  // task ids keep increasing across runs
    }
    int32_t rc = CHIP_ERR_INVALID_ARGUMENT;
    try {
        rc = orchestrate();
    } catch (const std::exception& e) {
        fail((std::string("chip orchestration threw: ") + e.what()).c_str());
    } catch (...) {
        fail("chip orchestration threw a non-standard exception");
    }
    RunResult result;
    std::unique_lock<std::mutex> lock(mu_);
    if (rc != CHIP_OK && !failed_)
        record_error_locked("chip orchestration returned status " + std::to_string(rc) + " (" + chip_status_name(rc) +
                            ")");
    // The caller takes ready tasks itself while it waits for the run's last ones.
    while (in_flight_ > 0) {
        if (can_start_locked()) {
            run_one_locked(lock);
            continue;
        }
        lock.unlock();
        const bool woke = spin_until([this] {
            return in_flight_.load(std::memory_order_acquire) == 0 ||
                   (ready_count_.load(std::memory_order_acquire) > 0 &&
                    running_.load(std::memory_order_acquire) < config_.core_threads);
        });
        lock.lock();
        if (woke) continue;
        done_cv_.wait(lock, [this] { return in_flight_ == 0 || can_start_locked(); });
    }
    forget_retired_locked();
    live_views_.clear();
    for (uint64_t addr : temporaries_) device_.try_free(addr);
    temporaries_.clear();
    result.ok = !failed_;
    result.error = error_;
    result.first_task_id = first_task_id_;
    result.tasks_submitted = next_task_id_ - first_task_id_;
    result.tasks_run = tasks_run_;
    return result;
}

RunResult Runtime::run_adopted(OrchestrationFn orchestration, uint32_t block_dim) noexcept {
    return run_with([&]() -> int32_t {
        if (orchestration == nullptr) {
            fail("no chip orchestration given");
            return CHIP_ERR_INVALID_ARGUMENT;
        }
        uint32_t cores = block_dim > 0 ? std::min(block_dim, config_.core_threads) : config_.core_threads;
        if (const uint32_t k = device_.facts().concurrent_kernels; k > 0) cores = std::min(cores, k);
        const OrchestrationContext ctx{
            &OPS, this, entry_->tensors, entry_->scalars, entry_->tensor_count, entry_->scalar_count, cores, 0};
        return orchestration(&ctx);
    });
}

RunResult Runtime::run_kernel(uint32_t kernel_id, const ChipStorageTaskArgs& args,
                              std::span<const TensorArgType> tags) noexcept {
    if (ValidationError e = set_orch_args(args); !e.ok()) {
        RunResult r;
        r.ok = false;
        r.error = "chip entry arguments: " + e.message();
        return r;
    }
    return run_with([&]() -> int32_t {
        const auto n = static_cast<uint32_t>(entry_->tensor_count);
        if (tags.size() != n) {
            fail(("one kernel's run: " + std::to_string(tags.size()) + " tags for " + std::to_string(n) + " tensors")
                     .c_str());
            return CHIP_ERR_INVALID_ARGUMENT;
        }
        int32_t raw[CORE_MAX_TENSOR_ARGS];
        if (n > CORE_MAX_TENSOR_ARGS) {
            fail(("one kernel takes at most " + std::to_string(CORE_MAX_TENSOR_ARGS) + " tensors (got " +
                  std::to_string(n) + ")")
                     .c_str());
            return CHIP_ERR_INVALID_ARGUMENT;
        }
        for (uint32_t i = 0; i < n; ++i) raw[i] = static_cast<int32_t>(tags[i]);
        return submit(kernel_id, entry_->tensors, raw, n, entry_->scalars, static_cast<uint32_t>(entry_->scalar_count));
    });
}

void Runtime::fail(const char* message) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    record_error_locked(std::string("chip orchestration: ") + (message ? message : "(no message)"));
}

void Runtime::record_error_locked(std::string message) noexcept {
    if (failed_) return;
    failed_ = true;
    error_ = std::move(message);
    if (room_wanted_) room_cv_.notify_one();
}

int32_t Runtime::check_submit(uint32_t kernel_id, const Tensor* tensors, const int32_t* tags, uint32_t tensor_count,
                              const uint64_t* scalars, uint32_t scalar_count) noexcept {
    char msg[320];
    const char* kname = registry_.kernel_name(kernel_id);
    if (registry_.kernel(kernel_id) == nullptr) {
        std::snprintf(msg, sizeof msg, "submit: unknown kernel id %u (%u registered)", kernel_id,
                      registry_.kernel_count());
    } else if (tensor_count > static_cast<uint32_t>(CORE_MAX_TENSOR_ARGS) ||
               scalar_count > static_cast<uint32_t>(CORE_MAX_SCALAR_ARGS)) {
        std::snprintf(msg, sizeof msg, "submit of kernel '%s': %u tensors / %u scalars exceed the caps %d / %d", kname,
                      tensor_count, scalar_count, CORE_MAX_TENSOR_ARGS, CORE_MAX_SCALAR_ARGS);
    } else if ((tensor_count > 0 && (tensors == nullptr || tags == nullptr)) ||
               (scalar_count > 0 && scalars == nullptr)) {
        std::snprintf(msg, sizeof msg, "submit of kernel '%s': null argument array", kname);
    } else {
        for (uint32_t i = 0; i < tensor_count; ++i) {
            if (!is_known_tag(static_cast<TensorArgType>(tags[i]))) {
                std::snprintf(msg, sizeof msg, "submit of kernel '%s': tensor[%u]: unknown tag %d", kname, i, tags[i]);
                fail(msg);
                return CHIP_ERR_INVALID_ARGUMENT;
            }
            const ValidationError e = validate_chip_tensor(chip_tensor_of(tensors[i]));
            if (!e.ok()) {
                std::snprintf(msg, sizeof msg, "submit of kernel '%s': tensor[%u]: %s", kname, i, e.message().c_str());
                fail(msg);
                return CHIP_ERR_INVALID_ARGUMENT;
            }
        }
        return CHIP_OK;
    }
    fail(msg);
    return CHIP_ERR_INVALID_ARGUMENT;
}

int32_t Runtime::submit(uint32_t kernel_id, const Tensor* tensors, const int32_t* tags, uint32_t tensor_count,
                        const uint64_t* scalars, uint32_t scalar_count) noexcept {
    if (const int32_t rc = check_submit(kernel_id, tensors, tags, tensor_count, scalars, scalar_count); rc != CHIP_OK)
        return rc;
    std::unique_lock<std::mutex> lock(mu_);
    // A full ring: the caller runs ready tasks itself while a core is free, else
    // sleeps until the oldest slot is free and an eighth of the ring has drained
    // (one wake-up per refill, not per finished task).
    while (!failed_ && ring_[ring_head_].header.state != static_cast<uint32_t>(SlotState::FREE)) {
        if (can_start_locked()) {
            run_one_locked(lock);
            continue;
        }
        wake_cores_locked(0);
        room_wanted_ = true;
        room_cv_.wait(lock, [this] { return failed_ || has_room_locked(); });
        room_wanted_ = false;
    }
    if (failed_) return CHIP_ERR_RUN_FAILED;
    forget_retired_locked();
    const uint32_t slot = ring_head_;
    ring_head_ = (ring_head_ + 1) % config_.ring_slots;
    TaskPayload& p = ring_[slot];
    TaskPayloadHeader& h = p.header;
    h.task_id = next_task_id_++;
    h.kernel_id = kernel_id;
    h.tensor_count = tensor_count;
    h.scalar_count = scalar_count;
    h.fanin_total = 0;
    h.fanin_remaining = 0;
    h.state = static_cast<uint32_t>(SlotState::PENDING);
    for (uint32_t i = 0; i < tensor_count; ++i) {
        p.tensors[i] = tensors[i];
        refresh_derived(p.tensors[i]);
        h.tags[i] = tags[i];
    }
    for (uint32_t i = 0; i < scalar_count; ++i) p.scalars[i] = scalars[i];
    successors_[slot].clear();
    if (!link_dependencies_locked(p)) {
        h.state = static_cast<uint32_t>(SlotState::FREE);
        record_error_locked("submit of kernel '" + std::string(registry_.kernel_name(kernel_id)) +
                            "': out of memory ordering the task");
        done_cv_.notify_all();
        return CHIP_ERR_OUT_OF_MEMORY;
    }
    ++in_flight_;
    if (h.fanin_remaining == 0) {
        h.state = static_cast<uint32_t>(SlotState::READY);
        ready_.push_back(slot);
        ready_count_.store(static_cast<uint32_t>(ready_.size()), std::memory_order_release);
        // One ready task is left to the caller, who takes it when the orchestration returns:
        // a run of one kernel wakes no core thread.
        wake_cores_locked(1);
    }
    return CHIP_OK;
}

void Runtime::forget_retired_locked() noexcept {
    for (const uint32_t slot : retired_)
        live_views_.remove_task(slot, ring_[slot].tensors, ring_[slot].header.tensor_count);
    retired_.clear();
}

bool Runtime::link_dependencies_locked(TaskPayload& p) noexcept {
    TaskPayloadHeader& h = p.header;
    try {
        for (const uint32_t pred : live_views_.add_task(h.slot, h.task_id, p.tensors, h.tags, h.tensor_count)) {
            successors_[pred].push_back(h.slot);
            ++h.fanin_total;
            ++h.fanin_remaining;
        }
    } catch (...) {  // std::bad_alloc filing a view or a successor
        live_views_.remove_task(h.slot, p.tensors, h.tensor_count);
        for (std::vector<uint32_t>& successors : successors_) std::erase(successors, h.slot);
        return false;
    }
    return true;
}

void Runtime::finish_task_locked(uint32_t slot) noexcept {
    for (uint32_t s : successors_[slot]) {
        TaskPayloadHeader& q = ring_[s].header;
        if (--q.fanin_remaining == 0) {
            q.state = static_cast<uint32_t>(SlotState::READY);
            ready_.push_back(s);
        }
    }
    ready_count_.store(static_cast<uint32_t>(ready_.size()), std::memory_order_release);
    wake_cores_locked(1);  // the finishing thread goes on with the next ready task
    successors_[slot].clear();
    retired_.push_back(slot);  // its views leave live_views_ at the next submit (capacity: every slot)
    ring_[slot].header.state = static_cast<uint32_t>(SlotState::FREE);
    in_flight_.fetch_sub(1, std::memory_order_release);
    done_cv_.notify_all();
    if (room_wanted_ && has_room_locked()) room_cv_.notify_one();
}

bool Runtime::has_room_locked() const noexcept {
    const uint32_t refill = std::max(1u, config_.ring_slots / 8);
    return ring_[ring_head_].header.state == static_cast<uint32_t>(SlotState::FREE) &&
           in_flight_.load(std::memory_order_relaxed) + refill <= config_.ring_slots;
}

bool Runtime::can_start_locked() const noexcept { return !ready_.empty() && running_ < config_.core_threads; }

void Runtime::wake_cores_locked(uint32_t taken) noexcept {
    const auto ready = static_cast<uint32_t>(ready_.size());
    for (uint32_t covered = taken + spinning_, woken = 0; ready > covered + woken && woken < sleeping_; ++woken)
        work_cv_.notify_one();
}

template <class Done>
bool Runtime::spin_until(Done&& done) const noexcept {
    if (config_.idle_spin.count() <= 0) return done();
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        for (int i = 0; i < PAUSES_PER_CLOCK_READ; ++i) {
            if (done()) return true;
            cpu_pause();
        }
        const auto spun = std::chrono::steady_clock::now() - start;
        if (spun >= config_.idle_spin) return done();
        if (spun >= YIELD_AFTER) sched_yield();
    }
}

void Runtime::run_one_locked(std::unique_lock<std::mutex>& lock) noexcept {
    char error[KERNEL_ERROR_CAPACITY];
    const uint32_t slot = ready_.front();
    ready_.pop_front();
    ready_count_.store(static_cast<uint32_t>(ready_.size()), std::memory_order_release);
    const auto core_id = static_cast<uint32_t>(std::find(core_busy_.begin(), core_busy_.end(), 0) - core_busy_.begin());
    core_busy_[core_id] = 1;
    running_.fetch_add(1, std::memory_order_release);
    TaskPayload& p = ring_[slot];
    p.header.state = static_cast<uint32_t>(SlotState::RUNNING);
    const bool skip = failed_;
    const uint32_t kernel_id = p.header.kernel_id;
    const uint64_t task_id = p.header.task_id;
    lock.unlock();
    int32_t rc = CHIP_OK;
    error[0] = '\0';
    if (!skip) {
        const KernelArgs args{
            p.tensors, p.scalars, p.header.tensor_count, p.header.scalar_count, core_id, KERNEL_ERROR_CAPACITY, error};
        rc = device_.launch(kernel_id, args);
    }
    lock.lock();
    core_busy_[core_id] = 0;
    running_.fetch_sub(1, std::memory_order_release);
    if (!skip) ++tasks_run_;
    if (rc != CHIP_OK) {
        error[KERNEL_ERROR_CAPACITY - 1] = '\0';
        std::string msg = std::string("kernel '") + registry_.kernel_name(kernel_id) + "' (task " +
                          std::to_string(task_id) + ") failed: ";
        msg += error[0] != '\0' ? std::string(error)
                                : "returned status " + std::to_string(rc) + " (" + chip_status_name(rc) + ")";
        record_error_locked(std::move(msg));
        done_cv_.notify_all();
    }
    finish_task_locked(slot);
}

void Runtime::core_loop() noexcept {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        if (can_start_locked()) {
            run_one_locked(lock);
            continue;
        }
        if (stop_) return;
        if (config_.idle_spin.count() > 0) {
            ++spinning_;
            lock.unlock();
            (void)spin_until([this] {
                return stop_.load(std::memory_order_acquire) ||
                       (ready_count_.load(std::memory_order_acquire) > 0 &&
                        running_.load(std::memory_order_acquire) < config_.core_threads);
            });
            lock.lock();
            --spinning_;
            if (can_start_locked() || stop_) continue;
        }
        ++sleeping_;
        work_cv_.wait(lock);
        --sleeping_;
    }
}

int32_t Runtime::read_entry(int32_t index, void* dst, uint64_t nbytes) noexcept {
    char msg[200];
    const auto refuse = [&](int32_t status) {
        fail(msg);
        return status;
    };
    if (index < 0 || index >= entry_->tensor_count || (dst == nullptr && nbytes > 0)) {
        std::snprintf(msg, sizeof msg, "read_entry: no entry tensor %d (there are %d) or no destination", index,
                      entry_->tensor_count);
        return refuse(CHIP_ERR_INVALID_ARGUMENT);
    }
    const Tensor& t = entry_->tensors[index];
    const uint64_t view_bytes = t.extent_elem_cache * uint64_t{t.element_size()};
    if (t.is_contiguous == 0 || nbytes > view_bytes) {
        std::snprintf(msg, sizeof msg, "read_entry: entry tensor %d is %s of %llu bytes; %llu bytes asked", index,
                      t.is_contiguous != 0 ? "a contiguous view" : "not a contiguous view",
                      static_cast<unsigned long long>(view_bytes), static_cast<unsigned long long>(nbytes));
        return refuse(CHIP_ERR_INVALID_ARGUMENT);
    }
    bool submitted = false;
    {
        std::lock_guard<std::mutex> lock(mu_);
        submitted = next_task_id_ != first_task_id_;
    }
    if (submitted) {
        std::snprintf(msg, sizeof msg, "read_entry: entry tensor %d read after the run's first submit", index);
        return refuse(CHIP_ERR_INVALID_ARGUMENT);
    }
    if (nbytes == 0) return CHIP_OK;
    const uint64_t addr = t.addr + t.start_offset * t.element_size();
    try {
        if (!device_.contains(addr, nbytes))  // a zero-copy run: the host memory this process maps
            std::memcpy(dst, reinterpret_cast<const void*>(addr), nbytes);
        else if (const void* host = device_.host_address(addr); host != nullptr)
            std::memcpy(dst, host, nbytes);
        else
            device_.wait(device_.copy_to_host(dst, addr, nbytes));
    } catch (const std::exception& e) {
        std::snprintf(msg, sizeof msg, "read_entry: entry tensor %d: %.150s", index, e.what());
        return refuse(CHIP_ERR_INVALID_ARGUMENT);
    }
    return CHIP_OK;
}

int32_t Runtime::alloc_tensor(const uint32_t* shapes, uint32_t ndims, uint8_t dtype, Tensor* out) noexcept {
    char msg[200];
    const uint32_t elem = data_type_element_size(dtype);
    if (out == nullptr || shapes == nullptr || ndims < 1 || ndims > MAX_TENSOR_DIMS || elem == 0) {
        std::snprintf(msg, sizeof msg, "alloc_tensor: needs 1 <= ndims <= 5 and a known dtype (got ndims %u, dtype %u)",
                      ndims, dtype);
        fail(msg);
        return CHIP_ERR_INVALID_ARGUMENT;
    }
    Tensor t{};
    uint64_t count = 1;
    for (uint32_t i = ndims; i-- > 0;) {
        if (shapes[i] == 0 || count > UINT32_MAX) {
            std::snprintf(msg, sizeof msg, "alloc_tensor: shapes[%u] must be > 0 and strides must fit u32", i);
            fail(msg);
            return CHIP_ERR_INVALID_ARGUMENT;
        }
        t.shapes[i] = shapes[i];
        t.strides[i] = static_cast<uint32_t>(count);
        count = saturating_mul(count, shapes[i]);
    }
    const uint64_t nbytes = saturating_mul(count, elem);
    const uint64_t addr = nbytes == UINT64_MAX ? 0 : device_.try_alloc(nbytes);
    if (addr == 0) {
        std::snprintf(msg, sizeof msg, "alloc_tensor: the device memory cannot fit %llu bytes",
                      static_cast<unsigned long long>(nbytes));
        fail(msg);
        return CHIP_ERR_OUT_OF_MEMORY;
    }
    t.addr = addr;
    t.size = nbytes;
    t.ndims = ndims;
    t.dtype = dtype;
    t.address_space = 1;  // DEVICE
    t.producer_task = NO_PRODUCER;
    refresh_derived(t);
    {
        std::lock_guard<std::mutex> lock(mu_);
        temporaries_.push_back(addr);
    }
    *out = t;
    return CHIP_OK;
}

}  // namespace simpler::chip
