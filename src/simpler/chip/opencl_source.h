// OpenCL C kernels as chip callables: a source file (`*.cl`) a chip loads like
// a kernel library, whose every `__kernel` function becomes a kernel of the
// registry (kernel_registry.h) and a callable named "opencl:<kernel>" that
// runs that one kernel on a task's arguments. Only an OpenCL chip runs them
// (opencl/opencl_device.h builds the source in the chip process); on another
// device such a kernel fails its task saying so.
//
// opencl_kernel_names() finds the kernels a source defines without an OpenCL
// compiler (the parent checks names before any chip exists): each `kernel` or
// `__kernel` keyword, outside comments and literals, followed by attributes,
// `void` and the kernel's name. Pure functions over the text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace simpler::chip {

inline constexpr std::string_view OPENCL_SOURCE_SUFFIX = ".cl";
inline constexpr std::string_view OPENCL_CALLABLE_PREFIX = "opencl:";

// True when `path` names OpenCL C source (it ends in OPENCL_SOURCE_SUFFIX).
bool is_opencl_source_path(std::string_view path) noexcept;

// The names of the `__kernel` functions `source` defines, in order.
std::vector<std::string> opencl_kernel_names(std::string_view source);

}  // namespace simpler::chip
