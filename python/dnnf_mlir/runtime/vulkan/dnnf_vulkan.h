/* dnnf_vulkan: the runtime every model compiled for Vulkan carries.
 *
 * A compiled model is a plan (text, below), SPIR-V kernels and a weights file. The
 * runtime loads libvulkan.so.1 with dlopen (a library built with it loads on any
 * machine and says what to install when Vulkan is missing), creates a device, its
 * buffers, one compute pipeline per kernel and one descriptor set per dispatch,
 * uploads the weights once and records one command buffer that every run submits.
 *
 * The plan (line-based; `#` starts a comment; blank lines are ignored):
 *
 *   dnnf-vulkan-plan 1
 *   require <feature> ...                  shaderInt64 shaderFloat16 shaderInt16
 *                                          storageBuffer16BitAccess shaderInt8
 *                                          storageBuffer8BitAccess
 *   buffer <id> <bytes> input <i> [<n>]    the i-th input of dnnf_vk_run, whose n bytes
 *                                          (default: bytes) are copied in before a run
 *   buffer <id> <bytes> output <j> [<n>]   the j-th output, n bytes copied out after a run
 *                                          (later dispatches may read it)
 *   buffer <id> <bytes> weight <offset>    weights[offset .. offset+bytes), uploaded at load
 *   buffer <id> <bytes> scratch            device-only, uninitialised
 *   buffer <id> <bytes> constant <hex>     initialised once at load from the bytes given in hex
 *                                          (two digits a byte; zeros after them)
 *   kernel <id> <spirv-index> <entry-point> <num-bindings> <wx> <wy> <wz> <name>
 *   dispatch <kernel-id> <gx> <gy> <gz> <barrier> <buffer>:<offset>:<range> ...
 *
 * Ids are dense from 0 in order of appearance, and a line refers only to ids declared
 * above it. A dispatch names exactly num-bindings buffer ranges (descriptor set 0,
 * bindings 0.. in order); barrier 1 puts a compute->compute memory barrier before it.
 *
 * Environment:
 *   DNNF_VULKAN_DEVICE   an index into the loader's device list, or a case-insensitive
 *                        substring of a device name; unset: discrete GPU > integrated >
 *                        virtual > CPU (lavapipe), among devices with a compute queue
 *   DNNF_VULKAN_STAGING  1: copy inputs, outputs and weights through host-visible
 *                        staging buffers even where device memory is host-visible
 *   DNNF_VULKAN_LOADER   the loader to dlopen instead of libvulkan.so.1
 *   DNNF_VULKAN_TIMEOUT_S  how long dnnf_vk_run waits for the device (default 300)
 *   DNNF_VULKAN_HIDE_FEATURES  features (names as in `require`, separated by spaces or
 *                        commas) to treat as missing: for tests of the refusal
 */
#ifndef DNNF_VULKAN_H
#define DNNF_VULKAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DNNF_VK_OK 0
#define DNNF_VK_ERROR 1              /* any Vulkan call failing (device lost, ...) */
#define DNNF_VK_INVALID_ARGUMENT 2   /* same value as model.h's DNNF_INVALID_ARGUMENT */
#define DNNF_VK_NO_DEVICE 3          /* no loader, or no device with a compute queue */
#define DNNF_VK_UNSUPPORTED 4        /* the device lacks a required feature or limit */
#define DNNF_VK_OUT_OF_MEMORY 5
#define DNNF_VK_BAD_PLAN 6           /* the plan text does not parse or is inconsistent */

#define DNNF_VK_PLAN_VERSION 1       /* the version on the plan's first line */

typedef struct dnnf_vk_model dnnf_vk_model;
typedef struct {
  const uint32_t *words;
  size_t count;
} dnnf_vk_spirv;

/* Creates the device, buffers, pipelines and descriptor sets, uploads the weight buffers
   (from `weights`, the mapped weights file; NULL/0 when the plan has none) and records
   the command buffer. On failure returns a code above and writes a one-line message. */
int dnnf_vk_load(const char *plan, const dnnf_vk_spirv *kernels, int num_kernels,
                 const void *weights, size_t weights_bytes, dnnf_vk_model **model,
                 char *error, size_t error_size);
/* Copies the inputs in, runs every dispatch, copies the outputs out (dense buffers of the
   plan's sizes). Safe to call from several threads (serialized inside). After a device
   error (lost, timed out) every later run fails with that error. */
int dnnf_vk_run(dnnf_vk_model *model, const void *const inputs[], void *const outputs[],
                char *error, size_t error_size);
int dnnf_vk_dispatch_count(const dnnf_vk_model *model);
/* GPU milliseconds of each dispatch of the last run, from timestamp queries; returns the
   number written (0 before the first run), or -1 when the device has no compute
   timestamps. */
int dnnf_vk_dispatch_times(const dnnf_vk_model *model, double *ms, int capacity);
/* Its kernel's name; NULL for an index out of range. */
const char *dnnf_vk_dispatch_name(const dnnf_vk_model *model, int dispatch);
const char *dnnf_vk_device_name(const dnnf_vk_model *model);
/* Whether a device is usable, without a model: 0 and its description ("llvmpipe (LLVM 15.0.6,
   256 bits), Vulkan 1.3.230, subgroup 8, ...") or a code and a message saying what to install. */
int dnnf_vk_probe(char *description, size_t description_size, char *error, size_t error_size);
void dnnf_vk_free(dnnf_vk_model *model);

/* Added beside the API above. */
/* 1 when inputs, outputs and weights go through staging buffers and copies (device memory
   not host-visible, or DNNF_VULKAN_STAGING=1), 0 when they are mapped directly. */
int dnnf_vk_uses_staging(const dnnf_vk_model *model);
/* The plan's number of inputs and outputs, and each one's size in bytes (0 for an index
   out of range): what dnnf_vk_run copies. */
int dnnf_vk_num_inputs(const dnnf_vk_model *model);
int dnnf_vk_num_outputs(const dnnf_vk_model *model);
size_t dnnf_vk_input_bytes(const dnnf_vk_model *model, int input);
size_t dnnf_vk_output_bytes(const dnnf_vk_model *model, int output);

#ifdef __cplusplus
}
#endif

#endif
