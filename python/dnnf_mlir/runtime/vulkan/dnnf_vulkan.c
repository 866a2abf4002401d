/* dnnf_vulkan.c: the Vulkan runtime of compiled models (see dnnf_vulkan.h).
 *
 * Load: parse and check the plan and the SPIR-V (no Vulkan needed for that), open the
 * loader, pick a device, check its features and limits against the plan, then create
 * the device, buffers (sub-allocated from a few large allocations), weights, pipelines,
 * descriptor sets and the one command buffer every run submits.
 */
#define _POSIX_C_SOURCE 200809L
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <ctype.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnnf_vulkan.h"

#define LOADER_LIBRARY "libvulkan.so.1"
#define INSTALL_LOADER \
  "install the Vulkan loader (Debian: libvulkan1) and a driver (mesa-vulkan-drivers for lavapipe)"
#define INSTALL_DRIVER \
  "install a Vulkan driver (Debian: mesa-vulkan-drivers for lavapipe, or the GPU vendor's driver)"
/* Buffers share allocations of at most this size: drivers cap the number of allocations
   (often at 4096), and one huge allocation is likelier to fail than a few moderate ones. */
#define BLOCK_BYTES ((VkDeviceSize)256 << 20)
#define UPLOAD_CHUNK_BYTES ((VkDeviceSize)64 << 20) /* staging buffer of the weights upload */
#define DEFAULT_TIMEOUT_S 300
#define MAX_BYTES ((uint64_t)1 << 48) /* any size or offset in a plan: no sum overflows */
#define MAX_INDEX (1 << 20)           /* input and output indices */
#define MAX_BINDINGS 65536

#define TRY(expression)                        \
  do {                                         \
    int status_ = (expression);                \
    if (status_ != DNNF_VK_OK) return status_; \
  } while (0)

/* ------------------------------------------------------------------------------------ */
/* Messages                                                                             */

typedef struct {
  char *text;
  size_t size;
} message;

__attribute__((format(printf, 3, 4))) static int fail(message *out, int code, const char *format, ...) {
  if (out && out->text && out->size) {
    va_list args;
    va_start(args, format);
    vsnprintf(out->text, out->size, format, args);
    va_end(args);
  }
  return code;
}

/* clang-format off */
#define RESULT(r) {r, #r}
static const struct {
  VkResult result;
  const char *name;
} RESULT_NAMES[] = {
    RESULT(VK_SUCCESS), RESULT(VK_NOT_READY), RESULT(VK_TIMEOUT), RESULT(VK_INCOMPLETE),
    RESULT(VK_ERROR_OUT_OF_HOST_MEMORY), RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY),
    RESULT(VK_ERROR_INITIALIZATION_FAILED), RESULT(VK_ERROR_DEVICE_LOST), RESULT(VK_ERROR_MEMORY_MAP_FAILED),
    RESULT(VK_ERROR_LAYER_NOT_PRESENT), RESULT(VK_ERROR_EXTENSION_NOT_PRESENT),
    RESULT(VK_ERROR_FEATURE_NOT_PRESENT), RESULT(VK_ERROR_INCOMPATIBLE_DRIVER), RESULT(VK_ERROR_TOO_MANY_OBJECTS),
    RESULT(VK_ERROR_FRAGMENTED_POOL), RESULT(VK_ERROR_UNKNOWN), RESULT(VK_ERROR_OUT_OF_POOL_MEMORY),
    RESULT(VK_ERROR_FRAGMENTATION), RESULT(VK_ERROR_INVALID_SHADER_NV), RESULT(VK_PIPELINE_COMPILE_REQUIRED)};
#undef RESULT
/* clang-format on */

typedef struct {
  char text[48];
} result_text;

static result_text result_name(VkResult result) {
  result_text name;
  snprintf(name.text, sizeof name.text, "VkResult %d", (int)result);
  for (size_t r = 0; r < sizeof RESULT_NAMES / sizeof *RESULT_NAMES; ++r)
    if (RESULT_NAMES[r].result == result) snprintf(name.text, sizeof name.text, "%s", RESULT_NAMES[r].name);
  return name;
}

/* DNNF_VK_OK for VK_SUCCESS, else a message "<what>: <result>" and its code. */
__attribute__((format(printf, 3, 4))) static int check(message *out, VkResult result, const char *format,
                                                       ...) {
  if (result == VK_SUCCESS) return DNNF_VK_OK;
  char what[320];
  va_list args;
  va_start(args, format);
  vsnprintf(what, sizeof what, format, args);
  va_end(args);
  bool memory = result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY;
  return fail(out, memory ? DNNF_VK_OUT_OF_MEMORY : DNNF_VK_ERROR, "%s: %s", what, result_name(result).text);
}

static int out_of_host_memory(message *out, const char *what) {
  return fail(out, DNNF_VK_OUT_OF_MEMORY, "out of host memory (%s)", what);
}

/* Grows a malloc'ed array to hold `needed` items. */
#define RESERVE(array, capacity, needed) \
  reserve_items((void *)&(array), &(capacity), (needed), sizeof *(array))
static bool reserve_items(void *array_pointer, int *capacity, int needed, size_t item_size) {
  if (needed <= *capacity) return true;
  void *items;
  memcpy(&items, array_pointer, sizeof items);
  int grown = *capacity ? *capacity : 8;
  while (grown < needed) grown *= 2;
  void *bigger = realloc(items, (size_t)grown * item_size);
  if (!bigger) return false;
  memcpy(array_pointer, &bigger, sizeof bigger);
  *capacity = grown;
  return true;
}

static uint64_t align_up(uint64_t value, uint64_t alignment) {
  return alignment > 1 ? (value + alignment - 1) / alignment * alignment : value;
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* ------------------------------------------------------------------------------------ */
/* The loader and the functions we call, all fetched at run time                        */

/* clang-format off */
#define GLOBAL_FUNCTIONS(X) X(vkCreateInstance) X(vkEnumerateInstanceVersion)
#define INSTANCE_FUNCTIONS(X)                                                                 \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)         \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2)                           \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties)          \
  X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice) X(vkGetDeviceProcAddr)
#define DEVICE_FUNCTIONS(X)                                                                   \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkCreateBuffer)                \
  X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory)     \
  X(vkBindBufferMemory) X(vkMapMemory) X(vkCreateShaderModule) X(vkDestroyShaderModule)       \
  X(vkCreatePipelineCache) X(vkDestroyPipelineCache) X(vkCreateDescriptorSetLayout)           \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)        \
  X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool)                  \
  X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)            \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)                  \
  X(vkFreeCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline)  \
  X(vkCmdBindDescriptorSets) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer)      \
  X(vkCmdWriteTimestamp) X(vkCmdResetQueryPool) X(vkCreateQueryPool) X(vkDestroyQueryPool)    \
  X(vkGetQueryPoolResults) X(vkCreateFence) X(vkDestroyFence) X(vkResetFences)                \
  X(vkWaitForFences) X(vkQueueSubmit)
/* clang-format on */

typedef struct {
  void *library;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
#define DECLARE_FUNCTION(name) PFN_##name name;
  GLOBAL_FUNCTIONS(DECLARE_FUNCTION)
  INSTANCE_FUNCTIONS(DECLARE_FUNCTION)
  DEVICE_FUNCTIONS(DECLARE_FUNCTION)
#undef DECLARE_FUNCTION
} vk_api;

static int open_loader(vk_api *api, message *out) {
  const char *path = getenv("DNNF_VULKAN_LOADER");
  if (!path || !*path) path = LOADER_LIBRARY;
  dlerror();
  api->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!api->library) {
    const char *why = dlerror();
    return fail(out, DNNF_VK_NO_DEVICE, "cannot load %s (%s): %s", path, why ? why : "dlopen failed",
                INSTALL_LOADER);
  }
  void *symbol = dlsym(api->library, "vkGetInstanceProcAddr");
  if (!symbol)
    return fail(out, DNNF_VK_NO_DEVICE, "%s has no vkGetInstanceProcAddr: %s", path, INSTALL_LOADER);
  memcpy(&api->vkGetInstanceProcAddr, &symbol, sizeof symbol);
#define LOAD_GLOBAL(name) api->name = (PFN_##name)api->vkGetInstanceProcAddr(VK_NULL_HANDLE, #name);
  GLOBAL_FUNCTIONS(LOAD_GLOBAL)
#undef LOAD_GLOBAL
  if (!api->vkCreateInstance)
    return fail(out, DNNF_VK_NO_DEVICE, "%s has no vkCreateInstance: %s", path, INSTALL_LOADER);
  return DNNF_VK_OK;
}

static int load_instance_functions(vk_api *api, VkInstance instance, message *out) {
  const char *missing = NULL;
#define LOAD_INSTANCE(name)                                            \
  api->name = (PFN_##name)api->vkGetInstanceProcAddr(instance, #name); \
  if (!api->name && !missing) missing = #name;
  INSTANCE_FUNCTIONS(LOAD_INSTANCE)
#undef LOAD_INSTANCE
  if (missing)
    return fail(out, DNNF_VK_UNSUPPORTED, "the Vulkan loader lacks %s (Vulkan 1.1 is required)", missing);
  return DNNF_VK_OK;
}

static int load_device_functions(vk_api *api, VkDevice device, message *out) {
  const char *missing = NULL;
#define LOAD_DEVICE(name)                                          \
  api->name = (PFN_##name)api->vkGetDeviceProcAddr(device, #name); \
  if (!api->name && !missing) missing = #name;
  DEVICE_FUNCTIONS(LOAD_DEVICE)
#undef LOAD_DEVICE
  if (missing) return fail(out, DNNF_VK_ERROR, "vkGetDeviceProcAddr found no %s", missing);
  return DNNF_VK_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Devices                                                                              */

enum {
  FEATURE_INT64,
  FEATURE_FLOAT16,
  FEATURE_INT16,
  FEATURE_STORAGE16,
  FEATURE_INT8,
  FEATURE_STORAGE8,
  FEATURE_COUNT
};
static const char *const FEATURE_NAMES[FEATURE_COUNT] = {"shaderInt64", "shaderFloat16",
                                                         "shaderInt16", "storageBuffer16BitAccess",
                                                         "shaderInt8",  "storageBuffer8BitAccess"};

static int feature_index(const char *name, size_t length) {
  for (int f = 0; f < FEATURE_COUNT; ++f)
    if (strlen(FEATURE_NAMES[f]) == length && strncmp(FEATURE_NAMES[f], name, length) == 0) return f;
  return -1;
}

static void append(char *text, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void append(char *text, size_t size, const char *format, ...) {
  size_t used = strlen(text);
  if (used + 1 >= size) return;
  va_list args;
  va_start(args, format);
  vsnprintf(text + used, size - used, format, args);
  va_end(args);
}

static void feature_list(unsigned features, char *text, size_t size) {
  text[0] = 0;
  for (int f = 0; f < FEATURE_COUNT; ++f)
    if (features & (1u << f)) append(text, size, "%s%s", text[0] ? " " : "", FEATURE_NAMES[f]);
}

typedef struct {
  VkPhysicalDevice handle;
  uint32_t index;       /* in the loader's list */
  uint32_t api_version; /* what we may use: the lower of the instance's and the device's */
  VkPhysicalDeviceProperties properties;
  VkPhysicalDeviceMemoryProperties memory;
  VkDeviceSize max_allocation_bytes;
  uint32_t subgroup_size;
  char driver[VK_MAX_DRIVER_NAME_SIZE + VK_MAX_DRIVER_INFO_SIZE + 2];
  uint32_t queue_family; /* UINT32_MAX: no compute queue */
  uint32_t timestamp_bits;
  unsigned features;                               /* 1 << FEATURE_* */
  bool float16_int8_extension, storage8_extension; /* needed below Vulkan 1.2, and present */
} device_info;

typedef struct {
  vk_api api;
  VkInstance instance;
  uint32_t instance_version;
  device_info device;
} vk_context;

static bool usable(const device_info *device) {
  return device->api_version >= VK_API_VERSION_1_1 && device->queue_family != UINT32_MAX;
}

/* A compute queue, with timestamps where one has them. */
static void choose_queue_family(const vk_api *api, device_info *device) {
  uint32_t count = 0;
  api->vkGetPhysicalDeviceQueueFamilyProperties(device->handle, &count, NULL);
  VkQueueFamilyProperties *families = calloc(count ? count : 1, sizeof *families);
  if (!families) return;
  api->vkGetPhysicalDeviceQueueFamilyProperties(device->handle, &count, families);
  for (uint32_t pass = 0; pass < 2 && device->queue_family == UINT32_MAX; ++pass)
    for (uint32_t f = 0; f < count; ++f)
      if ((families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
          (pass == 1 || families[f].timestampValidBits > 0)) {
        device->queue_family = f;
        device->timestamp_bits = families[f].timestampValidBits;
        break;
      }
  free(families);
}

static bool has_extension(const vk_api *api, VkPhysicalDevice handle, const char *name) {
  uint32_t count = 0;
  if (api->vkEnumerateDeviceExtensionProperties(handle, NULL, &count, NULL) != VK_SUCCESS) return false;
  VkExtensionProperties *extensions = calloc(count ? count : 1, sizeof *extensions);
  if (!extensions) return false;
  bool found = false;
  if (api->vkEnumerateDeviceExtensionProperties(handle, NULL, &count, extensions) >= 0)
    for (uint32_t e = 0; e < count && !found; ++e) found = strcmp(extensions[e].extensionName, name) == 0;
  free(extensions);
  return found;
}

/* The plan's features as a chain of feature structs, for both the query and the enabling. */
typedef struct {
  VkPhysicalDeviceFeatures2 core;
  VkPhysicalDevice16BitStorageFeatures storage16;
  VkPhysicalDeviceShaderFloat16Int8Features float16_int8;
  VkPhysicalDevice8BitStorageFeatures storage8;
} feature_chain;

static void init_feature_chain(feature_chain *chain, const device_info *device) {
  memset(chain, 0, sizeof *chain);
  chain->core.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  chain->storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  chain->float16_int8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
  chain->storage8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
  chain->core.pNext = &chain->storage16;
  void **tail = &chain->storage16.pNext;
  bool vulkan12 = device->api_version >= VK_API_VERSION_1_2;
  if (vulkan12 || device->float16_int8_extension) {
    *tail = &chain->float16_int8;
    tail = &chain->float16_int8.pNext;
  }
  if (vulkan12 || device->storage8_extension) *tail = &chain->storage8;
}

static unsigned chain_features(const feature_chain *chain) {
  bool has[FEATURE_COUNT] = {
      [FEATURE_INT64] = chain->core.features.shaderInt64,
      [FEATURE_FLOAT16] = chain->float16_int8.shaderFloat16,
      [FEATURE_INT16] = chain->core.features.shaderInt16,
      [FEATURE_STORAGE16] = chain->storage16.storageBuffer16BitAccess,
      [FEATURE_INT8] = chain->float16_int8.shaderInt8,
      [FEATURE_STORAGE8] = chain->storage8.storageBuffer8BitAccess,
  };
  unsigned features = 0;
  for (int f = 0; f < FEATURE_COUNT; ++f)
    if (has[f]) features |= 1u << f;
  return features;
}

static void enable_features(feature_chain *chain, unsigned features) {
  chain->core.features.shaderInt64 = (features >> FEATURE_INT64) & 1;
  chain->float16_int8.shaderFloat16 = (features >> FEATURE_FLOAT16) & 1;
  chain->core.features.shaderInt16 = (features >> FEATURE_INT16) & 1;
  chain->storage16.storageBuffer16BitAccess = (features >> FEATURE_STORAGE16) & 1;
  chain->float16_int8.shaderInt8 = (features >> FEATURE_INT8) & 1;
  chain->storage8.storageBuffer8BitAccess = (features >> FEATURE_STORAGE8) & 1;
}

/* DNNF_VULKAN_HIDE_FEATURES: features to treat as missing (tests of the refusal). */
static unsigned hidden_features(void) {
  const char *text = getenv("DNNF_VULKAN_HIDE_FEATURES");
  unsigned hidden = 0;
  while (text && *text) {
    size_t skip = strspn(text, " ,\t"), length = strcspn(text + skip, " ,\t");
    int f = feature_index(text + skip, length);
    if (f >= 0) hidden |= 1u << f;
    text += skip + length;
  }
  return hidden;
}

static void query_device(const vk_context *vk, VkPhysicalDevice handle, uint32_t index, device_info *device) {
  const vk_api *api = &vk->api;
  memset(device, 0, sizeof *device);
  device->handle = handle;
  device->index = index;
  device->queue_family = UINT32_MAX;
  api->vkGetPhysicalDeviceProperties(handle, &device->properties);
  device->api_version = device->properties.apiVersion < vk->instance_version ? device->properties.apiVersion
                                                                             : vk->instance_version;
  choose_queue_family(api, device);
  if (device->api_version < VK_API_VERSION_1_1) return; /* unusable: no *2 queries either */

  VkPhysicalDeviceDriverProperties driver = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup = {.sType =
                                                     VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maintenance3 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, .pNext = &subgroup};
  if (device->api_version >= VK_API_VERSION_1_2) subgroup.pNext = &driver;
  VkPhysicalDeviceProperties2 properties = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                            .pNext = &maintenance3};
  api->vkGetPhysicalDeviceProperties2(handle, &properties);
  device->max_allocation_bytes = maintenance3.maxMemoryAllocationSize;
  device->subgroup_size = subgroup.subgroupSize;
  if (driver.driverName[0])
    snprintf(device->driver, sizeof device->driver, "%s %s", driver.driverName, driver.driverInfo);

  bool vulkan12 = device->api_version >= VK_API_VERSION_1_2;
  device->float16_int8_extension = !vulkan12 && has_extension(api, handle, "VK_KHR_shader_float16_int8");
  device->storage8_extension = !vulkan12 && has_extension(api, handle, "VK_KHR_8bit_storage");
  feature_chain chain;
  init_feature_chain(&chain, device);
  api->vkGetPhysicalDeviceFeatures2(handle, &chain.core);
  device->features = chain_features(&chain) & ~hidden_features();
  api->vkGetPhysicalDeviceMemoryProperties(handle, &device->memory);
}

static int create_instance(vk_context *vk, message *out) {
  uint32_t version = VK_API_VERSION_1_0;
  if (vk->api.vkEnumerateInstanceVersion && vk->api.vkEnumerateInstanceVersion(&version) != VK_SUCCESS)
    version = VK_API_VERSION_1_0;
  if (version < VK_API_VERSION_1_1)
    return fail(out, DNNF_VK_UNSUPPORTED,
                "the Vulkan loader offers Vulkan %u.%u; 1.1 or later is required: %s",
                VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version), INSTALL_LOADER);
  if (version > VK_API_VERSION_1_3) version = VK_API_VERSION_1_3;
  vk->instance_version = version;
  VkApplicationInfo application = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                                   .pApplicationName = "dnnf-mlir",
                                   .pEngineName = "dnnf_vulkan",
                                   .apiVersion = version};
  VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &application};
  VkResult result = vk->api.vkCreateInstance(&info, NULL, &vk->instance);
  if (result != VK_SUCCESS) vk->instance = VK_NULL_HANDLE;
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER)
    return fail(out, DNNF_VK_NO_DEVICE,
                "no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER): %s",
                INSTALL_DRIVER);
  TRY(check(out, result, "vkCreateInstance"));
  return load_instance_functions(&vk->api, vk->instance, out);
}

static void list_devices(const device_info *devices, uint32_t count, char *text, size_t size) {
  text[0] = 0;
  for (uint32_t i = 0; i < count; ++i)
    append(text, size, "%s%u '%s'%s", i ? ", " : "", i, devices[i].properties.deviceName,
           usable(&devices[i]) ? "" : " (no compute queue or below Vulkan 1.1)");
}

static bool contains_ignoring_case(const char *text, const char *part) {
  size_t n = strlen(part);
  for (; *text; ++text) {
    size_t i = 0;
    while (i < n && tolower((unsigned char)text[i]) == tolower((unsigned char)part[i])) ++i;
    if (i == n) return true;
  }
  return n == 0;
}

static int rank(const device_info *device) {
  switch (device->properties.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

/* $DNNF_VULKAN_DEVICE (an index or a name's substring), else the best kind of device. */
static int pick_device(const device_info *devices, uint32_t count, int *chosen, message *out) {
  char listing[1024];
  list_devices(devices, count, listing, sizeof listing);
  const char *wanted = getenv("DNNF_VULKAN_DEVICE");
  *chosen = -1;
  if (wanted && *wanted) {
    bool is_index = strspn(wanted, "0123456789") == strlen(wanted) && strlen(wanted) < 9;
    for (uint32_t i = 0; i < count && *chosen < 0; ++i)
      if (is_index ? (uint32_t)atoi(wanted) == i
                   : usable(&devices[i]) && contains_ignoring_case(devices[i].properties.deviceName, wanted))
        *chosen = (int)i;
    if (*chosen < 0)
      return fail(out, DNNF_VK_NO_DEVICE, "no Vulkan device matches DNNF_VULKAN_DEVICE=%s (devices: %s)",
                  wanted, listing);
    if (!usable(&devices[*chosen]))
      return fail(out, DNNF_VK_NO_DEVICE,
                  "DNNF_VULKAN_DEVICE=%s names a device without a compute queue or Vulkan 1.1 (devices: %s)",
                  wanted, listing);
    return DNNF_VK_OK;
  }
  for (uint32_t i = 0; i < count; ++i)
    if (usable(&devices[i]) && (*chosen < 0 || rank(&devices[i]) > rank(&devices[*chosen]))) *chosen = (int)i;
  if (*chosen < 0)
    return fail(out, DNNF_VK_NO_DEVICE,
                "no Vulkan device has a compute queue and Vulkan 1.1 (devices: %s): %s", listing,
                INSTALL_DRIVER);
  return DNNF_VK_OK;
}

static int choose_device(vk_context *vk, message *out) {
  uint32_t count = 0;
  TRY(check(out, vk->api.vkEnumeratePhysicalDevices(vk->instance, &count, NULL),
            "vkEnumeratePhysicalDevices"));
  if (count == 0) return fail(out, DNNF_VK_NO_DEVICE, "Vulkan found no device: %s", INSTALL_DRIVER);
  VkPhysicalDevice *handles = calloc(count, sizeof *handles);
  device_info *devices = calloc(count, sizeof *devices);
  int status = handles && devices ? DNNF_VK_OK : out_of_host_memory(out, "device list");
  if (status == DNNF_VK_OK) {
    VkResult result = vk->api.vkEnumeratePhysicalDevices(vk->instance, &count, handles);
    status = check(out, result == VK_INCOMPLETE ? VK_SUCCESS : result, "vkEnumeratePhysicalDevices");
  }
  int chosen = -1;
  if (status == DNNF_VK_OK) {
    for (uint32_t i = 0; i < count; ++i) query_device(vk, handles[i], i, &devices[i]);
    status = pick_device(devices, count, &chosen, out);
  }
  if (status == DNNF_VK_OK) vk->device = devices[chosen];
  free(handles);
  free(devices);
  return status;
}

static int open_context(vk_context *vk, message *out) {
  TRY(open_loader(&vk->api, out));
  TRY(create_instance(vk, out));
  return choose_device(vk, out);
}

static void close_context(vk_context *vk) {
  if (vk->instance != VK_NULL_HANDLE && vk->api.vkDestroyInstance)
    vk->api.vkDestroyInstance(vk->instance, NULL);
  vk->instance = VK_NULL_HANDLE;
  if (vk->api.library) dlclose(vk->api.library);
  vk->api.library = NULL;
}

static const char *device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other device";
  }
}

/* The memory type buffers get: the first device-local one among `allowed`, else the first
   allowed; -1 when none. */
static int device_memory_type(const VkPhysicalDeviceMemoryProperties *memory, uint32_t allowed) {
  for (uint32_t t = 0; t < memory->memoryTypeCount; ++t)
    if ((allowed >> t & 1) && (memory->memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      return (int)t;
  for (uint32_t t = 0; t < memory->memoryTypeCount; ++t)
    if (allowed >> t & 1) return (int)t;
  return -1;
}

static bool host_coherent(const VkPhysicalDeviceMemoryProperties *memory, uint32_t type) {
  VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  return (memory->memoryTypes[type].propertyFlags & want) == want;
}

static bool staging_forced(void) {
  const char *value = getenv("DNNF_VULKAN_STAGING");
  return value && strcmp(value, "1") == 0;
}

static void describe_device(const device_info *d, char *text, size_t size) {
  const VkPhysicalDeviceLimits *limits = &d->properties.limits;
  uint32_t v = d->properties.apiVersion;
  char features[256];
  feature_list(d->features, features, sizeof features);
  int type = device_memory_type(&d->memory, ~0u);
  bool mapped = type >= 0 && host_coherent(&d->memory, (uint32_t)type) && !staging_forced();
  snprintf(text, size, "%s, Vulkan %u.%u.%u, subgroup %u, %s", d->properties.deviceName,
           VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v), d->subgroup_size,
           device_type_name(d->properties.deviceType));
  if (d->driver[0]) append(text, size, ", driver %s", d->driver);
  append(text, size, ", features: %s", features[0] ? features : "none of those a plan may require");
  append(text, size, ", limits: maxComputeWorkGroupSize %ux%ux%u, maxComputeWorkGroupInvocations %u",
         limits->maxComputeWorkGroupSize[0], limits->maxComputeWorkGroupSize[1],
         limits->maxComputeWorkGroupSize[2], limits->maxComputeWorkGroupInvocations);
  append(text, size, ", maxComputeWorkGroupCount %ux%ux%u, maxPerStageDescriptorStorageBuffers %u",
         limits->maxComputeWorkGroupCount[0], limits->maxComputeWorkGroupCount[1],
         limits->maxComputeWorkGroupCount[2], limits->maxPerStageDescriptorStorageBuffers);
  append(text, size, ", maxComputeSharedMemorySize %u", limits->maxComputeSharedMemorySize);
  append(text, size,
         ", maxStorageBufferRange %u, minStorageBufferOffsetAlignment %" PRIu64
         ", maxMemoryAllocationSize %" PRIu64,
         limits->maxStorageBufferRange, (uint64_t)limits->minStorageBufferOffsetAlignment,
         (uint64_t)d->max_allocation_bytes);
  append(text, size, ", %s", d->timestamp_bits ? "compute timestamps" : "no compute timestamps");
  append(text, size, ", %s",
         mapped ? "host-visible device memory (mapped)" : "device memory through staging copies");
}

/* ------------------------------------------------------------------------------------ */
/* The plan                                                                             */

typedef enum { ROLE_INPUT, ROLE_OUTPUT, ROLE_WEIGHT, ROLE_SCRATCH, ROLE_CONSTANT } buffer_role;
static const char *const ROLE_NAMES[] = {"input", "output", "weight", "scratch", "constant"};
#define NUM_ROLES 5

typedef struct {
  uint64_t bytes;
  buffer_role role;
  uint64_t argument; /* the input or output index, or the weights offset */
  uint64_t argument_bytes; /* an input's or output's bytes in the caller's memory (at most bytes) */
  unsigned char *data; /* a constant's bytes (the rest of the buffer is zeros) */
  int line;
} plan_buffer;

typedef struct {
  int spirv;
  char *entry;
  int bindings;
  uint32_t workgroup[3];
  uint64_t shared_bytes; /* of workgroup memory, read from its SPIR-V */
  char *name;
  int line;
} plan_kernel;

typedef struct {
  int buffer;
  uint64_t offset, range;
} plan_binding;

typedef struct {
  int kernel;
  uint32_t groups[3];
  bool barrier;
  int first_binding; /* into plan.bindings; the kernel says how many */
  int line;
} plan_dispatch;

typedef struct {
  unsigned features;
  plan_buffer *buffers;
  plan_kernel *kernels;
  plan_dispatch *dispatches;
  plan_binding *bindings;
  int *inputs, *outputs; /* the buffer of each input and output; -1 until declared */
  int num_buffers, num_kernels, num_dispatches, num_bindings, num_inputs, num_outputs;
  int buffers_capacity, kernels_capacity, dispatches_capacity, bindings_capacity, inputs_capacity,
      outputs_capacity;
} plan;

static void free_plan(plan *p) {
  for (int k = 0; k < p->num_kernels; ++k) {
    free(p->kernels[k].entry);
    free(p->kernels[k].name);
  }
  for (int b = 0; b < p->num_buffers; ++b) free(p->buffers[b].data);
  free(p->buffers);
  free(p->kernels);
  free(p->dispatches);
  free(p->bindings);
  free(p->inputs);
  free(p->outputs);
  memset(p, 0, sizeof *p);
}

typedef struct {
  plan *plan;
  int num_spirv;
  size_t weights_bytes;
  message *out;
  int line;
  bool seen_header;
  char **tokens;
  int num_tokens, tokens_capacity;
} parser;

__attribute__((format(printf, 2, 3))) static int bad_line(parser *p, const char *format, ...) {
  char what[400];
  va_list args;
  va_start(args, format);
  vsnprintf(what, sizeof what, format, args);
  va_end(args);
  return fail(p->out, DNNF_VK_BAD_PLAN, "plan line %d: %s", p->line, what);
}

static bool parse_number(const char *token, uint64_t max, uint64_t *value) {
  uint64_t v = 0;
  if (!*token) return false;
  for (const char *c = token; *c; ++c) {
    if (*c < '0' || *c > '9') return false;
    unsigned digit = (unsigned)(*c - '0');
    if (digit > max || v > (max - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *value = v;
  return true;
}

static int read_number(parser *p, const char *token, const char *what, uint64_t min, uint64_t max,
                       uint64_t *value) {
  if (!parse_number(token, max, value) || *value < min)
    return bad_line(p, "%s must be a number from %" PRIu64 " to %" PRIu64 ", not '%.40s'", what, min, max,
                    token);
  return DNNF_VK_OK;
}

/* Splits the line (changed in place) at blanks, up to a '#'. */
static int tokenize(parser *p, char *line) {
  char *comment = strchr(line, '#');
  if (comment) *comment = 0;
  p->num_tokens = 0;
  const char *blanks = " \t\r\v\f";
  for (char *c = line + strspn(line, blanks); *c; c += strspn(c, blanks)) {
    if (!RESERVE(p->tokens, p->tokens_capacity, p->num_tokens + 1)) return out_of_host_memory(p->out, "plan");
    p->tokens[p->num_tokens++] = c;
    c += strcspn(c, blanks);
    if (*c) *c++ = 0;
  }
  return DNNF_VK_OK;
}

static int expect_fields(parser *p, int fields, const char *usage) {
  if (p->num_tokens != fields)
    return bad_line(p, "'%s' takes %d fields (%s), got %d", p->tokens[0], fields - 1, usage,
                    p->num_tokens - 1);
  return DNNF_VK_OK;
}

static int parse_header(parser *p) {
  if (strcmp(p->tokens[0], "dnnf-vulkan-plan") != 0)
    return bad_line(p, "expected 'dnnf-vulkan-plan %d' first, got '%.40s'", DNNF_VK_PLAN_VERSION,
                    p->tokens[0]);
  TRY(expect_fields(p, 2, "the version"));
  uint64_t version;
  if (!parse_number(p->tokens[1], 1000000, &version) || version != DNNF_VK_PLAN_VERSION)
    return bad_line(p, "plan version '%.40s' is not the one this runtime reads (%d)", p->tokens[1],
                    DNNF_VK_PLAN_VERSION);
  p->seen_header = true;
  return DNNF_VK_OK;
}

static int parse_require(parser *p) {
  if (p->num_tokens < 2) return bad_line(p, "'require' names no feature");
  for (int t = 1; t < p->num_tokens; ++t) {
    int f = feature_index(p->tokens[t], strlen(p->tokens[t]));
    if (f < 0) {
      char known[256];
      feature_list((1u << FEATURE_COUNT) - 1, known, sizeof known);
      return bad_line(p, "unknown feature '%.40s' (known: %s)", p->tokens[t], known);
    }
    p->plan->features |= 1u << f;
  }
  return DNNF_VK_OK;
}

static int check_id(parser *p, const char *what, int expected) {
  uint64_t id;
  TRY(read_number(p, p->tokens[1], "the id", 0, INT32_MAX, &id));
  if (id != (uint64_t)expected)
    return bad_line(p, "%s id %" PRIu64 " out of order: expected %d (ids are dense from 0 in order)", what,
                    id, expected);
  return DNNF_VK_OK;
}

/* Records buffer `id` as input or output `index` in `slots` (grown, holes -1). */
static int assign_slot(parser *p, int **slots, int *count, int *capacity, uint64_t index, int id,
                       const char *role) {
  if (!reserve_items((void *)slots, capacity, (int)index + 1, sizeof **slots))
    return out_of_host_memory(p->out, "plan");
  for (; *count <= (int)index; ++*count) (*slots)[*count] = -1;
  if ((*slots)[index] >= 0)
    return bad_line(p, "%s %" PRIu64 " is already buffer %d (line %d)", role, index, (*slots)[index],
                    p->plan->buffers[(*slots)[index]].line);
  (*slots)[index] = id;
  return DNNF_VK_OK;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A constant's bytes, written in hex (two digits a byte), at most `bytes` of them: the
   buffer's remaining bytes are zeros. */
static int read_hex(parser *p, const char *text, uint64_t bytes, unsigned char **data) {
  size_t digits = strlen(text);
  if (digits % 2 || digits / 2 > bytes)
    return bad_line(p, "a constant of %" PRIu64 " bytes takes at most %" PRIu64 " bytes of hex, two digits each",
                    bytes, bytes);
  *data = calloc((size_t)bytes, 1);
  if (!*data) return out_of_host_memory(p->out, "plan");
  for (size_t i = 0; i < digits / 2; ++i) {
    int high = hex_digit(text[2 * i]), low = hex_digit(text[2 * i + 1]);
    if (high < 0 || low < 0) {
      free(*data);
      *data = NULL;
      return bad_line(p, "a constant's bytes must be hex digits");
    }
    (*data)[i] = (unsigned char)(high << 4 | low);
  }
  return DNNF_VK_OK;
}

static int parse_buffer(parser *p) {
  plan *plan = p->plan;
  if (p->num_tokens < 4)
    return bad_line(p, "'buffer' takes <id> <bytes> input|output|weight|scratch|constant [<index, offset or bytes>]");
  TRY(check_id(p, "buffer", plan->num_buffers));
  plan_buffer buffer = {.line = p->line};
  TRY(read_number(p, p->tokens[2], "the size in bytes", 1, MAX_BYTES, &buffer.bytes));
  int role = -1;
  for (int r = 0; r < NUM_ROLES; ++r)
    if (strcmp(p->tokens[3], ROLE_NAMES[r]) == 0) role = r;
  if (role < 0)
    return bad_line(p, "unknown buffer kind '%.40s' (input, output, weight, scratch or constant)", p->tokens[3]);
  buffer.role = (buffer_role)role;
  int id = plan->num_buffers;
  if (buffer.role == ROLE_SCRATCH) {
    TRY(expect_fields(p, 4, "<id> <bytes> scratch"));
  } else if (buffer.role == ROLE_CONSTANT) {
    TRY(expect_fields(p, 5, "<id> <bytes> constant <hex bytes>"));
    TRY(read_hex(p, p->tokens[4], buffer.bytes, &buffer.data));
  } else if (buffer.role == ROLE_WEIGHT) {
    TRY(expect_fields(p, 5, "<id> <bytes> weight <offset>"));
    TRY(read_number(p, p->tokens[4], "the weights offset", 0, MAX_BYTES, &buffer.argument));
    if (buffer.argument + buffer.bytes > p->weights_bytes)
      return bad_line(p,
                      "weight buffer %d reads weights[%" PRIu64 " .. %" PRIu64
                      "), past the end of the weights (%zu bytes)",
                      id, buffer.argument, buffer.argument + buffer.bytes, p->weights_bytes);
  } else {
    bool input = buffer.role == ROLE_INPUT;
    const char *usage = input ? "<id> <bytes> input <index> [<caller's bytes>]"
                              : "<id> <bytes> output <index> [<caller's bytes>]";
    if (p->num_tokens != 6) TRY(expect_fields(p, 5, usage));
    TRY(read_number(p, p->tokens[4], input ? "the input index" : "the output index", 0, MAX_INDEX,
                    &buffer.argument));
    buffer.argument_bytes = buffer.bytes;
    if (p->num_tokens == 6)
      TRY(read_number(p, p->tokens[5], "the caller's bytes", 1, buffer.bytes, &buffer.argument_bytes));
    if (input)
      TRY(assign_slot(p, &plan->inputs, &plan->num_inputs, &plan->inputs_capacity, buffer.argument, id,
                      "input"));
    else
      TRY(assign_slot(p, &plan->outputs, &plan->num_outputs, &plan->outputs_capacity, buffer.argument, id,
                      "output"));
  }
  if (!RESERVE(plan->buffers, plan->buffers_capacity, id + 1)) return out_of_host_memory(p->out, "plan");
  plan->buffers[plan->num_buffers++] = buffer;
  return DNNF_VK_OK;
}

static int parse_kernel(parser *p) {
  plan *plan = p->plan;
  TRY(expect_fields(p, 9, "<id> <spirv-index> <entry-point> <num-bindings> <wx> <wy> <wz> <name>"));
  TRY(check_id(p, "kernel", plan->num_kernels));
  uint64_t spirv, bindings, size[3];
  TRY(read_number(p, p->tokens[2], "the SPIR-V index", 0, INT32_MAX, &spirv));
  if (spirv >= (uint64_t)p->num_spirv)
    return bad_line(p, "SPIR-V index %" PRIu64 " out of range: %d SPIR-V modules were given", spirv,
                    p->num_spirv);
  TRY(read_number(p, p->tokens[4], "the number of bindings", 1, MAX_BINDINGS, &bindings));
  for (int d = 0; d < 3; ++d)
    TRY(read_number(p, p->tokens[5 + d], "a workgroup size", 1, UINT32_MAX, &size[d]));
  plan_kernel kernel = {.spirv = (int)spirv,
                        .bindings = (int)bindings,
                        .line = p->line,
                        .workgroup = {(uint32_t)size[0], (uint32_t)size[1], (uint32_t)size[2]}};
  if (!RESERVE(plan->kernels, plan->kernels_capacity, plan->num_kernels + 1))
    return out_of_host_memory(p->out, "plan");
  kernel.entry = strdup(p->tokens[3]);
  kernel.name = strdup(p->tokens[8]);
  plan->kernels[plan->num_kernels++] = kernel; /* owned by the plan now, even if a strdup failed */
  if (!kernel.entry || !kernel.name) return out_of_host_memory(p->out, "plan");
  return DNNF_VK_OK;
}

/* <buffer>:<offset>:<range> */
static int parse_binding(parser *p, const char *token, int index, plan_binding *binding) {
  char text[96];
  if (strlen(token) >= sizeof text) return bad_line(p, "binding %d: '%.40s...' is too long", index, token);
  strcpy(text, token);
  char *first = strchr(text, ':'), *second = first ? strchr(first + 1, ':') : NULL;
  if (!second || strchr(second + 1, ':'))
    return bad_line(p, "binding %d: expected <buffer>:<offset>:<range>, got '%s'", index, token);
  *first = *second = 0;
  uint64_t buffer;
  TRY(read_number(p, text, "a binding's buffer", 0, INT32_MAX, &buffer));
  TRY(read_number(p, first + 1, "a binding's offset", 0, MAX_BYTES, &binding->offset));
  TRY(read_number(p, second + 1, "a binding's range", 1, MAX_BYTES, &binding->range));
  if (buffer >= (uint64_t)p->plan->num_buffers)
    return bad_line(p, "binding %d: buffer %" PRIu64 " is not declared above (%d buffers so far)", index,
                    buffer, p->plan->num_buffers);
  binding->buffer = (int)buffer;
  uint64_t bytes = p->plan->buffers[buffer].bytes, end = binding->offset + binding->range;
  if (end > bytes)
    return bad_line(
        p, "binding %d: bytes [%" PRIu64 " .. %" PRIu64 ") pass the end of buffer %d (%" PRIu64 " bytes)",
        index, binding->offset, end, binding->buffer, bytes);
  return DNNF_VK_OK;
}

static int parse_dispatch(parser *p) {
  plan *plan = p->plan;
  if (p->num_tokens < 7)
    return bad_line(
        p,
        "'dispatch' takes <kernel-id> <gx> <gy> <gz> <barrier> and a <buffer>:<offset>:<range> per binding");
  uint64_t kernel, groups[3], barrier;
  TRY(read_number(p, p->tokens[1], "the kernel id", 0, INT32_MAX, &kernel));
  if (kernel >= (uint64_t)plan->num_kernels)
    return bad_line(p, "kernel %" PRIu64 " is not declared above (%d kernels so far)", kernel,
                    plan->num_kernels);
  const plan_kernel *k = &plan->kernels[kernel];
  if (p->num_tokens != 6 + k->bindings)
    return bad_line(p, "kernel %" PRIu64 " '%s' has %d bindings, the dispatch names %d", kernel, k->name,
                    k->bindings, p->num_tokens - 6);
  for (int d = 0; d < 3; ++d)
    TRY(read_number(p, p->tokens[2 + d], "a group count", 1, UINT32_MAX, &groups[d]));
  TRY(read_number(p, p->tokens[5], "the barrier flag", 0, 1, &barrier));
  if (plan->num_bindings > INT32_MAX / 2 - k->bindings || plan->num_dispatches > INT32_MAX / 2)
    return bad_line(p, "too many dispatches or bindings");
  if (!RESERVE(plan->bindings, plan->bindings_capacity, plan->num_bindings + k->bindings) ||
      !RESERVE(plan->dispatches, plan->dispatches_capacity, plan->num_dispatches + 1))
    return out_of_host_memory(p->out, "plan");
  for (int b = 0; b < k->bindings; ++b)
    TRY(parse_binding(p, p->tokens[6 + b], b, &plan->bindings[plan->num_bindings + b]));
  plan->dispatches[plan->num_dispatches++] =
      (plan_dispatch){.kernel = (int)kernel,
                      .groups = {(uint32_t)groups[0], (uint32_t)groups[1], (uint32_t)groups[2]},
                      .barrier = barrier == 1,
                      .first_binding = plan->num_bindings,
                      .line = p->line};
  plan->num_bindings += k->bindings;
  return DNNF_VK_OK;
}

static int parse_line(parser *p) {
  const char *keyword = p->tokens[0];
  if (!p->seen_header) return parse_header(p);
  if (strcmp(keyword, "require") == 0) return parse_require(p);
  if (strcmp(keyword, "buffer") == 0) return parse_buffer(p);
  if (strcmp(keyword, "kernel") == 0) return parse_kernel(p);
  if (strcmp(keyword, "dispatch") == 0) return parse_dispatch(p);
  if (strcmp(keyword, "dnnf-vulkan-plan") == 0) return bad_line(p, "a second 'dnnf-vulkan-plan' line");
  return bad_line(p, "unknown keyword '%.40s' (require, buffer, kernel or dispatch)", keyword);
}

static int check_slots_dense(message *out, const int *slots, int count, const char *role) {
  for (int i = 0; i < count; ++i)
    if (slots[i] < 0)
      return fail(out, DNNF_VK_BAD_PLAN, "plan: %s %d has no buffer (%ss are numbered 0..%d)", role, i, role,
                  count - 1);
  return DNNF_VK_OK;
}

static int parse_lines(parser *p, const char *text) {
  for (const char *line = text; *line;) {
    size_t length = strcspn(line, "\n");
    char *copy = malloc(length + 1);
    if (!copy) return out_of_host_memory(p->out, "plan");
    memcpy(copy, line, length);
    copy[length] = 0;
    ++p->line;
    int status = tokenize(p, copy);
    if (status == DNNF_VK_OK && p->num_tokens > 0) status = parse_line(p);
    free(copy);
    if (status != DNNF_VK_OK) return status;
    line += length + (line[length] == '\n');
  }
  if (!p->seen_header)
    return fail(p->out, DNNF_VK_BAD_PLAN, "plan: empty (no 'dnnf-vulkan-plan %d' line)",
                DNNF_VK_PLAN_VERSION);
  if (p->plan->num_dispatches == 0) return fail(p->out, DNNF_VK_BAD_PLAN, "plan: no dispatch");
  TRY(check_slots_dense(p->out, p->plan->inputs, p->plan->num_inputs, "input"));
  return check_slots_dense(p->out, p->plan->outputs, p->plan->num_outputs, "output");
}

static int parse_plan(const char *text, int num_spirv, size_t weights_bytes, plan *plan, message *out) {
  parser p = {.plan = plan, .num_spirv = num_spirv, .weights_bytes = weights_bytes, .out = out};
  int status = parse_lines(&p, text);
  free(p.tokens);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* What the SPIR-V says about a kernel, checked against its plan line                   */

#define SPIRV_MAGIC 0x07230203u
enum {
  OP_ENTRY_POINT = 15,
  OP_EXECUTION_MODE = 16,
  OP_DECORATE = 71,
  OP_EXECUTION_MODE_ID = 331,
  EXECUTION_MODEL_GL_COMPUTE = 5,
  MODE_LOCAL_SIZE = 17,
  MODE_LOCAL_SIZE_ID = 38,
  DECORATION_BUILTIN = 11,
  DECORATION_BINDING = 33,
  DECORATION_DESCRIPTOR_SET = 34,
  BUILTIN_WORKGROUP_SIZE = 25,
  OP_TYPE_BOOL = 20,
  OP_TYPE_INT = 21,
  OP_TYPE_FLOAT = 22,
  OP_TYPE_VECTOR = 23,
  OP_TYPE_MATRIX = 24,
  OP_TYPE_ARRAY = 28,
  OP_TYPE_STRUCT = 30,
  OP_TYPE_POINTER = 32,
  OP_CONSTANT = 43,
  OP_VARIABLE = 59,
  STORAGE_CLASS_WORKGROUP = 4
};

typedef struct {
  bool found;       /* a GLCompute entry point of that name */
  int entry_points; /* in the module */
  bool has_local_size;
  uint32_t local_size[3];
  bool size_from_constants; /* a WorkgroupSize constant or LocalSizeId decides the size instead */
  uint32_t bindings_used;   /* 1 + the highest Binding decoration */
  bool other_set;
  uint32_t set;
} spirv_facts;

static int check_spirv_header(const dnnf_vk_spirv *blob, int index, message *out) {
  if (!blob->words || blob->count < 5)
    return fail(out, DNNF_VK_BAD_PLAN, "SPIR-V module %d is empty or shorter than its header (%zu words)",
                index, blob->count);
  if (blob->words[0] != SPIRV_MAGIC)
    return fail(out, DNNF_VK_BAD_PLAN,
                "SPIR-V module %d does not start with the SPIR-V magic number (0x%08x)", index,
                (unsigned)blob->words[0]);
  return DNNF_VK_OK;
}

/* A literal string of SPIR-V (packed 4 bytes a word, lowest byte first) equals `text`. */
static bool spirv_string_equals(const uint32_t *words, size_t count, const char *text) {
  for (size_t byte = 0; byte < 4 * count; ++byte) {
    char c = (char)(words[byte / 4] >> (8 * (byte % 4)) & 0xff);
    if (c != text[byte]) return false;
    if (c == 0) return true;
  }
  return false;
}

static int read_spirv_facts(const dnnf_vk_spirv *blob, int index, const char *entry, spirv_facts *facts,
                            message *out) {
  const uint32_t *w = blob->words;
  uint32_t entry_id = UINT32_MAX;
  memset(facts, 0, sizeof *facts);
  for (size_t i = 5; i < blob->count;) {
    uint32_t length = w[i] >> 16, opcode = w[i] & 0xffff;
    if (length == 0 || length > blob->count - i)
      return fail(out, DNNF_VK_BAD_PLAN, "SPIR-V module %d is malformed at word %zu", index, i);
    if (opcode == OP_ENTRY_POINT && length >= 4) {
      ++facts->entry_points;
      if (w[i + 1] == EXECUTION_MODEL_GL_COMPUTE && spirv_string_equals(w + i + 3, length - 3, entry)) {
        facts->found = true;
        entry_id = w[i + 2];
      }
    } else if (opcode == OP_EXECUTION_MODE && length >= 6 && w[i + 1] == entry_id &&
               w[i + 2] == MODE_LOCAL_SIZE) {
      facts->has_local_size = true;
      memcpy(facts->local_size, w + i + 3, sizeof facts->local_size);
    } else if (opcode == OP_EXECUTION_MODE_ID && length >= 3 && w[i + 1] == entry_id &&
               w[i + 2] == MODE_LOCAL_SIZE_ID) {
      facts->size_from_constants = true;
    } else if (opcode == OP_DECORATE && length >= 4) {
      uint32_t decoration = w[i + 2], value = w[i + 3];
      if (decoration == DECORATION_BUILTIN && value == BUILTIN_WORKGROUP_SIZE)
        facts->size_from_constants = true;
      if (decoration == DECORATION_BINDING && value + 1 > facts->bindings_used)
        facts->bindings_used = value + 1;
      if (decoration == DECORATION_DESCRIPTOR_SET && value != 0) {
        facts->other_set = true;
        facts->set = value;
      }
    }
    i += length;
  }
  return DNNF_VK_OK;
}

static uint64_t saturating_product(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

/* The bytes of workgroup (shared) memory the module's Workgroup variables take (a
   module of the compiler holds one kernel): a type's bytes from its scalars' widths,
   vectors' and arrays' lengths and structs' members, without padding. The device may
   lay them out larger; a module over its limit is refused before anything runs. */
static int workgroup_bytes(const dnnf_vk_spirv *blob, uint64_t *bytes, message *out) {
  const uint32_t *w = blob->words;
  uint32_t bound = w[3];
  uint64_t *value = calloc(bound ? bound : 1, sizeof *value); /* by id: a type's bytes, a constant's value */
  if (!value) return out_of_host_memory(out, "the SPIR-V's types");
#define ID_VALUE(word) (w[i + (word)] < bound ? value[w[i + (word)]] : 0)
  *bytes = 0;
  for (size_t i = 5; i < blob->count; i += w[i] >> 16) { /* lengths were checked by read_spirv_facts */
    uint32_t length = w[i] >> 16, opcode = w[i] & 0xffff;
    uint32_t id = length >= 2 ? w[i + 1] : 0; /* the result of a type */
    bool type = opcode == OP_TYPE_BOOL || opcode == OP_TYPE_INT || opcode == OP_TYPE_FLOAT ||
                opcode == OP_TYPE_VECTOR || opcode == OP_TYPE_MATRIX || opcode == OP_TYPE_ARRAY ||
                opcode == OP_TYPE_STRUCT || opcode == OP_TYPE_POINTER;
    if (type && (id == 0 || id >= bound)) continue; /* malformed: no type of ours */
    if (opcode == OP_TYPE_BOOL) {
      value[id] = 4;
    } else if ((opcode == OP_TYPE_INT || opcode == OP_TYPE_FLOAT) && length >= 3) {
      value[id] = w[i + 2] / 8;
    } else if ((opcode == OP_TYPE_VECTOR || opcode == OP_TYPE_MATRIX) && length >= 4) {
      value[id] = saturating_product(ID_VALUE(2), w[i + 3]);
    } else if (opcode == OP_TYPE_ARRAY && length >= 4) {
      value[id] = saturating_product(ID_VALUE(2), ID_VALUE(3));
    } else if (opcode == OP_TYPE_STRUCT) {
      uint64_t sum = 0;
      for (uint32_t member = 2; member < length; ++member)
        sum = sum + ID_VALUE(member) >= sum ? sum + ID_VALUE(member) : UINT64_MAX;
      value[id] = sum;
    } else if (opcode == OP_TYPE_POINTER && length >= 4) {
      value[id] = w[i + 2] == STORAGE_CLASS_WORKGROUP ? ID_VALUE(3) : 0;
    } else if (opcode == OP_CONSTANT && length >= 4 && w[i + 2] != 0 && w[i + 2] < bound) {
      value[w[i + 2]] = length >= 5 ? (uint64_t)w[i + 4] << 32 | w[i + 3] : w[i + 3];
    } else if (opcode == OP_VARIABLE && length >= 4 && w[i + 3] == STORAGE_CLASS_WORKGROUP) {
      *bytes = *bytes + ID_VALUE(1) >= *bytes ? *bytes + ID_VALUE(1) : UINT64_MAX;
    }
  }
#undef ID_VALUE
  free(value);
  return DNNF_VK_OK;
}

static int check_kernel_spirv(plan *p, int k, const dnnf_vk_spirv *blobs, message *out) {
  plan_kernel *kernel = &p->kernels[k];
  spirv_facts facts;
  TRY(read_spirv_facts(&blobs[kernel->spirv], kernel->spirv, kernel->entry, &facts, out));
  TRY(workgroup_bytes(&blobs[kernel->spirv], &kernel->shared_bytes, out));
  const uint32_t *size = kernel->workgroup, *local = facts.local_size;
  if (!facts.found)
    return fail(out, DNNF_VK_BAD_PLAN,
                "plan line %d: kernel %d '%s': SPIR-V module %d has no GLCompute entry point '%s'",
                kernel->line, k, kernel->name, kernel->spirv, kernel->entry);
  if (facts.has_local_size && !facts.size_from_constants && memcmp(size, local, sizeof facts.local_size) != 0)
    return fail(
        out, DNNF_VK_BAD_PLAN,
        "plan line %d: kernel %d '%s': workgroup size %ux%ux%u differs from the SPIR-V's LocalSize %ux%ux%u",
        kernel->line, k, kernel->name, size[0], size[1], size[2], local[0], local[1], local[2]);
  /* With one entry point every decorated resource is that kernel's (SPIR-V 1.3 entry
     points do not list their storage buffers, so several would need a call-graph walk). */
  if (facts.entry_points == 1 && facts.other_set)
    return fail(out, DNNF_VK_BAD_PLAN,
                "plan line %d: kernel %d '%s': the SPIR-V uses descriptor set %u; only set 0 is bound",
                kernel->line, k, kernel->name, facts.set);
  if (facts.entry_points == 1 && facts.bindings_used > (uint32_t)kernel->bindings)
    return fail(
        out, DNNF_VK_BAD_PLAN,
        "plan line %d: kernel %d '%s': the SPIR-V uses binding %u but the kernel line declares %d bindings",
        kernel->line, k, kernel->name, facts.bindings_used - 1, kernel->bindings);
  return DNNF_VK_OK;
}

static int check_spirv(plan *p, const dnnf_vk_spirv *blobs, int count, message *out) {
  for (int s = 0; s < count; ++s) TRY(check_spirv_header(&blobs[s], s, out));
  for (int k = 0; k < p->num_kernels; ++k) TRY(check_kernel_spirv(p, k, blobs, out));
  return DNNF_VK_OK;
}

/* ------------------------------------------------------------------------------------ */
/* The device's features and limits, checked against the plan before creating anything  */

static int unsupported_limit(message *out, const char *what, int line, const char *limit, uint64_t value,
                             uint64_t maximum) {
  return fail(out, DNNF_VK_UNSUPPORTED, "%s (plan line %d): %" PRIu64 " exceeds the device's %s %" PRIu64,
              what, line, value, limit, maximum);
}

static int check_kernel_limits(const plan *p, int k, const VkPhysicalDeviceLimits *limits, message *out) {
  const plan_kernel *kernel = &p->kernels[k];
  char what[300];
  snprintf(what, sizeof what, "kernel %d '%s'", k, kernel->name);
  if ((uint32_t)kernel->bindings > limits->maxPerStageDescriptorStorageBuffers)
    return unsupported_limit(out, what, kernel->line, "maxPerStageDescriptorStorageBuffers",
                             (uint64_t)kernel->bindings, limits->maxPerStageDescriptorStorageBuffers);
  if ((uint32_t)kernel->bindings > limits->maxDescriptorSetStorageBuffers)
    return unsupported_limit(out, what, kernel->line, "maxDescriptorSetStorageBuffers",
                             (uint64_t)kernel->bindings, limits->maxDescriptorSetStorageBuffers);
  static const char *const SIZE_LIMITS[3] = {"maxComputeWorkGroupSize[0]", "maxComputeWorkGroupSize[1]",
                                             "maxComputeWorkGroupSize[2]"};
  uint64_t invocations = 1;
  for (int d = 0; d < 3; ++d) {
    if (kernel->workgroup[d] > limits->maxComputeWorkGroupSize[d])
      return unsupported_limit(out, what, kernel->line, SIZE_LIMITS[d], kernel->workgroup[d],
                               limits->maxComputeWorkGroupSize[d]);
    invocations *= kernel->workgroup[d];
  }
  if (invocations > limits->maxComputeWorkGroupInvocations)
    return unsupported_limit(out, what, kernel->line,
                             "maxComputeWorkGroupInvocations (workgroup size product)", invocations,
                             limits->maxComputeWorkGroupInvocations);
  if (kernel->shared_bytes > limits->maxComputeSharedMemorySize)
    return unsupported_limit(out, what, kernel->line,
                             "maxComputeSharedMemorySize (bytes of workgroup memory its SPIR-V declares)",
                             kernel->shared_bytes, limits->maxComputeSharedMemorySize);
  return DNNF_VK_OK;
}

static int check_dispatch_limits(const plan *p, int d, const VkPhysicalDeviceLimits *limits, message *out) {
  const plan_dispatch *dispatch = &p->dispatches[d];
  const plan_kernel *kernel = &p->kernels[dispatch->kernel];
  char what[300];
  static const char *const COUNT_LIMITS[3] = {"maxComputeWorkGroupCount[0]", "maxComputeWorkGroupCount[1]",
                                              "maxComputeWorkGroupCount[2]"};
  snprintf(what, sizeof what, "dispatch %d of kernel '%s'", d, kernel->name);
  for (int g = 0; g < 3; ++g)
    if (dispatch->groups[g] > limits->maxComputeWorkGroupCount[g])
      return unsupported_limit(out, what, dispatch->line, COUNT_LIMITS[g], dispatch->groups[g],
                               limits->maxComputeWorkGroupCount[g]);
  for (int b = 0; b < kernel->bindings; ++b) {
    const plan_binding *binding = &p->bindings[dispatch->first_binding + b];
    snprintf(what, sizeof what, "dispatch %d of kernel '%s', binding %d (buffer %d)", d, kernel->name, b,
             binding->buffer);
    if (binding->range > limits->maxStorageBufferRange)
      return unsupported_limit(out, what, dispatch->line, "maxStorageBufferRange (the binding's range)",
                               binding->range, limits->maxStorageBufferRange);
    uint64_t alignment = limits->minStorageBufferOffsetAlignment;
    if (alignment > 1 && binding->offset % alignment != 0)
      return fail(out, DNNF_VK_UNSUPPORTED,
                  "%s (plan line %d): offset %" PRIu64
                  " is not a multiple of the device's "
                  "minStorageBufferOffsetAlignment %" PRIu64,
                  what, dispatch->line, binding->offset, alignment);
  }
  return DNNF_VK_OK;
}

static int check_device_support(const plan *p, const device_info *device, message *out) {
  unsigned missing = p->features & ~device->features;
  if (missing) {
    char names[256];
    feature_list(missing, names, sizeof names);
    return fail(out, DNNF_VK_UNSUPPORTED, "the plan requires %s, which %s lacks", names,
                device->properties.deviceName);
  }
  const VkPhysicalDeviceLimits *limits = &device->properties.limits;
  for (int b = 0; b < p->num_buffers; ++b)
    if (device->max_allocation_bytes && p->buffers[b].bytes > device->max_allocation_bytes) {
      char what[64];
      snprintf(what, sizeof what, "buffer %d", b);
      return unsupported_limit(out, what, p->buffers[b].line, "maxMemoryAllocationSize (the buffer's size)",
                               p->buffers[b].bytes, device->max_allocation_bytes);
    }
  for (int k = 0; k < p->num_kernels; ++k) TRY(check_kernel_limits(p, k, limits, out));
  for (int d = 0; d < p->num_dispatches; ++d) TRY(check_dispatch_limits(p, d, limits, out));
  return DNNF_VK_OK;
}

/* ------------------------------------------------------------------------------------ */
/* The model                                                                            */

typedef struct {
  VkBuffer handle;
  VkDeviceSize bytes;
  int block; /* into model.blocks */
  VkDeviceSize offset;
  unsigned char *host; /* mapped, or NULL */
} device_buffer;

typedef struct {
  VkDeviceMemory memory;
  VkDeviceSize bytes;
  uint32_t type;
  unsigned char *host;
} memory_block;

struct dnnf_vk_model {
  vk_context vk;
  plan plan;
  VkDevice device;
  bool device_functions; /* all of DEVICE_FUNCTIONS loaded */
  VkQueue queue;
  bool staging; /* inputs, outputs and weights go through staging buffers */
  device_buffer *buffers, *staging_inputs, *staging_outputs;
  unsigned char **input_host, **output_host; /* where runs write inputs and read outputs */
  memory_block *blocks;
  int num_blocks, blocks_capacity;
  VkShaderModule *modules;
  int num_modules;
  VkPipelineCache pipeline_cache;
  VkDescriptorSetLayout *set_layouts;
  VkPipelineLayout *pipeline_layouts;
  VkPipeline *pipelines;
  VkDescriptorPool descriptor_pool;
  VkDescriptorSet *descriptor_sets;
  VkCommandPool command_pool;
  VkCommandBuffer commands;
  VkFence fence;
  VkQueryPool timestamps; /* two per dispatch; VK_NULL_HANDLE without timestamps */
  double *dispatch_ms;
  bool have_times;
  uint64_t timeout_ns;
  pthread_mutex_t lock;
  bool lock_ready;
  int broken; /* a run's error code after which the model cannot run again */
  char broken_reason[400];
};

static int create_device(dnnf_vk_model *m, message *out) {
  const device_info *device = &m->vk.device;
  vk_api *api = &m->vk.api;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = device->queue_family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
  feature_chain features;
  init_feature_chain(&features, device);
  enable_features(&features, m->plan.features);
  const char *extensions[2];
  uint32_t num_extensions = 0;
  if (device->float16_int8_extension && (m->plan.features & (1u << FEATURE_FLOAT16 | 1u << FEATURE_INT8)))
    extensions[num_extensions++] = "VK_KHR_shader_float16_int8";
  if (device->storage8_extension && (m->plan.features & 1u << FEATURE_STORAGE8))
    extensions[num_extensions++] = "VK_KHR_8bit_storage";
  VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &features.core,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &queue,
                             .enabledExtensionCount = num_extensions,
                             .ppEnabledExtensionNames = extensions};
  VkResult result = api->vkCreateDevice(device->handle, &info, NULL, &m->device);
  if (result != VK_SUCCESS) m->device = VK_NULL_HANDLE;
  TRY(check(out, result, "vkCreateDevice on %s", device->properties.deviceName));
  TRY(load_device_functions(api, m->device, out));
  m->device_functions = true;
  api->vkGetDeviceQueue(m->device, device->queue_family, 0, &m->queue);
  return DNNF_VK_OK;
}

static int create_buffer(dnnf_vk_model *m, device_buffer *buffer, VkDeviceSize bytes,
                         VkBufferUsageFlags usage, const char *kind, int index, message *out) {
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = bytes,
                             .usage = usage,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  buffer->bytes = bytes;
  buffer->block = -1;
  VkResult result = m->vk.api.vkCreateBuffer(m->device, &info, NULL, &buffer->handle);
  if (result != VK_SUCCESS) buffer->handle = VK_NULL_HANDLE;
  return check(out, result, "vkCreateBuffer for %s %d (%" PRIu64 " bytes)", kind, index, (uint64_t)bytes);
}

/* The first memory type among `allowed` with all of `required`, preferring one that also
   has `preferred`; -1 when none. */
static int find_memory_type(const VkPhysicalDeviceMemoryProperties *memory, uint32_t allowed,
                            VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  for (int pass = 0; pass < 2; ++pass) {
    VkMemoryPropertyFlags want = pass == 0 ? required | preferred : required;
    for (uint32_t t = 0; t < memory->memoryTypeCount; ++t)
      if ((allowed >> t & 1) && (memory->memoryTypes[t].propertyFlags & want) == want) return (int)t;
  }
  return -1;
}

static int allocate_block(dnnf_vk_model *m, int block, const device_buffer *buffers, int count,
                          const char *kind, message *out) {
  memory_block *b = &m->blocks[block];
  VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = b->bytes,
                               .memoryTypeIndex = b->type};
  VkResult result = m->vk.api.vkAllocateMemory(m->device, &info, NULL, &b->memory);
  if (result == VK_SUCCESS) return DNNF_VK_OK;
  b->memory = VK_NULL_HANDLE;
  int first = -1, last = -1, largest = -1;
  for (int i = 0; i < count; ++i)
    if (buffers[i].block == block) {
      if (first < 0) first = i;
      last = i;
      if (largest < 0 || buffers[i].bytes > buffers[largest].bytes) largest = i;
    }
  uint64_t largest_bytes = buffers[largest].bytes;
  if (first == last)
    return check(out, result, "vkAllocateMemory of %.1f MiB (memory type %u) for %s %d (%" PRIu64 " bytes)",
                 mib(b->bytes), b->type, kind, first, largest_bytes);
  return check(out, result,
               "vkAllocateMemory of %.1f MiB (memory type %u) for %ss %d..%d (the largest: %s %d, %" PRIu64
               " bytes)",
               mib(b->bytes), b->type, kind, first, last, kind, largest, largest_bytes);
}

/* Places the buffers in as few allocations as the limits allow (each at an offset its
   alignment allows), allocates them and binds the buffers. */
static int bind_buffers(dnnf_vk_model *m, device_buffer *buffers, int count, const char *kind,
                        VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred, message *out) {
  const device_info *device = &m->vk.device;
  VkDeviceSize limit = device->max_allocation_bytes && device->max_allocation_bytes < BLOCK_BYTES
                           ? device->max_allocation_bytes
                           : BLOCK_BYTES;
  int first_block = m->num_blocks, open = -1;
  for (int i = 0; i < count; ++i) {
    VkMemoryRequirements needs;
    m->vk.api.vkGetBufferMemoryRequirements(m->device, buffers[i].handle, &needs);
    int type = required || preferred
                   ? find_memory_type(&device->memory, needs.memoryTypeBits, required, preferred)
                   : device_memory_type(&device->memory, needs.memoryTypeBits);
    if (type < 0)
      return fail(out, DNNF_VK_UNSUPPORTED, "no memory type with properties 0x%x for %s %d",
                  (unsigned)required, kind, i);
    VkDeviceSize offset = open >= 0 ? align_up(m->blocks[open].bytes, needs.alignment) : 0;
    if (open < 0 || m->blocks[open].type != (uint32_t)type ||
        (m->blocks[open].bytes > 0 && offset + needs.size > limit)) {
      if (!RESERVE(m->blocks, m->blocks_capacity, m->num_blocks + 1))
        return out_of_host_memory(out, "memory blocks");
      open = m->num_blocks++;
      m->blocks[open] = (memory_block){.type = (uint32_t)type};
      offset = 0;
    }
    buffers[i].block = open;
    buffers[i].offset = offset;
    m->blocks[open].bytes = offset + needs.size;
  }
  for (int b = first_block; b < m->num_blocks; ++b) TRY(allocate_block(m, b, buffers, count, kind, out));
  for (int i = 0; i < count; ++i)
    TRY(check(out,
              m->vk.api.vkBindBufferMemory(m->device, buffers[i].handle, m->blocks[buffers[i].block].memory,
                                           buffers[i].offset),
              "vkBindBufferMemory for %s %d", kind, i));
  return DNNF_VK_OK;
}

/* Maps each buffer's block (once) and points the buffer at its bytes. */
static int map_buffers(dnnf_vk_model *m, device_buffer *buffers, int count, message *out) {
  for (int i = 0; i < count; ++i) {
    memory_block *block = &m->blocks[buffers[i].block];
    if (!block->host) {
      void *host = NULL;
      TRY(check(out, m->vk.api.vkMapMemory(m->device, block->memory, 0, VK_WHOLE_SIZE, 0, &host),
                "vkMapMemory of %.1f MiB", mib(block->bytes)));
      block->host = host;
    }
    buffers[i].host = block->host + buffers[i].offset;
  }
  return DNNF_VK_OK;
}

static bool blocks_host_coherent(const dnnf_vk_model *m, int first, int end) {
  for (int b = first; b < end; ++b)
    if (!host_coherent(&m->vk.device.memory, m->blocks[b].type)) return false;
  return true;
}

static int create_staging_buffers(dnnf_vk_model *m, message *out) {
  const plan *p = &m->plan;
  m->staging_inputs = calloc(p->num_inputs ? p->num_inputs : 1, sizeof *m->staging_inputs);
  m->staging_outputs = calloc(p->num_outputs ? p->num_outputs : 1, sizeof *m->staging_outputs);
  if (!m->staging_inputs || !m->staging_outputs) return out_of_host_memory(out, "staging buffers");
  VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (int i = 0; i < p->num_inputs; ++i)
    TRY(create_buffer(m, &m->staging_inputs[i], p->buffers[p->inputs[i]].bytes,
                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT, "input staging buffer", i, out));
  for (int j = 0; j < p->num_outputs; ++j)
    TRY(create_buffer(m, &m->staging_outputs[j], p->buffers[p->outputs[j]].bytes,
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT, "output staging buffer", j, out));
  TRY(bind_buffers(m, m->staging_inputs, p->num_inputs, "input staging buffer", host, 0, out));
  /* Cached memory makes the host's reads of the outputs fast. */
  TRY(bind_buffers(m, m->staging_outputs, p->num_outputs, "output staging buffer", host,
                   VK_MEMORY_PROPERTY_HOST_CACHED_BIT, out));
  TRY(map_buffers(m, m->staging_inputs, p->num_inputs, out));
  return map_buffers(m, m->staging_outputs, p->num_outputs, out);
}

static int create_buffers(dnnf_vk_model *m, message *out) {
  const plan *p = &m->plan;
  m->buffers = calloc((size_t)p->num_buffers, sizeof *m->buffers);
  m->input_host = calloc(p->num_inputs ? p->num_inputs : 1, sizeof *m->input_host);
  m->output_host = calloc(p->num_outputs ? p->num_outputs : 1, sizeof *m->output_host);
  if (!m->buffers || !m->input_host || !m->output_host) return out_of_host_memory(out, "buffers");
  VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  for (int b = 0; b < p->num_buffers; ++b)
    TRY(create_buffer(m, &m->buffers[b], p->buffers[b].bytes, usage, "buffer", b, out));
  int first_block = m->num_blocks;
  TRY(bind_buffers(m, m->buffers, p->num_buffers, "buffer", 0, 0, out));
  m->staging = staging_forced() || !blocks_host_coherent(m, first_block, m->num_blocks);
  if (m->staging) {
    TRY(create_staging_buffers(m, out));
  } else {
    TRY(map_buffers(m, m->buffers, p->num_buffers, out));
  }
  for (int i = 0; i < p->num_inputs; ++i)
    m->input_host[i] = (m->staging ? m->staging_inputs[i] : m->buffers[p->inputs[i]]).host;
  for (int j = 0; j < p->num_outputs; ++j)
    m->output_host[j] = (m->staging ? m->staging_outputs[j] : m->buffers[p->outputs[j]]).host;
  return DNNF_VK_OK;
}

static void memory_barrier(const dnnf_vk_model *m, VkCommandBuffer commands,
                           VkPipelineStageFlags source_stages, VkAccessFlags source_access,
                           VkPipelineStageFlags target_stages, VkAccessFlags target_access) {
  VkMemoryBarrier barrier = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = source_access,
                             .dstAccessMask = target_access};
  m->vk.api.vkCmdPipelineBarrier(commands, source_stages, target_stages, 0, 1, &barrier, 0, NULL, 0, NULL);
}

static void copy_buffer(const dnnf_vk_model *m, VkCommandBuffer commands, VkBuffer from,
                        VkDeviceSize from_offset, VkBuffer to, VkDeviceSize to_offset, VkDeviceSize bytes) {
  VkBufferCopy region = {.srcOffset = from_offset, .dstOffset = to_offset, .size = bytes};
  m->vk.api.vkCmdCopyBuffer(commands, from, to, 1, &region);
}

/* Submits `commands` and waits for them. */
static int submit_and_wait(dnnf_vk_model *m, VkCommandBuffer commands, const char *what, message *out) {
  vk_api *api = &m->vk.api;
  VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &commands};
  TRY(check(out, api->vkQueueSubmit(m->queue, 1, &submit, m->fence), "vkQueueSubmit (%s)", what));
  VkResult result = api->vkWaitForFences(m->device, 1, &m->fence, VK_TRUE, m->timeout_ns);
  if (result == VK_TIMEOUT)
    return fail(out, DNNF_VK_ERROR,
                "vkWaitForFences (%s): the device did not finish within %.0f s (DNNF_VULKAN_TIMEOUT_S)", what,
                (double)m->timeout_ns * 1e-9);
  TRY(check(out, result, "vkWaitForFences (%s)", what));
  return check(out, api->vkResetFences(m->device, 1, &m->fence), "vkResetFences (%s)", what);
}

/* The weights through a staging buffer: chunks of at most UPLOAD_CHUNK_BYTES, each
   copied and waited for before the staging buffer is refilled. */
typedef struct {
  device_buffer staging;
  VkDeviceMemory memory;
  unsigned char *host;
  VkDeviceSize bytes, filled;
  VkCommandBuffer commands;
} weights_upload;

static int begin_commands(dnnf_vk_model *m, VkCommandBuffer commands, const char *what, message *out) {
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  return check(out, m->vk.api.vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer (%s)", what);
}

static int flush_upload(dnnf_vk_model *m, weights_upload *upload, message *out) {
  if (upload->filled == 0) return DNNF_VK_OK;
  /* Later submissions' dispatches read what the copies wrote. */
  memory_barrier(m, upload->commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
  TRY(check(out, m->vk.api.vkEndCommandBuffer(upload->commands), "vkEndCommandBuffer (weights upload)"));
  TRY(submit_and_wait(m, upload->commands, "weights upload", out));
  upload->filled = 0;
  return begin_commands(m, upload->commands, "weights upload", out);
}

static int prepare_upload(dnnf_vk_model *m, weights_upload *upload, VkDeviceSize total, message *out) {
  vk_api *api = &m->vk.api;
  upload->bytes = total < UPLOAD_CHUNK_BYTES ? total : UPLOAD_CHUNK_BYTES;
  TRY(create_buffer(m, &upload->staging, upload->bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                    "weights staging buffer", 0, out));
  VkMemoryRequirements needs;
  api->vkGetBufferMemoryRequirements(m->device, upload->staging.handle, &needs);
  int type = find_memory_type(&m->vk.device.memory, needs.memoryTypeBits,
                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
  if (type < 0)
    return fail(out, DNNF_VK_UNSUPPORTED, "no host-visible coherent memory for the weights staging buffer");
  VkMemoryAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                   .allocationSize = needs.size,
                                   .memoryTypeIndex = (uint32_t)type};
  VkResult result = api->vkAllocateMemory(m->device, &allocate, NULL, &upload->memory);
  if (result != VK_SUCCESS) upload->memory = VK_NULL_HANDLE;
  TRY(check(out, result, "vkAllocateMemory of %.1f MiB for the weights staging buffer", mib(needs.size)));
  TRY(check(out, api->vkBindBufferMemory(m->device, upload->staging.handle, upload->memory, 0),
            "vkBindBufferMemory (weights staging)"));
  void *host = NULL;
  TRY(check(out, api->vkMapMemory(m->device, upload->memory, 0, VK_WHOLE_SIZE, 0, &host),
            "vkMapMemory (weights staging)"));
  upload->host = host;
  VkCommandBufferAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = m->command_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
  result = api->vkAllocateCommandBuffers(m->device, &info, &upload->commands);
  if (result != VK_SUCCESS) upload->commands = VK_NULL_HANDLE;
  TRY(check(out, result, "vkAllocateCommandBuffers (weights upload)"));
  return begin_commands(m, upload->commands, "weights upload", out);
}

static void finish_upload(dnnf_vk_model *m, weights_upload *upload) {
  vk_api *api = &m->vk.api;
  if (upload->commands != VK_NULL_HANDLE)
    api->vkFreeCommandBuffers(m->device, m->command_pool, 1, &upload->commands);
  if (upload->staging.handle != VK_NULL_HANDLE) api->vkDestroyBuffer(m->device, upload->staging.handle, NULL);
  if (upload->memory != VK_NULL_HANDLE) api->vkFreeMemory(m->device, upload->memory, NULL);
}

/* What a buffer holds at load: a weight's bytes in the weights, a constant's its own;
   NULL for the others. */
static const unsigned char *initial_bytes(const plan_buffer *buffer, const unsigned char *weights) {
  if (buffer->role == ROLE_WEIGHT) return weights + buffer->argument;
  return buffer->role == ROLE_CONSTANT ? buffer->data : NULL;
}

static int upload_through_staging(dnnf_vk_model *m, weights_upload *upload, const unsigned char *weights,
                                  VkDeviceSize total, message *out) {
  TRY(prepare_upload(m, upload, total, out));
  for (int b = 0; b < m->plan.num_buffers; ++b) {
    const plan_buffer *buffer = &m->plan.buffers[b];
    const unsigned char *source = initial_bytes(buffer, weights);
    if (!source) continue;
    for (VkDeviceSize done = 0; done < buffer->bytes;) {
      VkDeviceSize room = upload->bytes - upload->filled, left = buffer->bytes - done,
                   bytes = left < room ? left : room;
      memcpy(upload->host + upload->filled, source + done, (size_t)bytes);
      copy_buffer(m, upload->commands, upload->staging.handle, upload->filled, m->buffers[b].handle, done,
                  bytes);
      upload->filled += bytes;
      done += bytes;
      if (upload->filled == upload->bytes) TRY(flush_upload(m, upload, out));
    }
  }
  TRY(flush_upload(m, upload, out));
  return check(out, m->vk.api.vkEndCommandBuffer(upload->commands), "vkEndCommandBuffer (weights upload)");
}

static int upload_weights(dnnf_vk_model *m, const unsigned char *weights, message *out) {
  VkDeviceSize total = 0;
  for (int b = 0; b < m->plan.num_buffers; ++b) {
    const plan_buffer *buffer = &m->plan.buffers[b];
    const unsigned char *source = initial_bytes(buffer, weights);
    if (!source) continue;
    total += buffer->bytes;
    if (!m->staging) memcpy(m->buffers[b].host, source, (size_t)buffer->bytes);
  }
  if (!m->staging || total == 0) return DNNF_VK_OK;
  weights_upload upload = {0};
  int status = upload_through_staging(m, &upload, weights, total, out);
  if (status != DNNF_VK_OK) m->vk.api.vkDeviceWaitIdle(m->device); /* a failed wait leaves copies pending */
  finish_upload(m, &upload);
  return status;
}

static int create_pipeline(dnnf_vk_model *m, int k, message *out) {
  vk_api *api = &m->vk.api;
  const plan_kernel *kernel = &m->plan.kernels[k];
  VkDescriptorSetLayoutBinding *bindings = calloc((size_t)kernel->bindings, sizeof *bindings);
  if (!bindings) return out_of_host_memory(out, "descriptor set layout");
  for (int b = 0; b < kernel->bindings; ++b)
    bindings[b] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)b,
                                                 .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                 .descriptorCount = 1,
                                                 .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo set_info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                              .bindingCount = (uint32_t)kernel->bindings,
                                              .pBindings = bindings};
  VkResult result = api->vkCreateDescriptorSetLayout(m->device, &set_info, NULL, &m->set_layouts[k]);
  free(bindings);
  if (result != VK_SUCCESS) m->set_layouts[k] = VK_NULL_HANDLE;
  TRY(check(out, result, "vkCreateDescriptorSetLayout for kernel %d '%s'", k, kernel->name));
  VkPipelineLayoutCreateInfo layout_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                            .setLayoutCount = 1,
                                            .pSetLayouts = &m->set_layouts[k]};
  result = api->vkCreatePipelineLayout(m->device, &layout_info, NULL, &m->pipeline_layouts[k]);
  if (result != VK_SUCCESS) m->pipeline_layouts[k] = VK_NULL_HANDLE;
  TRY(check(out, result, "vkCreatePipelineLayout for kernel %d '%s'", k, kernel->name));
  VkComputePipelineCreateInfo info = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                                .module = m->modules[kernel->spirv],
                                                .pName = kernel->entry},
                                      .layout = m->pipeline_layouts[k]};
  result = api->vkCreateComputePipelines(m->device, m->pipeline_cache, 1, &info, NULL, &m->pipelines[k]);
  if (result != VK_SUCCESS) m->pipelines[k] = VK_NULL_HANDLE;
  return check(out, result,
               "vkCreateComputePipelines for kernel %d '%s' (entry point '%s' of SPIR-V module %d)", k,
               kernel->name, kernel->entry, kernel->spirv);
}

static int create_pipelines(dnnf_vk_model *m, const dnnf_vk_spirv *blobs, int num_blobs, message *out) {
  vk_api *api = &m->vk.api;
  int kernels = m->plan.num_kernels;
  m->modules = calloc((size_t)num_blobs, sizeof *m->modules);
  m->set_layouts = calloc((size_t)kernels, sizeof *m->set_layouts);
  m->pipeline_layouts = calloc((size_t)kernels, sizeof *m->pipeline_layouts);
  m->pipelines = calloc((size_t)kernels, sizeof *m->pipelines);
  if (!m->modules || !m->set_layouts || !m->pipeline_layouts || !m->pipelines)
    return out_of_host_memory(out, "pipelines");
  for (int s = 0; s < num_blobs; ++s) {
    VkShaderModuleCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                     .codeSize = blobs[s].count * 4,
                                     .pCode = blobs[s].words};
    VkResult result = api->vkCreateShaderModule(m->device, &info, NULL, &m->modules[s]);
    if (result != VK_SUCCESS) m->modules[s] = VK_NULL_HANDLE;
    m->num_modules = s + 1;
    TRY(check(out, result, "vkCreateShaderModule for SPIR-V module %d", s));
  }
  VkPipelineCacheCreateInfo cache = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkResult result = api->vkCreatePipelineCache(m->device, &cache, NULL, &m->pipeline_cache);
  if (result != VK_SUCCESS) m->pipeline_cache = VK_NULL_HANDLE;
  TRY(check(out, result, "vkCreatePipelineCache"));
  for (int k = 0; k < kernels; ++k) TRY(create_pipeline(m, k, out));
  return DNNF_VK_OK;
}

static int create_descriptor_sets(dnnf_vk_model *m, message *out) {
  vk_api *api = &m->vk.api;
  const plan *p = &m->plan;
  VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               .descriptorCount = (uint32_t)p->num_bindings};
  VkDescriptorPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = (uint32_t)p->num_dispatches,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
  VkResult result = api->vkCreateDescriptorPool(m->device, &pool, NULL, &m->descriptor_pool);
  if (result != VK_SUCCESS) m->descriptor_pool = VK_NULL_HANDLE;
  TRY(check(out, result, "vkCreateDescriptorPool for %d sets of %d storage buffers", p->num_dispatches,
            p->num_bindings));

  m->descriptor_sets = calloc((size_t)p->num_dispatches, sizeof *m->descriptor_sets);
  VkDescriptorSetLayout *layouts = calloc((size_t)p->num_dispatches, sizeof *layouts);
  VkDescriptorBufferInfo *infos = calloc((size_t)p->num_bindings, sizeof *infos);
  VkWriteDescriptorSet *writes = calloc((size_t)p->num_bindings, sizeof *writes);
  int status = m->descriptor_sets && layouts && infos && writes ? DNNF_VK_OK
                                                                : out_of_host_memory(out, "descriptor sets");
  if (status == DNNF_VK_OK) {
    for (int d = 0; d < p->num_dispatches; ++d) layouts[d] = m->set_layouts[p->dispatches[d].kernel];
    VkDescriptorSetAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                        .descriptorPool = m->descriptor_pool,
                                        .descriptorSetCount = (uint32_t)p->num_dispatches,
                                        .pSetLayouts = layouts};
    status = check(out, api->vkAllocateDescriptorSets(m->device, &info, m->descriptor_sets),
                   "vkAllocateDescriptorSets");
  }
  if (status == DNNF_VK_OK) {
    for (int d = 0; d < p->num_dispatches; ++d) {
      const plan_dispatch *dispatch = &p->dispatches[d];
      for (int b = 0; b < p->kernels[dispatch->kernel].bindings; ++b) {
        int i = dispatch->first_binding + b;
        const plan_binding *binding = &p->bindings[i];
        infos[i] =
            (VkDescriptorBufferInfo){m->buffers[binding->buffer].handle, binding->offset, binding->range};
        writes[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                           .dstSet = m->descriptor_sets[d],
                                           .dstBinding = (uint32_t)b,
                                           .descriptorCount = 1,
                                           .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                           .pBufferInfo = &infos[i]};
      }
    }
    api->vkUpdateDescriptorSets(m->device, (uint32_t)p->num_bindings, writes, 0, NULL);
  }
  free(layouts);
  free(infos);
  free(writes);
  return status;
}

static int create_sync_objects(dnnf_vk_model *m, message *out) {
  vk_api *api = &m->vk.api;
  VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = m->vk.device.queue_family};
  VkResult result = api->vkCreateCommandPool(m->device, &pool, NULL, &m->command_pool);
  if (result != VK_SUCCESS) m->command_pool = VK_NULL_HANDLE;
  TRY(check(out, result, "vkCreateCommandPool"));
  VkCommandBufferAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = m->command_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
  result = api->vkAllocateCommandBuffers(m->device, &info, &m->commands);
  if (result != VK_SUCCESS) m->commands = VK_NULL_HANDLE;
  TRY(check(out, result, "vkAllocateCommandBuffers"));
  VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  result = api->vkCreateFence(m->device, &fence, NULL, &m->fence);
  if (result != VK_SUCCESS) m->fence = VK_NULL_HANDLE;
  TRY(check(out, result, "vkCreateFence"));
  if (m->vk.device.timestamp_bits == 0) return DNNF_VK_OK;
  m->dispatch_ms = calloc((size_t)m->plan.num_dispatches, sizeof *m->dispatch_ms);
  if (!m->dispatch_ms) return out_of_host_memory(out, "dispatch times");
  VkQueryPoolCreateInfo queries = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                   .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                   .queryCount = 2 * (uint32_t)m->plan.num_dispatches};
  result = api->vkCreateQueryPool(m->device, &queries, NULL, &m->timestamps);
  if (result != VK_SUCCESS) m->timestamps = VK_NULL_HANDLE;
  return check(out, result, "vkCreateQueryPool for %d timestamps", 2 * m->plan.num_dispatches);
}

static void record_dispatches(dnnf_vk_model *m) {
  const vk_api *api = &m->vk.api;
  const plan *p = &m->plan;
  int bound = -1;
  for (int d = 0; d < p->num_dispatches; ++d) {
    const plan_dispatch *dispatch = &p->dispatches[d];
    if (dispatch->barrier)
      memory_barrier(m, m->commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                     VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if (dispatch->kernel != bound) {
      api->vkCmdBindPipeline(m->commands, VK_PIPELINE_BIND_POINT_COMPUTE, m->pipelines[dispatch->kernel]);
      bound = dispatch->kernel;
    }
    api->vkCmdBindDescriptorSets(m->commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                                 m->pipeline_layouts[dispatch->kernel], 0, 1, &m->descriptor_sets[d], 0,
                                 NULL);
    /* Written once the work before (start) and this dispatch (end) leave the compute stage. */
    if (m->timestamps)
      api->vkCmdWriteTimestamp(m->commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, m->timestamps,
                               2 * (uint32_t)d);
    api->vkCmdDispatch(m->commands, dispatch->groups[0], dispatch->groups[1], dispatch->groups[2]);
    if (m->timestamps)
      api->vkCmdWriteTimestamp(m->commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, m->timestamps,
                               2 * (uint32_t)d + 1);
  }
}

/* The command buffer of every run: (copies in), the dispatches, (copies out). */
static int record_commands(dnnf_vk_model *m, message *out) {
  const vk_api *api = &m->vk.api;
  const plan *p = &m->plan;
  TRY(begin_commands(m, m->commands, "model", out));
  /* The previous run's (or the weights upload's) accesses before this run's. */
  memory_barrier(m, m->commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                 VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT);
  if (m->timestamps) api->vkCmdResetQueryPool(m->commands, m->timestamps, 0, 2 * (uint32_t)p->num_dispatches);
  if (m->staging) {
    for (int i = 0; i < p->num_inputs; ++i)
      copy_buffer(m, m->commands, m->staging_inputs[i].handle, 0, m->buffers[p->inputs[i]].handle, 0,
                  m->staging_inputs[i].bytes);
    memory_barrier(m, m->commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  }
  record_dispatches(m);
  if (m->staging) {
    memory_barrier(m, m->commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    for (int j = 0; j < p->num_outputs; ++j)
      copy_buffer(m, m->commands, m->buffers[p->outputs[j]].handle, 0, m->staging_outputs[j].handle, 0,
                  m->staging_outputs[j].bytes);
    memory_barrier(m, m->commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  } else {
    memory_barrier(m, m->commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  }
  return check(out, api->vkEndCommandBuffer(m->commands), "vkEndCommandBuffer (model)");
}

static uint64_t timeout_ns(void) {
  const char *text = getenv("DNNF_VULKAN_TIMEOUT_S");
  uint64_t seconds;
  if (!text || !parse_number(text, 1000000000, &seconds) || seconds == 0) seconds = DEFAULT_TIMEOUT_S;
  return seconds * 1000000000ull;
}

static int check_arguments(const char *plan_text, const dnnf_vk_spirv *kernels, int num_kernels,
                           const void *weights, size_t weights_bytes, dnnf_vk_model **model, message *out) {
  if (!model) return fail(out, DNNF_VK_INVALID_ARGUMENT, "dnnf_vk_load: model is NULL");
  *model = NULL;
  if (!plan_text) return fail(out, DNNF_VK_INVALID_ARGUMENT, "dnnf_vk_load: plan is NULL");
  if (num_kernels < 0 || (num_kernels > 0 && !kernels))
    return fail(out, DNNF_VK_INVALID_ARGUMENT, "dnnf_vk_load: %d SPIR-V modules at %p", num_kernels,
                (const void *)kernels);
  if (weights_bytes > 0 && !weights)
    return fail(out, DNNF_VK_INVALID_ARGUMENT, "dnnf_vk_load: weights is NULL but weights_bytes is %zu",
                weights_bytes);
  return DNNF_VK_OK;
}

static int build_model(dnnf_vk_model *m, const char *plan_text, const dnnf_vk_spirv *kernels, int num_kernels,
                       const void *weights, size_t weights_bytes, message *out) {
  if (pthread_mutex_init(&m->lock, NULL) != 0) return fail(out, DNNF_VK_ERROR, "pthread_mutex_init failed");
  m->lock_ready = true;
  m->timeout_ns = timeout_ns();
  TRY(parse_plan(plan_text, num_kernels, weights_bytes, &m->plan, out));
  TRY(check_spirv(&m->plan, kernels, num_kernels, out));
  TRY(open_context(&m->vk, out));
  TRY(check_device_support(&m->plan, &m->vk.device, out));
  TRY(create_device(m, out));
  TRY(create_sync_objects(m, out));
  TRY(create_buffers(m, out));
  TRY(upload_weights(m, weights, out));
  TRY(create_pipelines(m, kernels, num_kernels, out));
  TRY(create_descriptor_sets(m, out));
  return record_commands(m, out);
}

int dnnf_vk_load(const char *plan_text, const dnnf_vk_spirv *kernels, int num_kernels, const void *weights,
                 size_t weights_bytes, dnnf_vk_model **model, char *error, size_t error_size) {
  message out = {error, error_size};
  TRY(check_arguments(plan_text, kernels, num_kernels, weights, weights_bytes, model, &out));
  dnnf_vk_model *m = calloc(1, sizeof *m);
  if (!m) return out_of_host_memory(&out, "model");
  int status = build_model(m, plan_text, kernels, num_kernels, weights, weights_bytes, &out);
  if (status != DNNF_VK_OK) {
    dnnf_vk_free(m);
    return status;
  }
  *model = m;
  return DNNF_VK_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Runs                                                                                 */

static int check_run_arguments(const dnnf_vk_model *m, const void *const inputs[], void *const outputs[],
                               message *out) {
  if (!m) return fail(out, DNNF_VK_INVALID_ARGUMENT, "dnnf_vk_run: model is NULL");
  for (int i = 0; i < m->plan.num_inputs; ++i)
    if (!inputs || !inputs[i]) return fail(out, DNNF_VK_INVALID_ARGUMENT, "dnnf_vk_run: input %d is NULL", i);
  for (int j = 0; j < m->plan.num_outputs; ++j)
    if (!outputs || !outputs[j])
      return fail(out, DNNF_VK_INVALID_ARGUMENT, "dnnf_vk_run: output %d is NULL", j);
  return DNNF_VK_OK;
}

static void read_dispatch_times(dnnf_vk_model *m) {
  int count = 2 * m->plan.num_dispatches;
  uint64_t *ticks = calloc((size_t)count, sizeof *ticks);
  m->have_times = false;
  if (!ticks) return;
  VkResult result = m->vk.api.vkGetQueryPoolResults(m->device, m->timestamps, 0, (uint32_t)count,
                                                    (size_t)count * sizeof *ticks, ticks, sizeof *ticks,
                                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (result == VK_SUCCESS) {
    uint32_t bits = m->vk.device.timestamp_bits;
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    double period_ns = m->vk.device.properties.limits.timestampPeriod;
    for (int d = 0; d < m->plan.num_dispatches; ++d)
      m->dispatch_ms[d] = (double)((ticks[2 * d + 1] - ticks[2 * d]) & mask) * period_ns * 1e-6;
    m->have_times = true;
  }
  free(ticks);
}

static int run_locked(dnnf_vk_model *m, const void *const inputs[], void *const outputs[], message *out) {
  const plan *p = &m->plan;
  if (m->broken)
    return fail(out, m->broken, "the model cannot run after an earlier device error: %s", m->broken_reason);
  for (int i = 0; i < p->num_inputs; ++i)
    memcpy(m->input_host[i], inputs[i], (size_t)p->buffers[p->inputs[i]].argument_bytes);
  message reason = {m->broken_reason, sizeof m->broken_reason};
  int status = submit_and_wait(m, m->commands, "model run", &reason);
  if (status != DNNF_VK_OK) {
    /* The command buffer may still be pending or the device lost: never submit it again. */
    m->broken = status;
    return fail(out, status, "%s", m->broken_reason);
  }
  for (int j = 0; j < p->num_outputs; ++j)
    memcpy(outputs[j], m->output_host[j], (size_t)p->buffers[p->outputs[j]].argument_bytes);
  if (m->timestamps) read_dispatch_times(m);
  return DNNF_VK_OK;
}

int dnnf_vk_run(dnnf_vk_model *model, const void *const inputs[], void *const outputs[], char *error,
                size_t error_size) {
  message out = {error, error_size};
  TRY(check_run_arguments(model, inputs, outputs, &out));
  pthread_mutex_lock(&model->lock);
  int status = run_locked(model, inputs, outputs, &out);
  pthread_mutex_unlock(&model->lock);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Queries, the probe, freeing                                                          */

int dnnf_vk_dispatch_count(const dnnf_vk_model *model) { return model ? model->plan.num_dispatches : 0; }

int dnnf_vk_dispatch_times(const dnnf_vk_model *model, double *ms, int capacity) {
  if (!model || !model->timestamps) return -1;
  dnnf_vk_model *m = (dnnf_vk_model *)model; /* the lock guards the times against a run */
  pthread_mutex_lock(&m->lock);
  int written = 0;
  if (m->have_times && ms)
    for (; written < capacity && written < m->plan.num_dispatches; ++written)
      ms[written] = m->dispatch_ms[written];
  pthread_mutex_unlock(&m->lock);
  return written;
}

const char *dnnf_vk_dispatch_name(const dnnf_vk_model *model, int dispatch) {
  if (!model || dispatch < 0 || dispatch >= model->plan.num_dispatches) return NULL;
  return model->plan.kernels[model->plan.dispatches[dispatch].kernel].name;
}

const char *dnnf_vk_device_name(const dnnf_vk_model *model) {
  return model ? model->vk.device.properties.deviceName : NULL;
}

int dnnf_vk_uses_staging(const dnnf_vk_model *model) { return model && model->staging; }

int dnnf_vk_num_inputs(const dnnf_vk_model *model) { return model ? model->plan.num_inputs : 0; }

int dnnf_vk_num_outputs(const dnnf_vk_model *model) { return model ? model->plan.num_outputs : 0; }

size_t dnnf_vk_input_bytes(const dnnf_vk_model *model, int input) {
  if (!model || input < 0 || input >= model->plan.num_inputs) return 0;
  return (size_t)model->plan.buffers[model->plan.inputs[input]].argument_bytes;
}

size_t dnnf_vk_output_bytes(const dnnf_vk_model *model, int output) {
  if (!model || output < 0 || output >= model->plan.num_outputs) return 0;
  return (size_t)model->plan.buffers[model->plan.outputs[output]].argument_bytes;
}

int dnnf_vk_probe(char *description, size_t description_size, char *error, size_t error_size) {
  message out = {error, error_size};
  vk_context vk;
  memset(&vk, 0, sizeof vk);
  int status = open_context(&vk, &out);
  if (status == DNNF_VK_OK && description && description_size)
    describe_device(&vk.device, description, description_size);
  close_context(&vk);
  return status;
}

static void destroy_buffers(dnnf_vk_model *m, device_buffer *buffers, int count) {
  for (int i = 0; buffers && i < count; ++i)
    if (buffers[i].handle != VK_NULL_HANDLE) m->vk.api.vkDestroyBuffer(m->device, buffers[i].handle, NULL);
  free(buffers);
}

static void destroy_device_objects(dnnf_vk_model *m) {
  vk_api *api = &m->vk.api;
  const plan *p = &m->plan;
  api->vkDeviceWaitIdle(m->device);
  if (m->timestamps) api->vkDestroyQueryPool(m->device, m->timestamps, NULL);
  if (m->fence) api->vkDestroyFence(m->device, m->fence, NULL);
  if (m->command_pool)
    api->vkDestroyCommandPool(m->device, m->command_pool, NULL); /* frees the command buffers */
  if (m->descriptor_pool)
    api->vkDestroyDescriptorPool(m->device, m->descriptor_pool, NULL); /* frees the sets */
  for (int k = 0; k < p->num_kernels; ++k) {
    if (m->pipelines && m->pipelines[k]) api->vkDestroyPipeline(m->device, m->pipelines[k], NULL);
    if (m->pipeline_layouts && m->pipeline_layouts[k])
      api->vkDestroyPipelineLayout(m->device, m->pipeline_layouts[k], NULL);
    if (m->set_layouts && m->set_layouts[k])
      api->vkDestroyDescriptorSetLayout(m->device, m->set_layouts[k], NULL);
  }
  if (m->pipeline_cache) api->vkDestroyPipelineCache(m->device, m->pipeline_cache, NULL);
  for (int s = 0; s < m->num_modules; ++s)
    if (m->modules[s]) api->vkDestroyShaderModule(m->device, m->modules[s], NULL);
  destroy_buffers(m, m->buffers, p->num_buffers);
  destroy_buffers(m, m->staging_inputs, p->num_inputs);
  destroy_buffers(m, m->staging_outputs, p->num_outputs);
  m->buffers = m->staging_inputs = m->staging_outputs = NULL;
  for (int b = 0; b < m->num_blocks; ++b)
    if (m->blocks[b].memory) api->vkFreeMemory(m->device, m->blocks[b].memory, NULL); /* unmaps too */
  api->vkDestroyDevice(m->device, NULL);
  m->device = VK_NULL_HANDLE;
}

void dnnf_vk_free(dnnf_vk_model *model) {
  if (!model) return;
  /* When load_device_functions failed, vkDestroyDevice may be the one function found. */
  if (model->device != VK_NULL_HANDLE && model->device_functions) {
    destroy_device_objects(model);
  } else if (model->device != VK_NULL_HANDLE) {
    PFN_vkDestroyDevice destroy =
        (PFN_vkDestroyDevice)model->vk.api.vkGetDeviceProcAddr(model->device, "vkDestroyDevice");
    if (destroy) destroy(model->device, NULL);
  }
  close_context(&model->vk);
  if (model->lock_ready) pthread_mutex_destroy(&model->lock);
  free(model->buffers);
  free(model->staging_inputs);
  free(model->staging_outputs);
  free(model->input_host);
  free(model->output_host);
  free(model->blocks);
  free(model->modules);
  free(model->set_layouts);
  free(model->pipeline_layouts);
  free(model->pipelines);
  free(model->descriptor_sets);
  free(model->dispatch_ms);
  free_plan(&model->plan);
  free(model);
}
