// The test CUDA driver: a shared library standing in for libcuda.so.1 where
// there is no NVIDIA driver, loaded through SIMPLER_CUDA_LIBRARY. It exports
// the one symbol the project finds by name, cuGetProcAddress_v2, which hands
// out each entry point it has at the ABI version it was introduced with, as
// the real driver does: asked at an older version it answers "version not
// sufficient". It includes no CUDA header, so the types below must match the
// ABI the project binds through cudaTypedefs.h on their own.
//
// Its devices are made up and told by the environment, read when cuInit runs:
//   SIMPLER_TEST_CUDA_DEVICES      how many (default 2)
//   SIMPLER_TEST_CUDA_INIT_RESULT  the CUresult cuInit answers (default 0)
//   SIMPLER_TEST_CUDA_HIDE         an entry point it says it does not have
//   SIMPLER_TEST_CUDA_DRIVER_VERSION  what cuDriverGetVersion says (default 13000)
// Device i is "simpler test GPU i", with UUID bytes 0x<i>0, 0x<i>1, ...,
// (i + 1) GiB of memory, 132 multiprocessors and compute capability 9.0.
//
// It tests the project's code (the binding, the queries, the errors), never
// GPU semantics. Entry points it does not have answer "symbol not found".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using CUresult = int;
constexpr CUresult SUCCESS = 0;
constexpr CUresult INVALID_VALUE = 1;
constexpr CUresult NOT_INITIALIZED = 3;
constexpr CUresult INVALID_DEVICE = 101;
constexpr CUresult NOT_FOUND = 500;

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
        case NOT_INITIALIZED: *out = "CUDA_ERROR_NOT_INITIALIZED"; return SUCCESS;
        case 100: *out = "CUDA_ERROR_NO_DEVICE"; return SUCCESS;
        case INVALID_DEVICE: *out = "CUDA_ERROR_INVALID_DEVICE"; return SUCCESS;
        case NOT_FOUND: *out = "CUDA_ERROR_NOT_FOUND"; return SUCCESS;
        default: *out = nullptr; return INVALID_VALUE;
    }
}

CUresult get_error_string(CUresult error, const char** out) {
    switch (error) {
        case 100: *out = "no CUDA-capable device is detected"; return SUCCESS;
        case NOT_INITIALIZED: *out = "initialization error"; return SUCCESS;
        default: return get_error_name(error, out);
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
