// Fuzzes the reading of a user's OpenCL C source for its kernel names
// (chip/opencl_source.h): whatever the text, opencl_kernel_names() returns,
// and every name it returns is a non-empty identifier that occurs in the text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "simpler/chip/opencl_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const std::string& name : simpler::chip::opencl_kernel_names(text)) {
        if (name.empty() || text.find(name) == std::string_view::npos) std::abort();
        for (const char c : name)
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) std::abort();
    }
    return 0;
}
