/* StarPU on the workloads of bench_alternatives.py, for the comparison in docs/benchmarks/notes.md.
 * Not part of the build (StarPU is not a project dependency). On Debian:
 *
 *   apt-get install libstarpu-dev
 *   cc -O2 benchmarks/starpu_alternative.c $(pkg-config --cflags --libs starpu-1.3) -o /tmp/starpu_alternative
 *   STARPU_NCPU=2 STARPU_NCUDA=0 STARPU_NOPENCL=0 STARPU_SILENT=1 /tmp/starpu_alternative [rounds]
 *
 * StarPU's workers are threads of the one process and its tasks are C functions (codelets): a
 * task hands a pointer to a thread, not bytes to another process. The four workloads:
 *   round trip: one empty synchronous task, submitted and waited for (median of 1,000 calls);
 *   independent: 20,000 empty tasks, then starpu_task_wait_for_all;
 *   chain: 5,000 tasks RW on one registered int64 (x -> x + 1; StarPU orders them by its
 *     implicit data dependencies); the final value is checked;
 *   64 MiB: memcpy from a source array into a registered vector, one task RW adding 1 to every
 *     float, then the vector acquired for reading in main memory; the bytes are checked.
 * Each is the median over the rounds (default 5), after a warm-up. */
#include <starpu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void empty_fn(void *buffers[], void *arg) {
    (void)buffers;
    (void)arg;
}

static void inc_fn(void *buffers[], void *arg) {
    (void)arg;
    int64_t *x = (int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]);
    *x += 1;
}

static void add_one_fn(void *buffers[], void *arg) {
    (void)arg;
    float *v = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; i++) v[i] += 1.0f;
}

static struct starpu_codelet empty_cl = {.cpu_funcs = {empty_fn}, .nbuffers = 0};
static struct starpu_codelet inc_cl = {.cpu_funcs = {inc_fn}, .nbuffers = 1, .modes = {STARPU_RW}};
static struct starpu_codelet add_cl = {.cpu_funcs = {add_one_fn}, .nbuffers = 1, .modes = {STARPU_RW}};

static void submit(struct starpu_codelet *cl, starpu_data_handle_t h, int synchronous) {
    struct starpu_task *t = starpu_task_create();
    t->cl = cl;
    if (h) t->handles[0] = h;
    t->synchronous = synchronous;
    if (starpu_task_submit(t) != 0) {
        fprintf(stderr, "starpu_task_submit failed\n");
        exit(1);
    }
}

static double round_trip_us(int k) {
    double *v = malloc(sizeof(double) * (size_t)k);
    for (int i = 0; i < k; i++) {
        double t0 = now();
        submit(&empty_cl, NULL, 1);
        v[i] = (now() - t0) * 1e6;
    }
    double m = median(v, k);
    free(v);
    return m;
}

static double independent_s(int n) {
    double t0 = now();
    for (int i = 0; i < n; i++) submit(&empty_cl, NULL, 0);
    starpu_task_wait_for_all();
    return now() - t0;
}

static double chain_s(int n) {
    int64_t x = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof x);
    double t0 = now();
    for (int i = 0; i < n; i++) submit(&inc_cl, h, 0);
    starpu_task_wait_for_all();
    starpu_data_acquire(h, STARPU_R);
    double dt = now() - t0;
    int64_t got = x;
    starpu_data_release(h);
    starpu_data_unregister(h);
    if (got != n) {
        fprintf(stderr, "chain ended at %lld, not %d\n", (long long)got, n);
        exit(1);
    }
    return dt;
}

static double big_s(const float *src, float *buf, unsigned n) {
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)buf, n, sizeof(float));
    double t0 = now();
    starpu_data_acquire(h, STARPU_W);
    memcpy(buf, src, sizeof(float) * n);
    starpu_data_release(h);
    submit(&add_cl, h, 0);
    starpu_data_acquire(h, STARPU_R);
    double dt = now() - t0;
    for (unsigned i = 0; i < n; i++)
        if (buf[i] != src[i] + 1.0f) {
            fprintf(stderr, "64 MiB result differs at %u\n", i);
            exit(1);
        }
    starpu_data_release(h);
    starpu_data_unregister(h);
    return dt;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1 || rounds > 100) rounds = 5;
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = 2;
    conf.ncuda = 0;
    conf.nopencl = 0;
    if (starpu_init(&conf) != 0) {
        fprintf(stderr, "starpu_init failed\n");
        return 77;
    }
    const unsigned n = (64u << 20) / sizeof(float);
    float *src = malloc(sizeof(float) * n), *buf = malloc(sizeof(float) * n);
    for (unsigned i = 0; i < n; i++) src[i] = (float)(i % 65536u);
    double rt[100], ind[100], ch[100], big[100];
    round_trip_us(100), independent_s(20000), chain_s(5000), big_s(src, buf, n); /* warm-up */
    for (int r = 0; r < rounds; r++) rt[r] = round_trip_us(1000);
    for (int r = 0; r < rounds; r++) ind[r] = independent_s(20000);
    for (int r = 0; r < rounds; r++) ch[r] = chain_s(5000);
    for (int r = 0; r < rounds; r++) big[r] = big_s(src, buf, n);
    printf("| StarPU %d.%d.%d, 2 CPU workers (threads, C codelets) | %.1f µs (median of 1,000 calls) | "
           "%.0f tasks/s (%.3f s for 20,000) | %.0f tasks/s (%.3f s for 5,000) | %.1f ms |\n",
           STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION, median(rt, rounds), 20000 / median(ind, rounds), median(ind, rounds),
           5000 / median(ch, rounds), median(ch, rounds), median(big, rounds) * 1e3);
    free(src);
    free(buf);
    starpu_shutdown();
    return 0;
}
