/* dnnf_runner: run a model compiled by dnnf-compile on raw binary files.
 *
 *   dnnf_runner WEIGHTS IN_0 ... IN_n OUT_0 ... OUT_m [REPEAT [THREADS]]
 *
 * Each IN_i holds input i as raw little-endian elements in row-major order (the
 * shapes are in model.h), each OUT_j receives output j the same way. The model runs
 * once, then REPEAT more times (default 0); each timed run is printed on stderr as
 * "run-ms <milliseconds>". A GPU model (model.h defines DNNF_DISPATCHES) also prints
 * "device <name>" first and, after the runs, "dispatch-ms <index> <kernel>
 * <milliseconds>" for each dispatch of the last run (its GPU time). Exit status: 0; 2 with a message on stderr when an input
 * does not fit the model (a file of another size, an index out of range); 1 for any
 * other failure (a missing file, weights that are not the model's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

/* The whole file at path, and its size in *bytes. */
static void *read_file(const char *path, size_t *bytes) {
  FILE *f = fopen(path, "rb");
  long size = -1;
  if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  void *data = size >= 0 ? aligned_alloc(64, ((size_t)size + 64) / 64 * 64) : NULL;
  if (!data || fseek(f, 0, SEEK_SET) != 0 || fread(data, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "dnnf_runner: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *bytes = (size_t)size;
  return data;
}

static void write_file(const char *path, const void *data, size_t bytes) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
    fprintf(stderr, "dnnf_runner: cannot write %s\n", path);
    exit(1);
  }
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * t.tv_sec + 1e-6 * t.tv_nsec;
}

int main(int argc, char **argv) {
  int files = 1 + DNNF_NUM_INPUTS + DNNF_NUM_OUTPUTS;
  if (argc < 1 + files || argc > 3 + files) {
    fprintf(stderr, "usage: %s WEIGHTS IN x%d OUT x%d [REPEAT [THREADS]]\n", argv[0], DNNF_NUM_INPUTS,
            DNNF_NUM_OUTPUTS);
    return 1;
  }
  int repeat = argc > 1 + files ? atoi(argv[1 + files]) : 0;
  if (argc > 2 + files) dnnf_set_num_threads(atoi(argv[2 + files]));
  dnnf_model *model = dnnf_load(argv[1]);
  if (!model) {
    fprintf(stderr, "dnnf_runner: %s\n", dnnf_error());
    return 1;
  }
#ifdef DNNF_DISPATCHES
  fprintf(stderr, "device %s\n", dnnf_device_name(model));
#endif
  const void *inputs[DNNF_NUM_INPUTS];
  size_t input_bytes[DNNF_NUM_INPUTS];
  void *outputs[DNNF_NUM_OUTPUTS];
  size_t output_bytes[DNNF_NUM_OUTPUTS];
  for (int i = 0; i < DNNF_NUM_INPUTS; ++i) inputs[i] = read_file(argv[2 + i], &input_bytes[i]);
  for (int j = 0; j < DNNF_NUM_OUTPUTS; ++j) {
    output_bytes[j] = dnnf_outputs[j].bytes;
    outputs[j] = aligned_alloc(64, (output_bytes[j] + 63) / 64 * 64);
  }
  for (int r = 0; r <= repeat; ++r) {
    double start = now_ms();
    int status = dnnf_run_sized(model, inputs, input_bytes, outputs, output_bytes);
    if (status != 0) {
      fprintf(stderr, "dnnf_runner: %s\n", dnnf_error());
      return status == DNNF_INVALID_ARGUMENT ? 2 : 1;
    }
    if (r > 0) fprintf(stderr, "run-ms %.4f\n", now_ms() - start);
  }
  for (int j = 0; j < DNNF_NUM_OUTPUTS; ++j)
    write_file(argv[2 + DNNF_NUM_INPUTS + j], outputs[j], dnnf_outputs[j].bytes);
#ifdef DNNF_DISPATCHES
  double ms[DNNF_DISPATCHES];
  int timed = dnnf_dispatch_times(model, ms, DNNF_DISPATCHES);
  for (int d = 0; d < timed; ++d) fprintf(stderr, "dispatch-ms %d %s %.4f\n", d, dnnf_dispatch_name(model, d), ms[d]);
#endif
  dnnf_free(model);
  return 0;
}
