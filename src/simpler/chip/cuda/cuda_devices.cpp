#include "simpler/chip/cuda/cuda_devices.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "simpler/chip/cuda/cuda_api.h"

namespace simpler::chip::cuda {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// Throws naming the query and the CUresult unless `rc` is CUDA_SUCCESS.
void check(const CudaApi& api, CUresult rc, const std::string& what) {
    if (rc != CUDA_SUCCESS)
        throw std::runtime_error("CUDA: " + what + " failed: " + cu_error_name(api, rc) + " (driver " + api.library +
                                 ", CUDA " + cuda_version_text(api.driver_version) + ")");
}

int attribute(const CudaApi& api, CUdevice device, CUdevice_attribute which, const char* name, int ordinal) {
    int value = 0;
    check(api, api.DeviceGetAttribute(&value, which, device),
          std::string("cuDeviceGetAttribute(") + name + ") of device " + std::to_string(ordinal));
    return value;
}

CudaDeviceInfo describe(const CudaApi& api, int ordinal) {
    const std::string of = " of device " + std::to_string(ordinal);
    CUdevice device = 0;
    check(api, api.DeviceGet(&device, ordinal), "cuDeviceGet" + of);
    CudaDeviceInfo d;
    d.ordinal = ordinal;
    char name[256] = {};
    check(api, api.DeviceGetName(name, sizeof name - 1, device), "cuDeviceGetName" + of);
    d.name = name;
    CUuuid uuid{};
    check(api, api.DeviceGetUuid(&uuid, device), "cuDeviceGetUuid" + of);
    unsigned char bytes[16];
    for (size_t i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(uuid.bytes[i]);
    d.uuid = uuid_text(bytes);
    size_t memory = 0;
    check(api, api.DeviceTotalMem(&memory, device), "cuDeviceTotalMem" + of);
    d.memory = memory;
    d.multiprocessors = static_cast<uint32_t>(
        std::max(0, attribute(api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", ordinal)));
    d.compute_major =
        attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", ordinal);
    d.compute_minor =
        attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", ordinal);
    d.integrated = attribute(api, device, CU_DEVICE_ATTRIBUTE_INTEGRATED, "INTEGRATED", ordinal) != 0;
    return d;
}

}  // namespace

std::string uuid_text(const unsigned char (&bytes)[16]) {
    static constexpr char HEX[] = "0123456789abcdef";
    std::string out = "GPU-";
    for (size_t i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        out += HEX[bytes[i] >> 4];
        out += HEX[bytes[i] & 0xF];
    }
    return out;
}

DeviceFacts cuda_facts(const CudaDeviceInfo& device, int driver_version) {
    DeviceFacts f;
    f.kind = DeviceKind::CUDA;
    f.platform = "NVIDIA CUDA";
    f.name = device.name;
    f.version = "CUDA " + cuda_version_text(driver_version) + " driver, compute capability " +
                std::to_string(device.compute_major) + "." + std::to_string(device.compute_minor);
    f.uuid = device.uuid;
    f.memory_bytes = device.memory;
    f.compute_units = device.multiprocessors;
    f.concurrent_kernels = 1;
    f.unified_host_memory = false;
    return f;
}

bool device_matches(const CudaDeviceInfo& device, const std::string& filter) {
    if (filter.empty()) return true;
    const std::string want = lower(filter);
    if (lower(device.name).find(want) != std::string::npos) return true;
    const std::string uuid = lower(device.uuid);
    return uuid.starts_with(want) || uuid.substr(4).starts_with(want);
}

std::vector<CudaDeviceInfo> find_cuda_devices(const std::string& filter) {
    const CudaApi& api = cuda_api();
    check(api, api.Init(0), "cuInit");
    int count = 0;
    check(api, api.DeviceGetCount(&count), "cuDeviceGetCount");
    if (count <= 0)
        throw std::runtime_error("CUDA: the driver " + api.library + " (CUDA " + cuda_version_text(api.driver_version) +
                                 ") reports no device (CUDA_VISIBLE_DEVICES may hide them)");
    std::vector<CudaDeviceInfo> found;
    std::string seen;
    for (int i = 0; i < count; ++i) {
        CudaDeviceInfo d = describe(api, i);
        seen += (seen.empty() ? "'" : ", '") + d.name + "' " + d.uuid;
        if (device_matches(d, filter)) found.push_back(std::move(d));
    }
    if (found.empty())
        throw std::runtime_error("CUDA: no device's name contains, nor its UUID begins with, '" + filter + "' (found " +
                                 seen + ")");
    return found;
}

}  // namespace simpler::chip::cuda
