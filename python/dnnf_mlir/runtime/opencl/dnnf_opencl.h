/* dnnf_opencl: the runtime every model compiled for OpenCL carries.
 *
 * A compiled model is a program (below: OpenCL C source, its kernels, buffers and
 * dispatches, as tables that model.c holds) and a weights file. The runtime links the
 * OpenCL ICD loader (libOpenCL.so.1), picks a device, builds the source once (its binary
 * cached on disk after the first build), creates the buffers, uploads the weights and
 * constants once, and creates one kernel object per dispatch with its arguments set. A
 * run writes the inputs, enqueues every dispatch in order on one in-order queue (which
 * orders them: no barrier is needed), and reads the outputs back.
 *
 * Each kernel takes two arguments per binding: the buffer and the binding's byte offset
 * in it (a dispatch may bind any range of a buffer; sub-buffers must be aligned).
 *
 * Environment:
 *   DNNF_OPENCL_DEVICE   a case-insensitive substring of "<platform> <device>" to pick;
 *                        unset: the first GPU, else the first device of any type
 *   DNNF_OPENCL_CACHE    the directory of built program binaries (default
 *                        $XDG_CACHE_HOME/dnnf-mlir/opencl or ~/.cache/dnnf-mlir/opencl,
 *                        except on PoCL, which caches its compiled kernels itself: there
 *                        a binary costs a second compile of every kernel); "off": no cache
 */
#ifndef DNNF_OPENCL_H
#define DNNF_OPENCL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DNNF_CL_OK 0
#define DNNF_CL_ERROR 1              /* any OpenCL call failing */
#define DNNF_CL_INVALID_ARGUMENT 2   /* same value as model.h's DNNF_INVALID_ARGUMENT */
#define DNNF_CL_NO_DEVICE 3          /* no platform, or no device */
#define DNNF_CL_UNSUPPORTED 4        /* the device is below the program's limits */
#define DNNF_CL_OUT_OF_MEMORY 5
#define DNNF_CL_BUILD_FAILED 6       /* the OpenCL C does not build: the message holds the log */

enum { DNNF_CL_INPUT, DNNF_CL_OUTPUT, DNNF_CL_WEIGHT, DNNF_CL_SCRATCH, DNNF_CL_CONSTANT };

typedef struct {
  uint64_t bytes;                  /* the device buffer's size */
  int kind;                        /* DNNF_CL_INPUT ... */
  uint64_t index;                  /* an input's or output's index; a weight's offset in the weights */
  uint64_t tensor_bytes;           /* an input's or output's bytes in the caller's memory */
  const unsigned char *data;       /* a constant's bytes (zeros after them) */
  uint64_t data_bytes;
} dnnf_cl_buffer;

typedef struct {
  const char *name;                /* the __kernel's name in the source */
  int bindings;                    /* buffers it takes */
  size_t workgroup[3];             /* its reqd_work_group_size */
} dnnf_cl_kernel;

typedef struct {
  int buffer;
  uint64_t offset;                 /* bytes */
} dnnf_cl_binding;

typedef struct {
  int kernel;
  size_t groups[3];
  int first_binding;               /* its kernel's bindings: bindings[first_binding ...] */
} dnnf_cl_dispatch;

typedef struct {
  const char *source;              /* OpenCL C 1.2, every kernel */
  const dnnf_cl_buffer *buffers;
  int num_buffers;
  const dnnf_cl_kernel *kernels;
  int num_kernels;
  const dnnf_cl_dispatch *dispatches;
  int num_dispatches;
  const dnnf_cl_binding *bindings;
  int num_inputs, num_outputs;
  const char *extensions;          /* the OpenCL extensions it requires, space-separated ("": none) */
} dnnf_cl_program;

typedef struct dnnf_cl_model dnnf_cl_model;

/* Picks the device, builds the program (or loads its cached binary), creates the buffers
   and uploads the weights (from `weights`, the mapped weights file). On failure returns a
   code above and writes a message (a failed build's: the build log). `program` must
   outlive the model. */
int dnnf_cl_load(const dnnf_cl_program *program, const void *weights, size_t weights_bytes, dnnf_cl_model **model,
                 char *error, size_t error_size);
/* Writes the inputs, runs every dispatch, reads the outputs (dense, the plan's sizes).
   Safe to call from several threads (serialized inside). */
int dnnf_cl_run(dnnf_cl_model *model, const void *const inputs[], void *const outputs[], char *error,
                size_t error_size);
int dnnf_cl_dispatch_count(const dnnf_cl_model *model);
/* Milliseconds of each dispatch of the last run, from profiling events; the number written
   (0 before the first run). */
int dnnf_cl_dispatch_times(const dnnf_cl_model *model, double *ms, int capacity);
/* Its kernel's name; NULL for an index out of range. */
const char *dnnf_cl_dispatch_name(const dnnf_cl_model *model, int dispatch);
const char *dnnf_cl_device_name(const dnnf_cl_model *model);
/* The compiler's log of the build (empty when the binary came from the cache, or the
   compiler said nothing), and whether the binary came from the cache. */
const char *dnnf_cl_build_log(const dnnf_cl_model *model);
int dnnf_cl_from_cache(const dnnf_cl_model *model);
/* Whether a device is usable, without a model: 0 and its description, or a code and a
   message saying what to install. */
int dnnf_cl_probe(char *description, size_t description_size, char *error, size_t error_size);
void dnnf_cl_free(dnnf_cl_model *model);

#ifdef __cplusplus
}
#endif

#endif
