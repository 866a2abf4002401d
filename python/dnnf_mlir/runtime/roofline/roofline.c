/* The measurements of a CPU's roofline (dnnf_mlir/roofline.py builds this with
   clang for the host CPU, LANES the f32 lanes of its widest vectors):
   - dnnf_fma_seconds: ACCUMULATORS independent chains of vector FMAs, enough to cover
     the FMA latency on every pipe, so that one core issues FMAs at its peak rate;
   - dnnf_int8_seconds: the same chains of unsigned-by-signed byte dot products into
     i32 lanes, by the best instruction the CPU has (dnnf_int8_instruction: VNNI's
     vpdpbusd, else vpmaddubsw + vpmaddwd + vpaddd), dnnf_int8_macs() multiply-adds an
     iteration (0: no byte dot product on this CPU);
   - dnnf_triad_seconds: STREAM's triad a = b + s * c over arrays far larger than the
     caches, split among THREADS pthreads, the best of REPS timed passes. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

/* The byte dot product: INT8_BYTES bytes of vector, DOT(acc, a, b) adds to acc's i32 lanes
   the products of a's unsigned bytes by b's signed ones, four a lane. */
#if defined(__AVX512VNNI__) && LANES == 16
typedef __m512i ivec;
#define INT8_BYTES 64
#define INT8_INSTRUCTION "vpdpbusd zmm (AVX512-VNNI)"
#define SPLAT(byte) _mm512_set1_epi8(byte)
#define DOT(acc, a, b) _mm512_dpbusd_epi32(acc, a, b)
#elif defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__))
typedef __m256i ivec;
#define INT8_BYTES 32
#if defined(__AVXVNNI__)
#define INT8_INSTRUCTION "vpdpbusd ymm (AVX-VNNI)"
#define DOT(acc, a, b) _mm256_dpbusd_avx_epi32(acc, a, b)
#else
#define INT8_INSTRUCTION "vpdpbusd ymm (AVX512-VNNI)"
#define DOT(acc, a, b) _mm256_dpbusd_epi32(acc, a, b)
#endif
#define SPLAT(byte) _mm256_set1_epi8(byte)
#elif defined(__AVX512BW__) && LANES == 16
typedef __m512i ivec;
#define INT8_BYTES 64
#define INT8_INSTRUCTION "vpmaddubsw + vpmaddwd + vpaddd zmm (AVX512-BW)"
#define SPLAT(byte) _mm512_set1_epi8(byte)
#define DOT(acc, a, b) _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(a, b), _mm512_set1_epi16(1)))
#elif defined(__AVX2__)
typedef __m256i ivec;
#define INT8_BYTES 32
#define INT8_INSTRUCTION "vpmaddubsw + vpmaddwd + vpaddd ymm (AVX2)"
#define SPLAT(byte) _mm256_set1_epi8(byte)
#define DOT(acc, a, b) _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)))
#endif

#ifdef INT8_BYTES
const char *dnnf_int8_instruction(void) { return INT8_INSTRUCTION; }
int dnnf_int8_macs(void) { return ACCUMULATORS * INT8_BYTES; }

/* Seconds of ITERATIONS x ACCUMULATORS byte dot products; *sink keeps the result alive. */
double dnnf_int8_seconds(long iterations, int *sink) {
  ivec acc[ACCUMULATORS], a = SPLAT(3), b = SPLAT(-1);
  for (int j = 0; j < ACCUMULATORS; ++j) acc[j] = SPLAT((char)j);
  double start = now();
  for (long i = 0; i < iterations; ++i)
    for (int j = 0; j < ACCUMULATORS; ++j) {
      __asm__ volatile("" : "+x"(a)); /* a product of its own each time: none hoisted or shared */
      acc[j] = DOT(acc[j], a, b);
    }
  double seconds = now() - start;
  int total = 0;
  for (int j = 0; j < ACCUMULATORS; ++j) {
    int lanes[INT8_BYTES / 4];
    __builtin_memcpy(lanes, &acc[j], sizeof lanes);
    for (int k = 0; k < INT8_BYTES / 4; ++k) total += lanes[k];
  }
  *sink = total;
  return seconds;
}
#else
const char *dnnf_int8_instruction(void) { return ""; }
int dnnf_int8_macs(void) { return 0; }
double dnnf_int8_seconds(long iterations, int *sink) {
  (void)iterations;
  *sink = 0;
  return -1;
}
#endif

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
