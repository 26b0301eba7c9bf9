#include "simpler/chip/opencl/opencl_program.h"

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

#include "simpler/chip/clc/clc_view.h"
#include "simpler/chip/content_hash.h"
#include "simpler/chip/opencl/opencl_platforms.h"
#include "simpler/chip/private_cache.h"

namespace simpler::chip::opencl {
namespace {

namespace fs = std::filesystem;

constexpr const char* BUILD_OPTIONS = "-cl-std=CL1.2";
constexpr size_t LOG_LIMIT = 4000;

std::string platform_name(const OpenClApi& cl, cl_device_id d) {
    cl_platform_id p = nullptr;
    if (cl.GetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof(cl_platform_id), static_cast<void*>(&p), nullptr) != CL_SUCCESS)
        return {};
    return platform_text(p, CL_PLATFORM_NAME);
}

std::string build_log(const OpenClApi& cl, cl_program p, cl_device_id d) {
    size_t n = 0;
    if (cl.GetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    if (cl.GetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, n, s.data(), nullptr) != CL_SUCCESS) return {};
    s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
    if (s.size() > LOG_LIMIT) s = s.substr(0, LOG_LIMIT) + "\n...";
    return s;
}

// Writes the program's binary to `path` (private_cache.h); failures only cost the cache.
void write_binary(const OpenClApi& cl, cl_program p, const std::string& path) {
    size_t size = 0;
    if (cl.GetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0) return;
    std::string bytes(size, '\0');
    unsigned char* where = reinterpret_cast<unsigned char*>(bytes.data());
    if (cl.GetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof where, static_cast<void*>(&where), nullptr) != CL_SUCCESS)
        return;
    (void)write_private_file(path, bytes);  // a failure only costs the cache
}

// Where this device's binary of the program keyed `key` is cached; empty when
// no private cache folder can be had (the program is then built every time).
std::string cached_binary_path(const std::string& key) {
    try {
        return (fs::path(private_cache_folder(requested_cache_dir(), "opencl")) / (key + ".bin")).string();
    } catch (const std::runtime_error&) {
        return {};
    }
}

}  // namespace

OpenClProgram::OpenClProgram(cl_context context, cl_device_id device, const std::string& source,
                             const std::string& origin)
    : cl_(opencl_api()), origin_(origin), device_name_(device_text(device, CL_DEVICE_NAME)) {
    const std::string text = std::string(clc::CLC_PRELUDE) + "\n#line 1\n" + source;
    Sha256 h;
    h.update_field("simpler opencl program v1");
    h.update_field(text);
    h.update_field(BUILD_OPTIONS);
    h.update_field(platform_name(cl_, device));
    h.update_field(device_name_);
    h.update_field(device_text(device, CL_DEVICE_VERSION));
    h.update_field(device_text(device, CL_DRIVER_VERSION));
    const std::string cached = cached_binary_path(h.hex());

    cl_int rc = CL_SUCCESS;
    if (const std::optional<std::string> binary = cached.empty() ? std::nullopt : read_private_file(cached);
        binary && !binary->empty()) {
        const auto* bytes = reinterpret_cast<const unsigned char*>(binary->data());
        const size_t size = binary->size();
        cl_int status = CL_SUCCESS;
        cl_program p = cl_.CreateProgramWithBinary(context, 1, &device, &size, &bytes, &status, &rc);
        if (rc == CL_SUCCESS && status == CL_SUCCESS &&
            cl_.BuildProgram(p, 1, &device, BUILD_OPTIONS, nullptr, nullptr) == CL_SUCCESS) {
            program_ = p;
            from_cache_ = true;
            return;
        }
        if (p != nullptr) cl_.ReleaseProgram(p);  // refused: build from source below
    }
    const char* src = text.c_str();
    const size_t len = text.size();
    program_ = cl_.CreateProgramWithSource(context, 1, &src, &len, &rc);
    if (rc != CL_SUCCESS)
        throw std::runtime_error("OpenCL: " + origin_ + ": clCreateProgramWithSource failed on device '" +
                                 device_name_ + "': " + cl_error_name(rc));
    rc = cl_.BuildProgram(program_, 1, &device, BUILD_OPTIONS, nullptr, nullptr);
    if (rc != CL_SUCCESS) {
        const std::string log = build_log(cl_, program_, device);
        cl_.ReleaseProgram(program_);
        throw std::runtime_error("OpenCL: " + origin_ + " does not build on device '" + device_name_ + "' (" +
                                 cl_error_name(rc) + ")" + (log.empty() ? "" : ":\n" + log));
    }
    if (!cached.empty()) write_binary(cl_, program_, cached);
}

OpenClProgram::~OpenClProgram() {
    for (auto& [name, k] : kernels_) cl_.ReleaseKernel(k);
    if (program_ != nullptr) cl_.ReleaseProgram(program_);
}

cl_kernel OpenClProgram::kernel(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = kernels_.find(name); it != kernels_.end()) return it->second;
    cl_int rc = CL_SUCCESS;
    cl_kernel k = cl_.CreateKernel(program_, name.c_str(), &rc);
    if (rc != CL_SUCCESS)
        throw std::runtime_error("OpenCL: " + origin_ + " has no kernel '" + name + "' on device '" + device_name_ +
                                 "' (" + cl_error_name(rc) + ")");
    kernels_.emplace(name, k);
    return k;
}

}  // namespace simpler::chip::opencl
