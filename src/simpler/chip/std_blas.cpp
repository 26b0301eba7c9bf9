#include "simpler/chip/std_blas.h"

#ifdef SIMPLER_HAVE_OPENBLAS
#include <climits>

namespace simpler::chip {

BlasLayout blas_layout(uint32_t rows, uint32_t cols, uint32_t s0, uint32_t s1) noexcept {
    if (rows > INT_MAX || cols > INT_MAX) return {};
    const uint32_t row_stride = rows == 1 ? cols : s0;
    const uint32_t col_stride = cols == 1 ? 1 : s1;
    if (col_stride == 1 && row_stride >= cols && row_stride <= INT_MAX)
        return {.ok = true, .transposed = false, .ld = static_cast<int>(row_stride)};
    // The transpose: element (i, j) at i + j * s1, a row-major [cols, rows] with ld s1.
    const uint32_t t_row_stride = cols == 1 ? rows : s1;
    const uint32_t t_col_stride = rows == 1 ? 1 : s0;
    if (t_col_stride == 1 && t_row_stride >= rows && t_row_stride <= INT_MAX)
        return {.ok = true, .transposed = true, .ld = static_cast<int>(t_row_stride)};
    return {};
}

std::mutex& blas_mutex() noexcept {
    static std::mutex m;
    return m;
}

}  // namespace simpler::chip
#endif
