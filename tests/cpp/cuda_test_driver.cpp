// The test CUDA driver: a shared library standing in for libcuda.so.1 where
// there is no NVIDIA driver, loaded through SIMPLER_CUDA_LIBRARY. It exports the
// one symbol the project finds by name, cuGetProcAddress_v2, which finds
// nothing yet (CUDA_ERROR_NOT_FOUND, 500): the catalog's tests tell "a driver
// is there" from "no driver" with it. It tests the project's code, never GPU
// semantics.
#include <cstdint>

extern "C" __attribute__((visibility("default"))) int cuGetProcAddress_v2(const char* /*symbol*/, void** pfn,
                                                                          int /*version*/, uint64_t /*flags*/,
                                                                          int* symbol_status) {
    if (pfn != nullptr) *pfn = nullptr;
    if (symbol_status != nullptr) *symbol_status = 1;  // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
    return 500;                                        // CUDA_ERROR_NOT_FOUND
}
