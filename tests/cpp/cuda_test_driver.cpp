// The test CUDA driver: a shared library standing in for libcuda.so.1 where
// there is no NVIDIA driver, loaded through SIMPLER_CUDA_LIBRARY. It exports
// the one symbol the project finds by name, cuGetProcAddress_v2, which hands
// out each entry point it has at the ABI version it was introduced with, as
// the real driver does: asked at an older version it answers "version not
// sufficient". It includes no CUDA header, so the types below must match the
// ABI the project binds through cudaTypedefs.h on their own.
//
// Its devices are made up and told by the environment:
//   SIMPLER_TEST_CUDA_DEVICES      how many (default 2)
//   SIMPLER_TEST_CUDA_INIT_RESULT  the CUresult cuInit answers (default 0)
//   SIMPLER_TEST_CUDA_HIDE         an entry point it says it does not have
//   SIMPLER_TEST_CUDA_DRIVER_VERSION  what cuDriverGetVersion says (default 13000)
//   SIMPLER_TEST_CUDA_FAIL         "<entry point>=<CUresult>": that call fails so (read at each call)
// Device i is "simpler test GPU i", with UUID bytes 0x<i>0, 0x<i>1, ...,
// (i + 1) GiB of memory, 132 multiprocessors and compute capability 9.0.
//
// Device memory is host memory (malloc; a CUdeviceptr is its address), and
// copies are memcpy, done when the call returns; a copy must lie inside one
// allocation and name a stream that exists. Every call after cuInit that
// needs a context fails with CUDA_ERROR_INVALID_CONTEXT on a thread that has
// made none current, as the real driver does. simpler_test_cuda_live()
// counts what is alive (allocations, streams, events, modules,
// primary-context retains), so a test sees a device release all it made.
//
// Modules: cuModuleLoadData takes an ELF image (a CUBIN), cuModuleGetFunction
// a name the image holds. cuLaunchKernel runs a few of the standard kernels
// on the CPU — std_vector_add_f32, std_copy_4 — one emulated thread per
// (block, thread) of the grid, reading the arguments as the project lays them
// out (a device pointer and a 56-byte simpler_view per tensor): a launch
// whose arguments or grid are wrong computes wrong bytes. Any other kernel
// answers CUDA_ERROR_NOT_SUPPORTED.
//
// It tests the project's code (the binding, the queries, the errors), never
// GPU semantics. Entry points it does not have answer "symbol not found".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult SUCCESS = 0;
constexpr CUresult INVALID_VALUE = 1;
constexpr CUresult OUT_OF_MEMORY = 2;
constexpr CUresult NOT_INITIALIZED = 3;
constexpr CUresult INVALID_DEVICE = 101;
constexpr CUresult INVALID_CONTEXT = 201;
constexpr CUresult INVALID_HANDLE = 400;
constexpr CUresult NOT_FOUND = 500;
constexpr CUresult NOT_SUPPORTED = 801;

// CUdriverProcAddressQueryResult
constexpr int SYMBOL_SUCCESS = 0;
constexpr int SYMBOL_NOT_FOUND = 1;
constexpr int VERSION_NOT_SUFFICIENT = 2;

struct Uuid {
    char bytes[16];
};

int device_count = 0;  // set by cuInit
bool initialized = false;

int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return *end == '\0' ? static_cast<int>(n) : fallback;
}

CUresult device_ok(int dev) {
    if (!initialized) return NOT_INITIALIZED;
    return dev >= 0 && dev < device_count ? SUCCESS : INVALID_DEVICE;
}

CUresult get_error_name(CUresult error, const char** out) {
    switch (error) {
        case SUCCESS: *out = "CUDA_SUCCESS"; return SUCCESS;
        case INVALID_VALUE: *out = "CUDA_ERROR_INVALID_VALUE"; return SUCCESS;
        case OUT_OF_MEMORY: *out = "CUDA_ERROR_OUT_OF_MEMORY"; return SUCCESS;
        case NOT_INITIALIZED: *out = "CUDA_ERROR_NOT_INITIALIZED"; return SUCCESS;
        case 100: *out = "CUDA_ERROR_NO_DEVICE"; return SUCCESS;
        case INVALID_DEVICE: *out = "CUDA_ERROR_INVALID_DEVICE"; return SUCCESS;
        case INVALID_CONTEXT: *out = "CUDA_ERROR_INVALID_CONTEXT"; return SUCCESS;
        case INVALID_HANDLE: *out = "CUDA_ERROR_INVALID_HANDLE"; return SUCCESS;
        case NOT_FOUND: *out = "CUDA_ERROR_NOT_FOUND"; return SUCCESS;
        case 700: *out = "CUDA_ERROR_ILLEGAL_ADDRESS"; return SUCCESS;
        case NOT_SUPPORTED: *out = "CUDA_ERROR_NOT_SUPPORTED"; return SUCCESS;
        default: *out = nullptr; return INVALID_VALUE;
    }
}

CUresult get_error_string(CUresult error, const char** out) {
    switch (error) {
        case SUCCESS: *out = "no error"; return SUCCESS;
        case INVALID_VALUE: *out = "invalid argument"; return SUCCESS;
        case OUT_OF_MEMORY: *out = "out of memory"; return SUCCESS;
        case NOT_INITIALIZED: *out = "initialization error"; return SUCCESS;
        case 100: *out = "no CUDA-capable device is detected"; return SUCCESS;
        case INVALID_DEVICE: *out = "invalid device ordinal"; return SUCCESS;
        case INVALID_CONTEXT: *out = "invalid device context"; return SUCCESS;
        case INVALID_HANDLE: *out = "invalid resource handle"; return SUCCESS;
        case NOT_FOUND: *out = "named symbol not found"; return SUCCESS;
        case 700: *out = "an illegal memory access was encountered"; return SUCCESS;
        case NOT_SUPPORTED: *out = "operation not supported"; return SUCCESS;
        default: *out = nullptr; return INVALID_VALUE;
    }
}

CUresult init(unsigned int flags) {
    if (flags != 0) return INVALID_VALUE;
    const CUresult rc = env_int("SIMPLER_TEST_CUDA_INIT_RESULT", SUCCESS);
    if (rc != SUCCESS) return rc;
    device_count = env_int("SIMPLER_TEST_CUDA_DEVICES", 2);
    initialized = true;
    return SUCCESS;
}

CUresult driver_get_version(int* version) {
    if (version == nullptr) return INVALID_VALUE;
    *version = env_int("SIMPLER_TEST_CUDA_DRIVER_VERSION", 13000);
    return SUCCESS;
}

CUresult device_get_count(int* count) {
    if (!initialized) return NOT_INITIALIZED;
    *count = device_count;
    return SUCCESS;
}

CUresult device_get(int* device, int ordinal) {
    if (const CUresult rc = device_ok(ordinal); rc != SUCCESS) return rc;
    *device = ordinal;
    return SUCCESS;
}

CUresult device_get_name(char* name, int len, int dev) {
    if (const CUresult rc = device_ok(dev); rc != SUCCESS) return rc;
    if (name == nullptr || len <= 0) return INVALID_VALUE;
    const std::string text = "simpler test GPU " + std::to_string(dev);
    std::strncpy(name, text.c_str(), static_cast<size_t>(len));
    name[len - 1] = '\0';
    return SUCCESS;
}

CUresult device_get_uuid(Uuid* uuid, int dev) {
    if (const CUresult rc = device_ok(dev); rc != SUCCESS) return rc;
    for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(dev * 16 + i);
    return SUCCESS;
}

CUresult device_total_mem(size_t* bytes, int dev) {
    if (const CUresult rc = device_ok(dev); rc != SUCCESS) return rc;
    *bytes = (static_cast<size_t>(dev) + 1) << 30;
    return SUCCESS;
}

CUresult device_get_attribute(int* value, int attribute, int dev) {
    if (const CUresult rc = device_ok(dev); rc != SUCCESS) return rc;
    switch (attribute) {
        case 16: *value = 132; return SUCCESS;  // MULTIPROCESSOR_COUNT
        case 18: *value = 0; return SUCCESS;    // INTEGRATED
        case 31: *value = 1; return SUCCESS;    // CONCURRENT_KERNELS
        case 75: *value = 9; return SUCCESS;    // COMPUTE_CAPABILITY_MAJOR
        case 76: *value = 0; return SUCCESS;    // COMPUTE_CAPABILITY_MINOR
        default: return INVALID_VALUE;
    }
}

// What is alive, under one mutex: allocations (base -> bytes), streams,
// events, and each device's primary-context retains.
std::mutex live_mu;
std::map<uint64_t, size_t> allocations;
std::set<void*> streams;
std::set<void*> events;
std::map<int, int> context_refs;
std::map<void*, std::string> modules;  // each module's image
std::set<std::string*> functions;      // a function is its name, and dies with its module
std::map<void*, std::vector<std::string*>> module_functions;
char contexts[64];  // device i's primary context is &contexts[i]
thread_local void* current_context = nullptr;

// The failure SIMPLER_TEST_CUDA_FAIL asks of `symbol`; SUCCESS when none.
CUresult injected(const char* symbol) {
    const char* v = std::getenv("SIMPLER_TEST_CUDA_FAIL");
    if (v == nullptr) return SUCCESS;
    const char* eq = std::strchr(v, '=');
    if (eq == nullptr || std::strncmp(v, symbol, static_cast<size_t>(eq - v)) != 0 ||
        std::strlen(symbol) != static_cast<size_t>(eq - v))
        return SUCCESS;
    char* end = nullptr;
    const long rc = std::strtol(eq + 1, &end, 10);
    return *end == '\0' ? static_cast<CUresult>(rc) : SUCCESS;
}

// The checks every call that needs a context makes, then the injected failure.
CUresult in_context(const char* symbol) {
    if (!initialized) return NOT_INITIALIZED;
    if (current_context == nullptr) return INVALID_CONTEXT;
    return injected(symbol);
}

CUresult primary_ctx_retain(void** ctx, int dev) {
    if (const CUresult rc = device_ok(dev); rc != SUCCESS) return rc;
    if (dev >= static_cast<int>(sizeof contexts)) return INVALID_DEVICE;
    const std::lock_guard<std::mutex> lock(live_mu);
    ++context_refs[dev];
    *ctx = &contexts[dev];
    return SUCCESS;
}

CUresult primary_ctx_release(int dev) {
    if (const CUresult rc = device_ok(dev); rc != SUCCESS) return rc;
    const std::lock_guard<std::mutex> lock(live_mu);
    if (context_refs[dev] == 0) return INVALID_CONTEXT;
    --context_refs[dev];
    return SUCCESS;
}

CUresult ctx_set_current(void* ctx) {
    if (!initialized) return NOT_INITIALIZED;
    if (ctx != nullptr && (ctx < static_cast<void*>(contexts) || ctx >= static_cast<void*>(contexts + sizeof contexts)))
        return INVALID_CONTEXT;
    current_context = ctx;
    return SUCCESS;
}

CUresult mem_alloc(uint64_t* dptr, size_t bytes) {
    if (const CUresult rc = in_context("cuMemAlloc"); rc != SUCCESS) return rc;
    if (dptr == nullptr || bytes == 0) return INVALID_VALUE;
    void* p = std::malloc(bytes);
    if (p == nullptr) return OUT_OF_MEMORY;
    const std::lock_guard<std::mutex> lock(live_mu);
    *dptr = reinterpret_cast<uint64_t>(p);
    allocations.emplace(*dptr, bytes);
    return SUCCESS;
}

CUresult mem_free(uint64_t dptr) {
    if (const CUresult rc = in_context("cuMemFree"); rc != SUCCESS) return rc;
    const std::lock_guard<std::mutex> lock(live_mu);
    if (allocations.erase(dptr) == 0) return INVALID_VALUE;
    std::free(reinterpret_cast<void*>(dptr));
    return SUCCESS;
}

// Whether [dptr, dptr + bytes) lies inside one allocation and `stream` exists (0: the default stream).
bool copy_ok(uint64_t dptr, size_t bytes, void* stream) {
    const std::lock_guard<std::mutex> lock(live_mu);
    if (stream != nullptr && streams.count(stream) == 0) return false;
    auto it = allocations.upper_bound(dptr);
    if (it == allocations.begin()) return false;
    --it;
    return dptr - it->first <= it->second && bytes <= it->second - (dptr - it->first);
}

CUresult memcpy_htod_async(uint64_t dst, const void* src, size_t bytes, void* stream) {
    if (const CUresult rc = in_context("cuMemcpyHtoDAsync"); rc != SUCCESS) return rc;
    if (src == nullptr || !copy_ok(dst, bytes, stream)) return INVALID_VALUE;
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    return SUCCESS;
}

CUresult memcpy_dtoh_async(void* dst, uint64_t src, size_t bytes, void* stream) {
    if (const CUresult rc = in_context("cuMemcpyDtoHAsync"); rc != SUCCESS) return rc;
    if (dst == nullptr || !copy_ok(src, bytes, stream)) return INVALID_VALUE;
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    return SUCCESS;
}

// Makes a handle of its own into `set` (a stream or an event).
CUresult make_handle(const char* symbol, std::set<void*>& set, void** out) {
    if (const CUresult rc = in_context(symbol); rc != SUCCESS) return rc;
    if (out == nullptr) return INVALID_VALUE;
    const std::lock_guard<std::mutex> lock(live_mu);
    *out = new char;
    set.insert(*out);
    return SUCCESS;
}

CUresult use_handle(const char* symbol, std::set<void*>& set, void* handle, bool destroy) {
    if (const CUresult rc = in_context(symbol); rc != SUCCESS) return rc;
    const std::lock_guard<std::mutex> lock(live_mu);
    if (set.count(handle) == 0) return INVALID_HANDLE;
    if (destroy) {
        set.erase(handle);
        delete static_cast<char*>(handle);
    }
    return SUCCESS;
}

CUresult stream_create(void** stream, unsigned int /*flags*/) { return make_handle("cuStreamCreate", streams, stream); }
CUresult stream_destroy(void* stream) { return use_handle("cuStreamDestroy", streams, stream, true); }
CUresult stream_synchronize(void* stream) { return use_handle("cuStreamSynchronize", streams, stream, false); }
CUresult event_create(void** event, unsigned int /*flags*/) { return make_handle("cuEventCreate", events, event); }
CUresult event_destroy(void* event) { return use_handle("cuEventDestroy", events, event, true); }
CUresult event_synchronize(void* event) { return use_handle("cuEventSynchronize", events, event, false); }
CUresult event_record(void* event, void* stream) {
    if (stream != nullptr) {
        const std::lock_guard<std::mutex> lock(live_mu);
        if (streams.count(stream) == 0) return INVALID_HANDLE;
    }
    return use_handle("cuEventRecord", events, event, false);
}

CUresult module_load_data(void** module, const void* image) {
    if (const CUresult rc = in_context("cuModuleLoadData"); rc != SUCCESS) return rc;
    if (module == nullptr || image == nullptr ||
        std::memcmp(image,
                    "\x7f"
                    "ELF",
                    4) != 0)
        return INVALID_VALUE;
    // An ELF image's size: its section headers end it (e_shoff + e_shnum * e_shentsize, 64-bit ELF).
    uint64_t shoff = 0;
    uint16_t shentsize = 0, shnum = 0;
    std::memcpy(&shoff, static_cast<const char*>(image) + 0x28, sizeof shoff);
    std::memcpy(&shentsize, static_cast<const char*>(image) + 0x3A, sizeof shentsize);
    std::memcpy(&shnum, static_cast<const char*>(image) + 0x3C, sizeof shnum);
    const std::lock_guard<std::mutex> lock(live_mu);
    *module = new char;
    modules.emplace(*module, std::string(static_cast<const char*>(image), shoff + uint64_t{shnum} * shentsize));
    return SUCCESS;
}

CUresult module_unload(void* module) {
    if (const CUresult rc = in_context("cuModuleUnload"); rc != SUCCESS) return rc;
    const std::lock_guard<std::mutex> lock(live_mu);
    if (modules.erase(module) == 0) return INVALID_HANDLE;
    for (std::string* f : module_functions[module]) {
        functions.erase(f);
        delete f;
    }
    module_functions.erase(module);
    delete static_cast<char*>(module);
    return SUCCESS;
}

CUresult module_get_function(void** function, void* module, const char* name) {
    if (const CUresult rc = in_context("cuModuleGetFunction"); rc != SUCCESS) return rc;
    const std::lock_guard<std::mutex> lock(live_mu);
    const auto it = modules.find(module);
    if (it == modules.end()) return INVALID_HANDLE;
    if (name == nullptr || it->second.find(std::string(name) + '\0') == std::string::npos) return NOT_FOUND;
    auto* f = new std::string(name);
    functions.insert(f);
    module_functions[module].push_back(f);
    *function = f;
    return SUCCESS;
}

// simpler_view, as clc/clc_view.h lays it out.
struct View {
    uint64_t offset;
    uint32_t ndims;
    uint32_t dtype;
    uint32_t shapes[5];
    uint32_t strides[5];
};
static_assert(sizeof(View) == 56);

uint64_t count(const View& v) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < v.ndims && d < 5; ++d) n *= v.shapes[d];
    return n;
}

uint64_t at(const View& v, uint64_t i) {
    uint64_t e = v.offset;
    for (int d = static_cast<int>(v.ndims) - 1; d >= 0; --d) {
        e += (i % v.shapes[d]) * v.strides[d];
        i /= v.shapes[d];
    }
    return e;
}

template <typename T>
T* pointer(void** params, int i) {
    uint64_t p = 0;
    std::memcpy(&p, params[i], sizeof p);
    return reinterpret_cast<T*>(p);
}

View view(void** params, int i) {
    View v{};
    std::memcpy(&v, params[i], sizeof v);
    return v;
}

CUresult launch_kernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned /*shared*/, void* stream, void** params, void** extra) {
    if (const CUresult rc = in_context("cuLaunchKernel"); rc != SUCCESS) return rc;
    std::string name;
    {
        const std::lock_guard<std::mutex> lock(live_mu);
        if (functions.count(static_cast<std::string*>(function)) == 0) return INVALID_HANDLE;
        if (stream != nullptr && streams.count(stream) == 0) return INVALID_HANDLE;
        name = *static_cast<std::string*>(function);
    }
    if (name != "std_vector_add_f32" && name != "std_copy_4") return NOT_SUPPORTED;
    // Both run over one dimension.
    if (params == nullptr || extra != nullptr || gy != 1 || gz != 1 || by != 1 || bz != 1) return INVALID_VALUE;
    const uint64_t threads = uint64_t{gx} * bx;
    if (name == "std_vector_add_f32") {
        const View vx = view(params, 1), vy = view(params, 3), vz = view(params, 5);
        const float* x = pointer<const float>(params, 0);
        const float* y = pointer<const float>(params, 2);
        float* z = pointer<float>(params, 4);
        for (uint64_t i = 0; i < threads && i < count(vz); ++i) z[at(vz, i)] = x[at(vx, i)] + y[at(vy, i)];
        return SUCCESS;
    }
    const View vx = view(params, 1), vz = view(params, 3);  // std_copy_4
    const uint32_t* x = pointer<const uint32_t>(params, 0);
    uint32_t* z = pointer<uint32_t>(params, 2);
    for (uint64_t i = 0; i < threads && i < count(vz); ++i) z[at(vz, i)] = x[at(vx, i)];
    return SUCCESS;
}

struct EntryPoint {
    const char* symbol;
    int version;  // the ABI version it was introduced with
    void* fn;
};

const EntryPoint ENTRY_POINTS[] = {
    {"cuGetErrorName", 6000, reinterpret_cast<void*>(&get_error_name)},
    {"cuGetErrorString", 6000, reinterpret_cast<void*>(&get_error_string)},
    {"cuInit", 2000, reinterpret_cast<void*>(&init)},
    {"cuDriverGetVersion", 2020, reinterpret_cast<void*>(&driver_get_version)},
    {"cuDeviceGetCount", 2000, reinterpret_cast<void*>(&device_get_count)},
    {"cuDeviceGet", 2000, reinterpret_cast<void*>(&device_get)},
    {"cuDeviceGetName", 2000, reinterpret_cast<void*>(&device_get_name)},
    {"cuDeviceGetUuid", 11040, reinterpret_cast<void*>(&device_get_uuid)},
    {"cuDeviceTotalMem", 3020, reinterpret_cast<void*>(&device_total_mem)},
    {"cuDeviceGetAttribute", 2000, reinterpret_cast<void*>(&device_get_attribute)},
    {"cuDevicePrimaryCtxRetain", 7000, reinterpret_cast<void*>(&primary_ctx_retain)},
    {"cuDevicePrimaryCtxRelease", 11000, reinterpret_cast<void*>(&primary_ctx_release)},
    {"cuCtxSetCurrent", 4000, reinterpret_cast<void*>(&ctx_set_current)},
    {"cuMemAlloc", 3020, reinterpret_cast<void*>(&mem_alloc)},
    {"cuMemFree", 3020, reinterpret_cast<void*>(&mem_free)},
    {"cuMemcpyHtoDAsync", 3020, reinterpret_cast<void*>(&memcpy_htod_async)},
    {"cuMemcpyDtoHAsync", 3020, reinterpret_cast<void*>(&memcpy_dtoh_async)},
    {"cuStreamCreate", 2000, reinterpret_cast<void*>(&stream_create)},
    {"cuStreamDestroy", 4000, reinterpret_cast<void*>(&stream_destroy)},
    {"cuStreamSynchronize", 2000, reinterpret_cast<void*>(&stream_synchronize)},
    {"cuEventCreate", 2000, reinterpret_cast<void*>(&event_create)},
    {"cuEventRecord", 2000, reinterpret_cast<void*>(&event_record)},
    {"cuEventSynchronize", 2000, reinterpret_cast<void*>(&event_synchronize)},
    {"cuEventDestroy", 4000, reinterpret_cast<void*>(&event_destroy)},
    {"cuModuleLoadData", 2000, reinterpret_cast<void*>(&module_load_data)},
    {"cuModuleUnload", 2000, reinterpret_cast<void*>(&module_unload)},
    {"cuModuleGetFunction", 2000, reinterpret_cast<void*>(&module_get_function)},
    {"cuLaunchKernel", 4000, reinterpret_cast<void*>(&launch_kernel)},
};

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* symbol, void** pfn,
                                                                               int version, uint64_t flags,
                                                                               int* symbol_status) {
    if (symbol == nullptr || pfn == nullptr || flags != 0) return INVALID_VALUE;
    *pfn = nullptr;
    int status = SYMBOL_NOT_FOUND;
    const char* hidden = std::getenv("SIMPLER_TEST_CUDA_HIDE");
    for (const EntryPoint& e : ENTRY_POINTS) {
        if (std::strcmp(e.symbol, symbol) != 0 || (hidden != nullptr && std::strcmp(hidden, symbol) == 0)) continue;
        status = version >= e.version ? SYMBOL_SUCCESS : VERSION_NOT_SUFFICIENT;
        if (status == SYMBOL_SUCCESS) *pfn = e.fn;
    }
    if (symbol_status != nullptr) *symbol_status = status;
    return status == SYMBOL_SUCCESS ? SUCCESS : NOT_FOUND;
}

// What is alive: allocations, streams, events and primary-context retains, summed.
extern "C" __attribute__((visibility("default"))) int simpler_test_cuda_live() {
    const std::lock_guard<std::mutex> lock(live_mu);
    int retains = 0;
    for (const auto& [dev, n] : context_refs) retains += n;
    return static_cast<int>(allocations.size() + streams.size() + events.size() + modules.size()) + retains;
}
