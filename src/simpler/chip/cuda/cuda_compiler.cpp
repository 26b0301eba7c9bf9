#include "simpler/chip/cuda/cuda_compiler.h"

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "simpler/chip/clc/clc_view.h"
#include "simpler/chip/content_hash.h"
#include "simpler/chip/cuda/cuda_dialect.h"
#include "simpler/chip/cuda/nvrtc_api.h"
#include "simpler/chip/private_cache.h"

namespace simpler::chip::cuda {
namespace {

namespace fs = std::filesystem;

constexpr size_t LOG_LIMIT = 4000;

// Where the CUBIN keyed `key` is cached; empty when no private cache folder
// can be had (the source is then compiled every time).
std::string cached_cubin_path(const std::string& key) {
    try {
        return (fs::path(private_cache_folder(requested_cache_dir(), "cuda")) / (key + ".cubin")).string();
    } catch (const std::runtime_error&) {
        return {};
    }
}

std::string program_log(const NvrtcApi& nvrtc, nvrtcProgram p) {
    size_t n = 0;
    if (nvrtc.GetProgramLogSize(p, &n) != NVRTC_SUCCESS || n <= 1) return {};
    std::string s(n, '\0');
    if (nvrtc.GetProgramLog(p, s.data()) != NVRTC_SUCCESS) return {};
    s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
    if (s.size() > LOG_LIMIT) s = s.substr(0, LOG_LIMIT) + "\n...";
    return s;
}

}  // namespace

std::string cuda_program_text(const std::string& source) {
    return std::string(CUDA_DIALECT) + clc::CLC_PRELUDE + "\n#line 1\n" + source;
}

std::string architecture_name(int compute_major, int compute_minor) {
    return "sm_" + std::to_string(compute_major) + std::to_string(compute_minor);
}

Cubin compile_cubin(const std::string& source, const std::string& origin, int compute_major, int compute_minor,
                    const std::string& driver) {
    const NvrtcApi& nvrtc = nvrtc_api();
    const std::string arch = architecture_name(compute_major, compute_minor);
    const std::vector<std::string> options = {"--gpu-architecture=" + arch, "--device-as-default-execution-space",
                                              "--std=c++17", "-DSIMPLER_CUDA=1"};
    const std::string text = cuda_program_text(source);
    Sha256 h;
    h.update_field("simpler cuda program v1");
    h.update_field(text);
    for (const std::string& o : options) h.update_field(o);
    h.update_field(std::to_string(nvrtc.major) + "." + std::to_string(nvrtc.minor));
    h.update_field(driver);
    const std::string cached = cached_cubin_path(h.hex());
    if (!cached.empty())
        if (std::optional<std::string> bytes = read_private_file(cached); bytes && !bytes->empty())
            return {std::move(*bytes), true};

    const std::string what =
        origin + " (NVRTC " + std::to_string(nvrtc.major) + "." + std::to_string(nvrtc.minor) + ", " + arch + ")";
    nvrtcProgram p = nullptr;
    if (const nvrtcResult rc = nvrtc.CreateProgram(&p, text.c_str(), origin.c_str(), 0, nullptr, nullptr);
        rc != NVRTC_SUCCESS)
        throw std::runtime_error("CUDA: " + what + ": nvrtcCreateProgram failed: " + nvrtc.GetErrorString(rc));
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    const nvrtcResult rc = nvrtc.CompileProgram(p, static_cast<int>(argv.size()), argv.data());
    if (rc != NVRTC_SUCCESS) {
        const std::string log = program_log(nvrtc, p);
        nvrtc.DestroyProgram(&p);
        throw std::runtime_error("CUDA: " + what + " does not compile (" + nvrtc.GetErrorString(rc) + ")" +
                                 (log.empty() ? "" : ":\n" + log));
    }
    size_t size = 0;
    Cubin out;
    if (nvrtc.GetCUBINSize(p, &size) == NVRTC_SUCCESS && size > 0) {
        out.bytes.resize(size);
        if (nvrtc.GetCUBIN(p, out.bytes.data()) != NVRTC_SUCCESS) out.bytes.clear();
    }
    nvrtc.DestroyProgram(&p);
    if (out.bytes.empty()) throw std::runtime_error("CUDA: " + what + ": NVRTC gave no CUBIN");
    if (!cached.empty()) (void)write_private_file(cached, out.bytes);  // a failure only costs the cache
    return out;
}

}  // namespace simpler::chip::cuda
