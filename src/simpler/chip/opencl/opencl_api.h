// OpenClApi: the OpenCL entry points, found at run time in the ICD loader
// (libOpenCL.so.1), so simpler imports and its simulated chips run where no
// OpenCL is installed. Nothing links against libOpenCL.
//
// opencl_api() loads the loader once per process (thread-safe) and answers the
// table, or throws std::runtime_error naming the library, where it was looked
// for and what to install. SIMPLER_OPENCL_LIBRARY names another loader (a
// path or a soname) in place of libOpenCL.so.1.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <string>

namespace simpler::chip::opencl {

struct OpenClApi {
    std::string library;  // what was loaded (the name dlopen was given)

    decltype(&::clGetPlatformIDs) GetPlatformIDs;
    decltype(&::clGetPlatformInfo) GetPlatformInfo;
    decltype(&::clGetDeviceIDs) GetDeviceIDs;
    decltype(&::clGetDeviceInfo) GetDeviceInfo;
    decltype(&::clCreateContext) CreateContext;
    decltype(&::clReleaseContext) ReleaseContext;
    decltype(&::clCreateCommandQueue) CreateCommandQueue;
    decltype(&::clReleaseCommandQueue) ReleaseCommandQueue;
    decltype(&::clCreateBuffer) CreateBuffer;
    decltype(&::clReleaseMemObject) ReleaseMemObject;
    decltype(&::clEnqueueWriteBuffer) EnqueueWriteBuffer;
    decltype(&::clEnqueueReadBuffer) EnqueueReadBuffer;
    decltype(&::clEnqueueCopyBuffer) EnqueueCopyBuffer;
    decltype(&::clEnqueueMapBuffer) EnqueueMapBuffer;
    decltype(&::clEnqueueUnmapMemObject) EnqueueUnmapMemObject;
    decltype(&::clWaitForEvents) WaitForEvents;
    decltype(&::clGetEventInfo) GetEventInfo;
    decltype(&::clReleaseEvent) ReleaseEvent;
    decltype(&::clFlush) Flush;
    decltype(&::clFinish) Finish;
    decltype(&::clCreateProgramWithSource) CreateProgramWithSource;
    decltype(&::clCreateProgramWithBinary) CreateProgramWithBinary;
    decltype(&::clBuildProgram) BuildProgram;
    decltype(&::clGetProgramInfo) GetProgramInfo;
    decltype(&::clGetProgramBuildInfo) GetProgramBuildInfo;
    decltype(&::clReleaseProgram) ReleaseProgram;
    decltype(&::clCreateKernel) CreateKernel;
    decltype(&::clReleaseKernel) ReleaseKernel;
    decltype(&::clSetKernelArg) SetKernelArg;
    decltype(&::clEnqueueNDRangeKernel) EnqueueNDRangeKernel;
};

// The loaded table; throws std::runtime_error (the same message every call)
// when the loader cannot be loaded or lacks an entry point.
const OpenClApi& opencl_api();

// "CL_INVALID_KERNEL_ARGS" for -52; "OpenCL error <n>" for a code it does not know.
std::string cl_error_name(cl_int code);

}  // namespace simpler::chip::opencl
