#include "simpler/chip/opencl/opencl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "simpler/chip/runtime_library.h"

namespace simpler::chip::opencl {
namespace {

constexpr const char* DEFAULT_LIBRARY = "libOpenCL.so.1";

struct Loaded {
    OpenClApi api{};
    std::string error;  // non-empty: loading failed, and why
};

Loaded load() {
    Loaded l;
    const RuntimeLibrary lib = choose_runtime_library("SIMPLER_OPENCL_LIBRARY", DEFAULT_LIBRARY);
    const std::string& name = lib.name;
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        l.error = "OpenCL: cannot load the ICD loader " + runtime_library_not_loaded(lib, dlerror()) +
                  ". Install an OpenCL ICD loader (Debian/Ubuntu: ocl-icd-libopencl1) and a driver for the device "
                  "(pocl-opencl-icd for CPUs, or the GPU vendor's), or set SIMPLER_OPENCL_LIBRARY to the loader";
        return l;
    }
    OpenClApi& a = l.api;
    a.library = name;
    std::string missing;
    bind_entry_point(handle, "clGetPlatformIDs", a.GetPlatformIDs, missing);
    bind_entry_point(handle, "clGetPlatformInfo", a.GetPlatformInfo, missing);
    bind_entry_point(handle, "clGetDeviceIDs", a.GetDeviceIDs, missing);
    bind_entry_point(handle, "clGetDeviceInfo", a.GetDeviceInfo, missing);
    bind_entry_point(handle, "clCreateContext", a.CreateContext, missing);
    bind_entry_point(handle, "clReleaseContext", a.ReleaseContext, missing);
    bind_entry_point(handle, "clCreateCommandQueue", a.CreateCommandQueue, missing);
    bind_entry_point(handle, "clReleaseCommandQueue", a.ReleaseCommandQueue, missing);
    bind_entry_point(handle, "clCreateBuffer", a.CreateBuffer, missing);
    bind_entry_point(handle, "clReleaseMemObject", a.ReleaseMemObject, missing);
    bind_entry_point(handle, "clEnqueueWriteBuffer", a.EnqueueWriteBuffer, missing);
    bind_entry_point(handle, "clEnqueueReadBuffer", a.EnqueueReadBuffer, missing);
    bind_entry_point(handle, "clEnqueueCopyBuffer", a.EnqueueCopyBuffer, missing);
    bind_entry_point(handle, "clEnqueueMapBuffer", a.EnqueueMapBuffer, missing);
    bind_entry_point(handle, "clEnqueueUnmapMemObject", a.EnqueueUnmapMemObject, missing);
    bind_entry_point(handle, "clWaitForEvents", a.WaitForEvents, missing);
    bind_entry_point(handle, "clGetEventInfo", a.GetEventInfo, missing);
    bind_entry_point(handle, "clReleaseEvent", a.ReleaseEvent, missing);
    bind_entry_point(handle, "clFlush", a.Flush, missing);
    bind_entry_point(handle, "clFinish", a.Finish, missing);
    bind_entry_point(handle, "clCreateProgramWithSource", a.CreateProgramWithSource, missing);
    bind_entry_point(handle, "clCreateProgramWithBinary", a.CreateProgramWithBinary, missing);
    bind_entry_point(handle, "clBuildProgram", a.BuildProgram, missing);
    bind_entry_point(handle, "clGetProgramInfo", a.GetProgramInfo, missing);
    bind_entry_point(handle, "clGetProgramBuildInfo", a.GetProgramBuildInfo, missing);
    bind_entry_point(handle, "clReleaseProgram", a.ReleaseProgram, missing);
    bind_entry_point(handle, "clCreateKernel", a.CreateKernel, missing);
    bind_entry_point(handle, "clReleaseKernel", a.ReleaseKernel, missing);
    bind_entry_point(handle, "clSetKernelArg", a.SetKernelArg, missing);
    bind_entry_point(handle, "clEnqueueNDRangeKernel", a.EnqueueNDRangeKernel, missing);
    if (!missing.empty()) {
        l.error = "OpenCL: the ICD loader " + name + " has no " + missing + " (it is not an OpenCL 1.2 loader)";
        dlclose(handle);
    }
    // Otherwise the loader stays loaded for the process's lifetime.
    return l;
}

}  // namespace

const OpenClApi& opencl_api() {
    static const Loaded loaded = load();
    if (!loaded.error.empty()) throw std::runtime_error(loaded.error);
    return loaded.api;
}

std::string cl_error_name(cl_int code) {
    switch (code) {
#define SIMPLER_CL_ERROR(name) \
    case name: return #name;
        SIMPLER_CL_ERROR(CL_SUCCESS)
        SIMPLER_CL_ERROR(CL_DEVICE_NOT_FOUND)
        SIMPLER_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
        SIMPLER_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
        SIMPLER_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        SIMPLER_CL_ERROR(CL_OUT_OF_RESOURCES)
        SIMPLER_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
        SIMPLER_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
        SIMPLER_CL_ERROR(CL_MEM_COPY_OVERLAP)
        SIMPLER_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
        SIMPLER_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        SIMPLER_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
        SIMPLER_CL_ERROR(CL_MAP_FAILURE)
        SIMPLER_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        SIMPLER_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        SIMPLER_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
        SIMPLER_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
        SIMPLER_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
        SIMPLER_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
        SIMPLER_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        SIMPLER_CL_ERROR(CL_INVALID_VALUE)
        SIMPLER_CL_ERROR(CL_INVALID_DEVICE_TYPE)
        SIMPLER_CL_ERROR(CL_INVALID_PLATFORM)
        SIMPLER_CL_ERROR(CL_INVALID_DEVICE)
        SIMPLER_CL_ERROR(CL_INVALID_CONTEXT)
        SIMPLER_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
        SIMPLER_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
        SIMPLER_CL_ERROR(CL_INVALID_HOST_PTR)
        SIMPLER_CL_ERROR(CL_INVALID_MEM_OBJECT)
        SIMPLER_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        SIMPLER_CL_ERROR(CL_INVALID_IMAGE_SIZE)
        SIMPLER_CL_ERROR(CL_INVALID_SAMPLER)
        SIMPLER_CL_ERROR(CL_INVALID_BINARY)
        SIMPLER_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
        SIMPLER_CL_ERROR(CL_INVALID_PROGRAM)
        SIMPLER_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
        SIMPLER_CL_ERROR(CL_INVALID_KERNEL_NAME)
        SIMPLER_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
        SIMPLER_CL_ERROR(CL_INVALID_KERNEL)
        SIMPLER_CL_ERROR(CL_INVALID_ARG_INDEX)
        SIMPLER_CL_ERROR(CL_INVALID_ARG_VALUE)
        SIMPLER_CL_ERROR(CL_INVALID_ARG_SIZE)
        SIMPLER_CL_ERROR(CL_INVALID_KERNEL_ARGS)
        SIMPLER_CL_ERROR(CL_INVALID_WORK_DIMENSION)
        SIMPLER_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
        SIMPLER_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
        SIMPLER_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
        SIMPLER_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
        SIMPLER_CL_ERROR(CL_INVALID_EVENT)
        SIMPLER_CL_ERROR(CL_INVALID_OPERATION)
        SIMPLER_CL_ERROR(CL_INVALID_GL_OBJECT)
        SIMPLER_CL_ERROR(CL_INVALID_BUFFER_SIZE)
        SIMPLER_CL_ERROR(CL_INVALID_MIP_LEVEL)
        SIMPLER_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
        SIMPLER_CL_ERROR(CL_INVALID_PROPERTY)
        SIMPLER_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
        SIMPLER_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
        SIMPLER_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
        SIMPLER_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef SIMPLER_CL_ERROR
        case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
        default: return "OpenCL error " + std::to_string(code);
    }
}

}  // namespace simpler::chip::opencl
