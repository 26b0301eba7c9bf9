// two kernels, an attribute, a comment and a string
#define S "kernel void not_one(void)"
__kernel void saxpy(__global const float* x, const simpler_view vx, __global float* y, const simpler_view vy,
                    const ulong a) {
    const ulong i = get_global_id(0);
    if (i < simpler_count(vy)) y[simpler_at(vy, i)] += as_float((uint)a) * x[simpler_at(vx, i)];
}
kernel __attribute__((reqd_work_group_size(16, 16, 1))) void tile(__global float* t) { /* kernel void x() */ }
