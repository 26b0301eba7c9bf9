#include "simpler/chip/opencl/opencl_platforms.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace simpler::chip::opencl {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

template <typename T>
T device_value(const OpenClApi& cl, cl_device_id d, cl_device_info what) {
    T v{};
    if (cl.GetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
    return v;
}

std::string where_drivers_are_listed() {
    const char* vendors = std::getenv("OCL_ICD_VENDORS");
    if (vendors != nullptr && *vendors != '\0') return std::string("OCL_ICD_VENDORS=") + vendors;
    return "/etc/OpenCL/vendors/*.icd (OCL_ICD_VENDORS is not set)";
}

}  // namespace

std::string platform_text(cl_platform_id p, cl_platform_info what) {
    const OpenClApi& cl = opencl_api();
    size_t n = 0;
    if (cl.GetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    if (cl.GetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
    s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
    return s;
}

std::string device_text(cl_device_id d, cl_device_info what) {
    const OpenClApi& cl = opencl_api();
    size_t n = 0;
    if (cl.GetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    if (cl.GetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
    s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
    return s;
}

std::vector<OpenClDeviceInfo> find_opencl_devices(const std::string& platform_filter) {
    const OpenClApi& cl = opencl_api();
    cl_uint count = 0;
    const cl_int rc = cl.GetPlatformIDs(0, nullptr, &count);
    if ((rc != CL_SUCCESS && rc != -1001) || (rc == CL_SUCCESS && count == 0) || rc == -1001)
        throw std::runtime_error("OpenCL: the ICD loader " + cl.library + " found no platform (" +
                                 (rc == CL_SUCCESS ? std::string("none listed") : cl_error_name(rc)) +
                                 "); it reads the drivers listed in " + where_drivers_are_listed() +
                                 ". Install a driver for the device (pocl-opencl-icd for CPUs, or the GPU vendor's)");
    std::vector<cl_platform_id> platforms(count);
    if (const cl_int r = cl.GetPlatformIDs(count, platforms.data(), nullptr); r != CL_SUCCESS)
        throw std::runtime_error("OpenCL: clGetPlatformIDs failed: " + cl_error_name(r));
    const std::string want = lower(platform_filter);
    std::vector<OpenClDeviceInfo> found;
    std::string seen;
    bool matched = false;
    for (cl_platform_id p : platforms) {
        const std::string pname = platform_text(p, CL_PLATFORM_NAME);
        seen += (seen.empty() ? "'" : ", '") + pname + "'";
        if (!want.empty() && lower(pname).find(want) == std::string::npos) continue;
        matched = true;
        cl_uint n = 0;
        if (cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
        std::vector<cl_device_id> devices(n);
        if (cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr) != CL_SUCCESS) continue;
        for (cl_device_id d : devices) {
            OpenClDeviceInfo info;
            info.platform = p;
            info.device = d;
            info.platform_name = pname;
            info.name = device_text(d, CL_DEVICE_NAME);
            info.version = device_text(d, CL_DEVICE_VERSION);
            info.global_memory = device_value<cl_ulong>(cl, d, CL_DEVICE_GLOBAL_MEM_SIZE);
            info.max_allocation = device_value<cl_ulong>(cl, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
            info.compute_units = device_value<cl_uint>(cl, d, CL_DEVICE_MAX_COMPUTE_UNITS);
            info.unified_host_memory = device_value<cl_bool>(cl, d, CL_DEVICE_HOST_UNIFIED_MEMORY) == CL_TRUE;
            info.fp64 = device_value<cl_device_fp_config>(cl, d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
            found.push_back(std::move(info));
        }
    }
    if (!matched)
        throw std::runtime_error("OpenCL: no platform's name contains '" + platform_filter + "' (found " + seen + ")");
    if (found.empty())
        throw std::runtime_error(
            "OpenCL: " +
            std::string(want.empty() ? "the platforms " : "the platforms matching '" + platform_filter + "' ") + "(" +
            seen + ") have no device");
    return found;
}

}  // namespace simpler::chip::opencl
