// A user's CUDA kernel as a chip runs one: a tensor is its buffer and its
// simpler_view, a scalar a 64-bit value (a FLOAT32 one in the low 32 bits).
// y = a * x + y over any strides.
__kernel void saxpy(const float* x, const simpler_view vx, float* y, const simpler_view vy, const ulong a) {
    const ulong i = get_global_id(0);
    if (i >= simpler_count(vy)) return;
    y[simpler_at(vy, i)] = as_float((uint)a) * x[simpler_at(vx, i)] + y[simpler_at(vy, i)];
}

// The same in CUDA's own words: the dialect is a convenience, not a must.
extern "C" __global__ void saxpy_cuda(const float* x, simpler_view vx, float* y, simpler_view vy,
                                      unsigned long long a) {
    const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= simpler_count(vy)) return;
    y[simpler_at(vy, i)] = __uint_as_float((unsigned)a) * x[simpler_at(vx, i)] + y[simpler_at(vy, i)];
}
