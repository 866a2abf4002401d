/* dnnf_opencl: see dnnf_opencl.h. */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include "dnnf_opencl.h"

#include <CL/cl.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUILD_OPTIONS "-cl-std=CL1.2"
#define NAME_SIZE 256

typedef struct {
  char *text;
  size_t size;
} message;

static void say(message *out, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void say(message *out, const char *format, ...) {
  if (!out->text || !out->size) return;
  va_list args;
  va_start(args, format);
  vsnprintf(out->text, out->size, format, args);
  va_end(args);
}

static const char *status_name(cl_int status) {
  switch (status) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an OpenCL error";
  }
}

static bool out_of_memory(cl_int status) {
  return status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
         status == CL_OUT_OF_HOST_MEMORY;
}

/* The code of a failed call `what`, with its message. */
static int failed(message *out, cl_int status, const char *what) {
  say(out, "OpenCL: %s failed: %s (%d)", what, status_name(status), (int)status);
  return out_of_memory(status) ? DNNF_CL_OUT_OF_MEMORY : DNNF_CL_ERROR;
}

struct dnnf_cl_model {
  const dnnf_cl_program *program;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  cl_program built;
  cl_mem *buffers;
  cl_kernel *kernels;  /* one per dispatch, its arguments set */
  cl_event *events;    /* the last run's, one per dispatch */
  double *times;
  int timed;           /* dispatches timed in the last run */
  char device_name[2 * NAME_SIZE];
  char *build_log;
  int from_cache;
  pthread_mutex_t lock;
};

/* ----- the device */

static bool contains_ignoring_case(const char *text, const char *part) {
  for (; *text; ++text) {
    size_t i = 0;
    while (part[i] && text[i] && tolower((unsigned char)text[i]) == tolower((unsigned char)part[i])) ++i;
    if (!part[i]) return true;
  }
  return !*part;
}

static int pick_device(cl_device_id *device, char *name, size_t name_size, message *out) {
  cl_platform_id platforms[16];
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(16, platforms, &count);
  if (status == -1001 || (status == CL_SUCCESS && count == 0)) {
    say(out, "OpenCL: no platform found: install an OpenCL driver (ICD), e.g. Debian's pocl-opencl-icd");
    return DNNF_CL_NO_DEVICE;
  }
  if (status != CL_SUCCESS) return failed(out, status, "clGetPlatformIDs");
  const char *wanted = getenv("DNNF_OPENCL_DEVICE");
  char seen[512] = "";
  for (int pass = 0; pass < 2; ++pass) {  /* pass 0: GPUs only (unless a device is named) */
    for (cl_uint p = 0; p < count && p < 16; ++p) {
      cl_device_id devices[16];
      cl_uint found = 0;
      cl_device_type type = pass == 0 && !wanted ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
      if (clGetDeviceIDs(platforms[p], type, 16, devices, &found) != CL_SUCCESS) continue;
      char platform_name[NAME_SIZE] = "";
      clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL);
      for (cl_uint d = 0; d < found && d < 16; ++d) {
        char device_name[NAME_SIZE] = "";
        clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof device_name, device_name, NULL);
        snprintf(name, name_size, "%s: %s", platform_name, device_name);
        if (wanted && !contains_ignoring_case(name, wanted)) {
          size_t used = strlen(seen);
          snprintf(seen + used, sizeof seen - used, "%s'%s'", used ? ", " : "", name);
          continue;
        }
        *device = devices[d];
        return DNNF_CL_OK;
      }
    }
  }
  if (wanted) {
    say(out, "OpenCL: no device matches DNNF_OPENCL_DEVICE='%s' (devices: %s)", wanted, seen);
  } else {
    say(out, "OpenCL: the platforms have no device: install an OpenCL driver, e.g. Debian's pocl-opencl-icd");
  }
  return DNNF_CL_NO_DEVICE;
}

/* Whether the space-separated `list` holds the word `word` (of `length` characters). */
static bool lists(const char *list, const char *word, size_t length) {
  for (const char *at = list; (at = strstr(at, word)) != NULL; at += length) {
    bool starts = at == list || at[-1] == ' ';
    if (starts && (at[length] == ' ' || at[length] == 0)) return true;
  }
  return false;
}

static int check_extensions(const dnnf_cl_program *p, cl_device_id device, const char *name, message *out) {
  size_t bytes = 0;
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &bytes);
  char *extensions = calloc(bytes + 1, 1);
  if (!extensions) return failed(out, CL_OUT_OF_HOST_MEMORY, "reading the device's extensions");
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, bytes, extensions, NULL);
  int result = DNNF_CL_OK;
  for (const char *word = p->extensions; *word && result == DNNF_CL_OK;) {
    size_t length = strcspn(word, " ");
    if (length && !lists(extensions, word, length)) {
      say(out, "OpenCL: %s lacks %.*s, which the program requires (kernels computing in half precision: "
          "compiled with --precision fp16)", name, (int)length, word);
      result = DNNF_CL_UNSUPPORTED;
    }
    word += length + (word[length] == ' ');
  }
  free(extensions);
  return result;
}

static int check_device(const dnnf_cl_program *p, cl_device_id device, const char *name, message *out) {
  int extensions = check_extensions(p, device, name, out);
  if (extensions != DNNF_CL_OK) return extensions;
  size_t group = 0;
  cl_ulong allocation = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof group, &group, NULL);
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof allocation, &allocation, NULL);
  for (int k = 0; k < p->num_kernels; ++k) {
    const size_t *w = p->kernels[k].workgroup;
    if (w[0] * w[1] * w[2] > group) {
      say(out, "OpenCL: %s allows workgroups of %zu work-items; kernel %s needs %zu", name, group,
          p->kernels[k].name, w[0] * w[1] * w[2]);
      return DNNF_CL_UNSUPPORTED;
    }
  }
  for (int b = 0; b < p->num_buffers; ++b) {
    if (p->buffers[b].bytes > allocation) {
      say(out, "OpenCL: %s allocates at most %llu bytes at once; buffer %d has %llu", name,
          (unsigned long long)allocation, b, (unsigned long long)p->buffers[b].bytes);
      return DNNF_CL_UNSUPPORTED;
    }
  }
  return DNNF_CL_OK;
}

/* ----- the program, its binary cached */

static uint64_t fnv1a(uint64_t hash, const char *text) {
  for (; *text; ++text) hash = (hash ^ (unsigned char)*text) * 1099511628211ull;
  return hash;
}

/* Whether the device is PoCL's, which keeps compiled kernels in a cache of its own: asking
   it for a program binary compiles every kernel once more (minutes for a big model). */
static bool caches_itself(const dnnf_cl_model *m) {
  cl_platform_id platform;
  char name[NAME_SIZE] = "";
  if (clGetDeviceInfo(m->device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) == CL_SUCCESS)
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, NULL);
  return !strcmp(name, "Portable Computing Language");
}

/* The cache file of this source on this device and driver; false when caching is off
   (by default on a device that caches itself). */
static bool cache_path(const dnnf_cl_model *m, char *path, size_t size) {
  const char *dir = getenv("DNNF_OPENCL_CACHE");
  if (dir && !strcmp(dir, "off")) return false;
  if (!(dir && *dir) && caches_itself(m)) return false;
  char base[1024];
  if (dir && *dir) {
    snprintf(base, sizeof base, "%s", dir);
  } else if (getenv("XDG_CACHE_HOME") && *getenv("XDG_CACHE_HOME")) {
    snprintf(base, sizeof base, "%s/dnnf-mlir/opencl", getenv("XDG_CACHE_HOME"));
  } else if (getenv("HOME")) {
    snprintf(base, sizeof base, "%s/.cache/dnnf-mlir/opencl", getenv("HOME"));
  } else {
    return false;
  }
  char driver[NAME_SIZE] = "";
  clGetDeviceInfo(m->device, CL_DRIVER_VERSION, sizeof driver, driver, NULL);
  uint64_t hash = fnv1a(fnv1a(fnv1a(fnv1a(14695981039346656037ull, m->program->source), m->device_name), driver),
                        BUILD_OPTIONS);
  snprintf(path, size, "%s/%016llx.bin", base, (unsigned long long)hash);
  for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {  /* mkdir -p */
    *slash = 0;
    mkdir(path, 0755);
    *slash = '/';
  }
  return true;
}

static unsigned char *read_file(const char *path, size_t *bytes) {
  FILE *file = fopen(path, "rb");
  if (!file) return NULL;
  unsigned char *data = NULL;
  if (fseek(file, 0, SEEK_END) == 0) {
    long size = ftell(file);
    if (size > 0 && fseek(file, 0, SEEK_SET) == 0 && (data = malloc((size_t)size)) &&
        fread(data, 1, (size_t)size, file) != (size_t)size) {
      free(data);
      data = NULL;
    }
    *bytes = size > 0 ? (size_t)size : 0;
  }
  fclose(file);
  return data;
}

/* Write the built program's binary to `path` (through a temporary file: another process
   may read it meanwhile); a failure only costs the next load a build. */
static void write_cache(const dnnf_cl_model *m, const char *path) {
  size_t bytes = 0;
  if (clGetProgramInfo(m->built, CL_PROGRAM_BINARY_SIZES, sizeof bytes, &bytes, NULL) != CL_SUCCESS || !bytes) return;
  unsigned char *binary = malloc(bytes);
  if (!binary) return;
  char temporary[1100];
  snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, (long)getpid());
  FILE *file = NULL;
  if (clGetProgramInfo(m->built, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) == CL_SUCCESS &&
      (file = fopen(temporary, "wb"))) {
    bool written = fwrite(binary, 1, bytes, file) == bytes;
    if (fclose(file) == 0 && written) rename(temporary, path);
    else remove(temporary);
  }
  free(binary);
}

static char *build_log(const dnnf_cl_model *m) {
  size_t bytes = 0;
  clGetProgramBuildInfo(m->built, m->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &bytes);
  char *log = calloc(bytes + 1, 1);
  if (log && bytes) clGetProgramBuildInfo(m->built, m->device, CL_PROGRAM_BUILD_LOG, bytes, log, NULL);
  if (log) {  /* trailing whitespace: an empty log is "" */
    size_t n = strlen(log);
    while (n && isspace((unsigned char)log[n - 1])) log[--n] = 0;
  }
  return log;
}

static bool build_cached(dnnf_cl_model *m, const char *path) {
  size_t bytes = 0;
  unsigned char *binary = read_file(path, &bytes);
  if (!binary) return false;
  cl_int status, binary_status;
  const unsigned char *binaries[] = {binary};
  m->built = clCreateProgramWithBinary(m->context, 1, &m->device, &bytes, binaries, &binary_status, &status);
  free(binary);
  if (status == CL_SUCCESS && binary_status == CL_SUCCESS &&
      clBuildProgram(m->built, 1, &m->device, BUILD_OPTIONS, NULL, NULL) == CL_SUCCESS)
    return true;
  if (m->built) clReleaseProgram(m->built);
  m->built = NULL;
  return false;  /* a stale or foreign binary: build from source */
}

static int build_program(dnnf_cl_model *m, message *out) {
  char path[1024];
  bool caching = cache_path(m, path, sizeof path);
  if (caching && build_cached(m, path)) {
    m->from_cache = 1;
    m->build_log = calloc(1, 1);
    return m->build_log ? DNNF_CL_OK : failed(out, CL_OUT_OF_HOST_MEMORY, "keeping the build log");
  }
  cl_int status;
  m->built = clCreateProgramWithSource(m->context, 1, &m->program->source, NULL, &status);
  if (status != CL_SUCCESS) return failed(out, status, "clCreateProgramWithSource");
  status = clBuildProgram(m->built, 1, &m->device, BUILD_OPTIONS, NULL, NULL);
  m->build_log = build_log(m);
  if (status == CL_BUILD_PROGRAM_FAILURE) {
    say(out, "OpenCL: the program does not build on %s: %s", m->device_name, m->build_log ? m->build_log : "");
    return DNNF_CL_BUILD_FAILED;
  }
  if (status != CL_SUCCESS) return failed(out, status, "clBuildProgram");
  if (caching) write_cache(m, path);
  return DNNF_CL_OK;
}

/* ----- buffers and kernels */

static int create_buffers(dnnf_cl_model *m, const unsigned char *weights, size_t weights_bytes, message *out) {
  const dnnf_cl_program *p = m->program;
  m->buffers = calloc((size_t)p->num_buffers + 1, sizeof *m->buffers);
  if (!m->buffers) return failed(out, CL_OUT_OF_HOST_MEMORY, "allocating the buffer table");
  for (int b = 0; b < p->num_buffers; ++b) {
    const dnnf_cl_buffer *buffer = &p->buffers[b];
    cl_int status;
    size_t bytes = buffer->bytes ? (size_t)buffer->bytes : 16;
    m->buffers[b] = clCreateBuffer(m->context, CL_MEM_READ_WRITE, bytes, NULL, &status);
    if (status != CL_SUCCESS) {
      say(out, "OpenCL: out of device memory: buffer %d of %zu bytes (%s, %d)", b, bytes, status_name(status),
          (int)status);
      return out_of_memory(status) ? DNNF_CL_OUT_OF_MEMORY : DNNF_CL_ERROR;
    }
    const void *initial = NULL;
    size_t initial_bytes = 0;
    if (buffer->kind == DNNF_CL_WEIGHT) {
      if (buffer->index + buffer->bytes > weights_bytes) {
        say(out, "OpenCL: weight buffer %d spans bytes %llu..%llu of a %zu-byte weights file", b,
            (unsigned long long)buffer->index, (unsigned long long)(buffer->index + buffer->bytes), weights_bytes);
        return DNNF_CL_INVALID_ARGUMENT;
      }
      initial = weights + buffer->index;
      initial_bytes = (size_t)buffer->bytes;
    } else if (buffer->kind == DNNF_CL_CONSTANT) {
      unsigned char zero = 0;  /* zeros after the constant's bytes */
      status = clEnqueueFillBuffer(m->queue, m->buffers[b], &zero, 1, 0, bytes, 0, NULL, NULL);
      if (status != CL_SUCCESS) return failed(out, status, "clEnqueueFillBuffer");
      initial = buffer->data;
      initial_bytes = (size_t)buffer->data_bytes;
    }
    if (initial_bytes) {
      status = clEnqueueWriteBuffer(m->queue, m->buffers[b], CL_TRUE, 0, initial_bytes, initial, 0, NULL, NULL);
      if (status != CL_SUCCESS) return failed(out, status, "uploading the weights (clEnqueueWriteBuffer)");
    }
  }
  return DNNF_CL_OK;
}

static int create_kernels(dnnf_cl_model *m, message *out) {
  const dnnf_cl_program *p = m->program;
  m->kernels = calloc((size_t)p->num_dispatches + 1, sizeof *m->kernels);
  m->events = calloc((size_t)p->num_dispatches + 1, sizeof *m->events);
  m->times = calloc((size_t)p->num_dispatches + 1, sizeof *m->times);
  if (!m->kernels || !m->events || !m->times) return failed(out, CL_OUT_OF_HOST_MEMORY, "allocating the dispatches");
  for (int d = 0; d < p->num_dispatches; ++d) {
    const dnnf_cl_dispatch *dispatch = &p->dispatches[d];
    const dnnf_cl_kernel *kernel = &p->kernels[dispatch->kernel];
    cl_int status;
    m->kernels[d] = clCreateKernel(m->built, kernel->name, &status);
    if (status != CL_SUCCESS) {
      say(out, "OpenCL: kernel %s: clCreateKernel failed: %s (%d)", kernel->name, status_name(status), (int)status);
      return out_of_memory(status) ? DNNF_CL_OUT_OF_MEMORY : DNNF_CL_ERROR;
    }
    for (int i = 0; i < kernel->bindings; ++i) {
      const dnnf_cl_binding *binding = &p->bindings[dispatch->first_binding + i];
      cl_ulong offset = binding->offset;
      status = clSetKernelArg(m->kernels[d], (cl_uint)(2 * i), sizeof(cl_mem), &m->buffers[binding->buffer]);
      if (status == CL_SUCCESS) status = clSetKernelArg(m->kernels[d], (cl_uint)(2 * i + 1), sizeof offset, &offset);
      if (status != CL_SUCCESS) {
        say(out, "OpenCL: kernel %s, binding %d: clSetKernelArg failed: %s (%d)", kernel->name, i,
            status_name(status), (int)status);
        return DNNF_CL_ERROR;
      }
    }
  }
  return DNNF_CL_OK;
}

/* Each kernel of the built program against the device: its local (shared) memory, which
   the compiler sized for a device profile and another device may have less of, and the
   work-group size the device allows for it (at most CL_DEVICE_MAX_WORK_GROUP_SIZE). */
static int check_kernel_resources(dnnf_cl_model *m, message *out) {
  const dnnf_cl_program *p = m->program;
  cl_ulong device_local = 0;
  clGetDeviceInfo(m->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof device_local, &device_local, NULL);
  for (int k = 0; k < p->num_kernels; ++k) {
    const dnnf_cl_kernel *kernel = &p->kernels[k];
    cl_int status;
    cl_kernel handle = clCreateKernel(m->built, kernel->name, &status);
    if (status != CL_SUCCESS) {
      say(out, "OpenCL: kernel %s: clCreateKernel failed: %s (%d)", kernel->name, status_name(status), (int)status);
      return out_of_memory(status) ? DNNF_CL_OUT_OF_MEMORY : DNNF_CL_ERROR;
    }
    cl_ulong local = 0;
    size_t group = 0;
    status = clGetKernelWorkGroupInfo(handle, m->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    if (status == CL_SUCCESS)
      status = clGetKernelWorkGroupInfo(handle, m->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof group, &group, NULL);
    clReleaseKernel(handle);
    if (status != CL_SUCCESS) return failed(out, status, "clGetKernelWorkGroupInfo");
    const size_t *w = kernel->workgroup;
    if (local > device_local) {
      say(out, "OpenCL: kernel %s needs %llu bytes of local (shared) memory; %s has %llu (CL_DEVICE_LOCAL_MEM_SIZE)",
          kernel->name, (unsigned long long)local, m->device_name, (unsigned long long)device_local);
      return DNNF_CL_UNSUPPORTED;
    }
    if (w[0] * w[1] * w[2] > group) {
      say(out, "OpenCL: kernel %s needs work-groups of %zu work-items; %s allows it %zu (CL_KERNEL_WORK_GROUP_SIZE)",
          kernel->name, w[0] * w[1] * w[2], m->device_name, group);
      return DNNF_CL_UNSUPPORTED;
    }
  }
  return DNNF_CL_OK;
}

static int build_model(dnnf_cl_model *m, const unsigned char *weights, size_t weights_bytes, message *out) {
  int code = pick_device(&m->device, m->device_name, sizeof m->device_name, out);
  if (code == DNNF_CL_OK) code = check_device(m->program, m->device, m->device_name, out);
  if (code != DNNF_CL_OK) return code;
  cl_int status;
  m->context = clCreateContext(NULL, 1, &m->device, NULL, NULL, &status);
  if (status != CL_SUCCESS) return failed(out, status, "clCreateContext");
  m->queue = clCreateCommandQueue(m->context, m->device, CL_QUEUE_PROFILING_ENABLE, &status);
  if (status != CL_SUCCESS) return failed(out, status, "clCreateCommandQueue");
  code = build_program(m, out);
  if (code == DNNF_CL_OK) code = check_kernel_resources(m, out);
  if (code == DNNF_CL_OK) code = create_buffers(m, weights, weights_bytes, out);
  if (code == DNNF_CL_OK) code = create_kernels(m, out);
  return code;
}

int dnnf_cl_load(const dnnf_cl_program *program, const void *weights, size_t weights_bytes, dnnf_cl_model **model,
                 char *error, size_t error_size) {
  message out = {error, error_size};
  if (!program || !model || !program->source || (weights_bytes && !weights)) {
    say(&out, "dnnf_cl_load: a NULL argument");
    return DNNF_CL_INVALID_ARGUMENT;
  }
  *model = NULL;
  dnnf_cl_model *m = calloc(1, sizeof *m);
  if (!m) return failed(&out, CL_OUT_OF_HOST_MEMORY, "allocating the model");
  m->program = program;
  pthread_mutex_init(&m->lock, NULL);
  int code = build_model(m, weights, weights_bytes, &out);
  if (code != DNNF_CL_OK) {
    dnnf_cl_free(m);
    return code;
  }
  *model = m;
  return DNNF_CL_OK;
}

/* ----- runs */

static void release_events(dnnf_cl_model *m) {
  for (int d = 0; d < m->program->num_dispatches; ++d) {
    if (m->events[d]) clReleaseEvent(m->events[d]);
    m->events[d] = NULL;
  }
}

static void read_times(dnnf_cl_model *m) {
  m->timed = 0;
  for (int d = 0; d < m->program->num_dispatches; ++d) {
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(m->events[d], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(m->events[d], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) != CL_SUCCESS)
      return;
    m->times[d] = (double)(end - start) * 1e-6;
  }
  m->timed = m->program->num_dispatches;
}

static int run_locked(dnnf_cl_model *m, const void *const inputs[], void *const outputs[], message *out) {
  const dnnf_cl_program *p = m->program;
  release_events(m);
  cl_int status = CL_SUCCESS;
  for (int b = 0; b < p->num_buffers && status == CL_SUCCESS; ++b)
    if (p->buffers[b].kind == DNNF_CL_INPUT && p->buffers[b].tensor_bytes)
      status = clEnqueueWriteBuffer(m->queue, m->buffers[b], CL_FALSE, 0, (size_t)p->buffers[b].tensor_bytes,
                                    inputs[p->buffers[b].index], 0, NULL, NULL);
  if (status != CL_SUCCESS) return failed(out, status, "writing the inputs (clEnqueueWriteBuffer)");
  for (int d = 0; d < p->num_dispatches; ++d) {
    const dnnf_cl_dispatch *dispatch = &p->dispatches[d];
    const size_t *local = p->kernels[dispatch->kernel].workgroup;
    size_t global[3] = {dispatch->groups[0] * local[0], dispatch->groups[1] * local[1], dispatch->groups[2] * local[2]};
    status = clEnqueueNDRangeKernel(m->queue, m->kernels[d], 3, NULL, global, local, 0, NULL, &m->events[d]);
    if (status != CL_SUCCESS) {
      say(out, "OpenCL: dispatch %d (kernel %s) failed: %s (%d)", d, p->kernels[dispatch->kernel].name,
          status_name(status), (int)status);
      return out_of_memory(status) ? DNNF_CL_OUT_OF_MEMORY : DNNF_CL_ERROR;
    }
  }
  for (int b = 0; b < p->num_buffers && status == CL_SUCCESS; ++b)
    if (p->buffers[b].kind == DNNF_CL_OUTPUT && p->buffers[b].tensor_bytes)
      status = clEnqueueReadBuffer(m->queue, m->buffers[b], CL_FALSE, 0, (size_t)p->buffers[b].tensor_bytes,
                                   outputs[p->buffers[b].index], 0, NULL, NULL);
  if (status == CL_SUCCESS) status = clFinish(m->queue);
  if (status != CL_SUCCESS) return failed(out, status, "running the dispatches");
  read_times(m);
  return DNNF_CL_OK;
}

int dnnf_cl_run(dnnf_cl_model *model, const void *const inputs[], void *const outputs[], char *error,
                size_t error_size) {
  message out = {error, error_size};
  if (!model || (model->program->num_inputs && !inputs) || (model->program->num_outputs && !outputs)) {
    say(&out, "dnnf_cl_run: a NULL argument");
    return DNNF_CL_INVALID_ARGUMENT;
  }
  pthread_mutex_lock(&model->lock);
  int code = run_locked(model, inputs, outputs, &out);
  pthread_mutex_unlock(&model->lock);
  return code;
}

int dnnf_cl_dispatch_count(const dnnf_cl_model *model) { return model ? model->program->num_dispatches : 0; }

int dnnf_cl_dispatch_times(const dnnf_cl_model *model, double *ms, int capacity) {
  if (!model) return 0;
  int n = model->timed < capacity ? model->timed : capacity;
  for (int d = 0; d < n; ++d) ms[d] = model->times[d];
  return n;
}

const char *dnnf_cl_dispatch_name(const dnnf_cl_model *model, int dispatch) {
  if (!model || dispatch < 0 || dispatch >= model->program->num_dispatches) return NULL;
  return model->program->kernels[model->program->dispatches[dispatch].kernel].name;
}

const char *dnnf_cl_device_name(const dnnf_cl_model *model) { return model ? model->device_name : ""; }

const char *dnnf_cl_build_log(const dnnf_cl_model *model) {
  return model && model->build_log ? model->build_log : "";
}

int dnnf_cl_from_cache(const dnnf_cl_model *model) { return model ? model->from_cache : 0; }

int dnnf_cl_probe(char *description, size_t description_size, char *error, size_t error_size) {
  message out = {error, error_size};
  cl_device_id device;
  char name[2 * NAME_SIZE];
  int code = pick_device(&device, name, sizeof name, &out);
  if (code == DNNF_CL_OK && description && description_size) {
    char version[NAME_SIZE] = "";
    clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version, version, NULL);
    snprintf(description, description_size, "%s, %s", name, version);
  }
  return code;
}

void dnnf_cl_free(dnnf_cl_model *model) {
  if (!model) return;
  if (model->events) release_events(model);
  for (int d = 0; model->kernels && d < model->program->num_dispatches; ++d)
    if (model->kernels[d]) clReleaseKernel(model->kernels[d]);
  for (int b = 0; model->buffers && b < model->program->num_buffers; ++b)
    if (model->buffers[b]) clReleaseMemObject(model->buffers[b]);
  if (model->built) clReleaseProgram(model->built);
  if (model->queue) clReleaseCommandQueue(model->queue);
  if (model->context) clReleaseContext(model->context);
  pthread_mutex_destroy(&model->lock);
  free(model->kernels);
  free(model->events);
  free(model->times);
  free(model->buffers);
  free(model->build_log);
  free(model);
}
