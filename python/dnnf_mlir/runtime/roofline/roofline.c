/* The two measurements of a CPU's roofline (dnnf_mlir/roofline.py builds this with
   clang for the host CPU, LANES the f32 lanes of its widest vectors):
   - dnnf_fma_seconds: ACCUMULATORS independent chains of vector FMAs, enough to cover
     the FMA latency on every pipe, so that one core issues FMAs at its peak rate;
   - dnnf_triad_seconds: STREAM's triad a = b + s * c over arrays far larger than the
     caches, split among THREADS pthreads, the best of REPS timed passes. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <time.h>

#define ACCUMULATORS 12
typedef float vec __attribute__((vector_size(LANES * 4)));

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Seconds of ITERATIONS x ACCUMULATORS x LANES FMAs; *sink keeps the result alive. */
double dnnf_fma_seconds(long iterations, float *sink) {
  vec acc[ACCUMULATORS], scale, shift;
  for (int k = 0; k < LANES; ++k) {
    scale[k] = 0.999999f;
    shift[k] = 1e-7f * k;
  }
  for (int j = 0; j < ACCUMULATORS; ++j)
    for (int k = 0; k < LANES; ++k) acc[j][k] = (float)(j + k);
  double start = now();
  for (long i = 0; i < iterations; ++i) {
    for (int j = 0; j < ACCUMULATORS; ++j) acc[j] = acc[j] * scale + shift;
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[ACCUMULATORS - 1])); /* no reassociation into fewer chains */
  }
  double seconds = now() - start;
  float total = 0;
  for (int j = 0; j < ACCUMULATORS; ++j)
    for (int k = 0; k < LANES; ++k) total += acc[j][k];
  *sink = total;
  return seconds;
}

typedef struct {
  float *a, *b, *c;
  size_t begin, end;
  int reps;
  pthread_barrier_t *barrier;
  double best;
} triad_part;

static void *triad_worker(void *argument) {
  triad_part *part = argument;
  part->best = 1e30;
  for (int rep = -1; rep < part->reps; ++rep) { /* rep -1: first touch, untimed */
    pthread_barrier_wait(part->barrier);
    double start = now();
    for (size_t i = part->begin; i < part->end; ++i) part->a[i] = part->b[i] + 3.0f * part->c[i];
    pthread_barrier_wait(part->barrier);
    double seconds = now() - start;
    if (rep >= 0 && seconds < part->best) part->best = seconds;
  }
  return NULL;
}

/* Best seconds of one triad pass over n floats per array on `threads` threads. */
double dnnf_triad_seconds(float *a, float *b, float *c, size_t n, int reps, int threads) {
  pthread_barrier_t barrier;
  pthread_t ids[64];
  triad_part parts[64];
  if (threads < 1 || threads > 64) return -1;
  pthread_barrier_init(&barrier, NULL, threads);
  for (int t = 0; t < threads; ++t) {
    parts[t] = (triad_part){a, b, c, n * t / threads, n * (t + 1) / threads, reps, &barrier, 0};
    if (t) pthread_create(&ids[t], NULL, triad_worker, &parts[t]);
  }
  triad_worker(&parts[0]);
  for (int t = 1; t < threads; ++t) pthread_join(ids[t], NULL);
  pthread_barrier_destroy(&barrier);
  return parts[0].best; /* the barriers make every thread's pass as long as the slowest */
}
