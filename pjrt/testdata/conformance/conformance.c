/*
 * conformance.c - a PJRT C API "conformance plugin" for halo's tests.
 *
 * This is a TEST DOUBLE for the ABI path between halo and a PJRT plugin, not a
 * backend. It implements enough of the PJRT C API 0.114 (as described by the
 * tables in third_party/pjrt, the *.tsv files) for the Go binding to be exercised end to
 * end through purego: buffers live in host memory, events complete on a small
 * pool of worker threads, and "executables" do the trivial work described by a
 * directive line in the program text:
 *
 *     // conformance: OP INPUT_TYPES -> OUTPUT_TYPES [replicas=R] [partitions=P] [portable=1]
 *
 * See README.md next to this file for the directive syntax, the exported
 * conformance_* inspection functions, counters and live-object kinds.
 *
 * Built by internal/testplugin with: cc -shared -fPIC -O1 -pthread.
 * The header pjrt_abi.h is generated from the tables (every pointer field is
 * declared void *, every enum-typed field int32_t).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pjrt_abi.h"

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------------- */
/* The PJRT_Api function table: X(index, name, slot_present_from_minor,      */
/* reported_in_struct_size_from_minor), from pjrt_api_table.tsv (0 = "<=29"). */
/* ------------------------------------------------------------------------- */
#define CONF_SLOTS(X) \
  X(0, PJRT_Error_Destroy, 0, 0) \
  X(1, PJRT_Error_Message, 0, 0) \
  X(2, PJRT_Error_GetCode, 0, 0) \
  X(3, PJRT_Plugin_Initialize, 0, 0) \
  X(4, PJRT_Plugin_Attributes, 0, 0) \
  X(5, PJRT_Event_Destroy, 0, 0) \
  X(6, PJRT_Event_IsReady, 0, 0) \
  X(7, PJRT_Event_Error, 0, 0) \
  X(8, PJRT_Event_Await, 0, 0) \
  X(9, PJRT_Event_OnReady, 0, 0) \
  X(10, PJRT_Client_Create, 0, 0) \
  X(11, PJRT_Client_Destroy, 0, 0) \
  X(12, PJRT_Client_PlatformName, 0, 0) \
  X(13, PJRT_Client_ProcessIndex, 0, 0) \
  X(14, PJRT_Client_PlatformVersion, 0, 0) \
  X(15, PJRT_Client_Devices, 0, 0) \
  X(16, PJRT_Client_AddressableDevices, 0, 0) \
  X(17, PJRT_Client_LookupDevice, 0, 0) \
  X(18, PJRT_Client_LookupAddressableDevice, 0, 0) \
  X(19, PJRT_Client_AddressableMemories, 0, 0) \
  X(20, PJRT_Client_Compile, 0, 0) \
  X(21, PJRT_Client_DefaultDeviceAssignment, 0, 0) \
  X(22, PJRT_Client_BufferFromHostBuffer, 0, 0) \
  X(23, PJRT_DeviceDescription_Id, 0, 0) \
  X(24, PJRT_DeviceDescription_ProcessIndex, 0, 0) \
  X(25, PJRT_DeviceDescription_Attributes, 0, 0) \
  X(26, PJRT_DeviceDescription_Kind, 0, 0) \
  X(27, PJRT_DeviceDescription_DebugString, 0, 0) \
  X(28, PJRT_DeviceDescription_ToString, 0, 0) \
  X(29, PJRT_Device_GetDescription, 0, 0) \
  X(30, PJRT_Device_IsAddressable, 0, 0) \
  X(31, PJRT_Device_LocalHardwareId, 0, 0) \
  X(32, PJRT_Device_AddressableMemories, 0, 0) \
  X(33, PJRT_Device_DefaultMemory, 0, 0) \
  X(34, PJRT_Device_MemoryStats, 0, 0) \
  X(35, PJRT_Memory_Id, 0, 0) \
  X(36, PJRT_Memory_Kind, 0, 0) \
  X(37, PJRT_Memory_DebugString, 0, 0) \
  X(38, PJRT_Memory_ToString, 0, 0) \
  X(39, PJRT_Memory_AddressableByDevices, 0, 0) \
  X(40, PJRT_Executable_Destroy, 0, 0) \
  X(41, PJRT_Executable_Name, 0, 0) \
  X(42, PJRT_Executable_NumReplicas, 0, 0) \
  X(43, PJRT_Executable_NumPartitions, 0, 0) \
  X(44, PJRT_Executable_NumOutputs, 0, 0) \
  X(45, PJRT_Executable_SizeOfGeneratedCodeInBytes, 0, 0) \
  X(46, PJRT_Executable_GetCostAnalysis, 0, 0) \
  X(47, PJRT_Executable_OutputMemoryKinds, 0, 0) \
  X(48, PJRT_Executable_OptimizedProgram, 0, 0) \
  X(49, PJRT_Executable_Serialize, 0, 0) \
  X(50, PJRT_LoadedExecutable_Destroy, 0, 0) \
  X(51, PJRT_LoadedExecutable_GetExecutable, 0, 0) \
  X(52, PJRT_LoadedExecutable_AddressableDevices, 0, 0) \
  X(53, PJRT_LoadedExecutable_Delete, 0, 0) \
  X(54, PJRT_LoadedExecutable_IsDeleted, 0, 0) \
  X(55, PJRT_LoadedExecutable_Execute, 0, 0) \
  X(56, PJRT_Executable_DeserializeAndLoad, 0, 0) \
  X(57, PJRT_LoadedExecutable_Fingerprint, 0, 0) \
  X(58, PJRT_Buffer_Destroy, 0, 0) \
  X(59, PJRT_Buffer_ElementType, 0, 0) \
  X(60, PJRT_Buffer_Dimensions, 0, 0) \
  X(61, PJRT_Buffer_UnpaddedDimensions, 0, 0) \
  X(62, PJRT_Buffer_DynamicDimensionIndices, 0, 0) \
  X(63, PJRT_Buffer_GetMemoryLayout, 0, 0) \
  X(64, PJRT_Buffer_OnDeviceSizeInBytes, 0, 0) \
  X(65, PJRT_Buffer_Device, 0, 0) \
  X(66, PJRT_Buffer_Memory, 0, 0) \
  X(67, PJRT_Buffer_Delete, 0, 0) \
  X(68, PJRT_Buffer_IsDeleted, 0, 0) \
  X(69, PJRT_Buffer_CopyToDevice, 0, 0) \
  X(70, PJRT_Buffer_ToHostBuffer, 0, 0) \
  X(71, PJRT_Buffer_IsOnCpu, 0, 0) \
  X(72, PJRT_Buffer_ReadyEvent, 0, 0) \
  X(73, PJRT_Buffer_UnsafePointer, 0, 0) \
  X(74, PJRT_Buffer_IncreaseExternalReferenceCount, 0, 0) \
  X(75, PJRT_Buffer_DecreaseExternalReferenceCount, 0, 0) \
  X(76, PJRT_Buffer_OpaqueDeviceMemoryDataPointer, 0, 0) \
  X(77, PJRT_CopyToDeviceStream_Destroy, 0, 0) \
  X(78, PJRT_CopyToDeviceStream_AddChunk, 0, 0) \
  X(79, PJRT_CopyToDeviceStream_TotalBytes, 0, 0) \
  X(80, PJRT_CopyToDeviceStream_GranuleSize, 0, 0) \
  X(81, PJRT_CopyToDeviceStream_CurrentBytes, 0, 0) \
  X(82, PJRT_TopologyDescription_Create, 0, 0) \
  X(83, PJRT_TopologyDescription_Destroy, 0, 0) \
  X(84, PJRT_TopologyDescription_PlatformName, 0, 0) \
  X(85, PJRT_TopologyDescription_PlatformVersion, 0, 0) \
  X(86, PJRT_TopologyDescription_GetDeviceDescriptions, 0, 0) \
  X(87, PJRT_TopologyDescription_Serialize, 0, 0) \
  X(88, PJRT_TopologyDescription_Attributes, 0, 0) \
  X(89, PJRT_Compile, 0, 0) \
  X(90, PJRT_Executable_OutputElementTypes, 0, 0) \
  X(91, PJRT_Executable_OutputDimensions, 0, 0) \
  X(92, PJRT_Buffer_CopyToMemory, 32, 32) \
  X(93, PJRT_Client_CreateViewOfDeviceBuffer, 33, 33) \
  X(94, PJRT_Executable_Fingerprint, 35, 36) \
  X(95, PJRT_Client_TopologyDescription, 36, 36) \
  X(96, PJRT_Executable_GetCompiledMemoryStats, 40, 56) \
  X(97, PJRT_Memory_Kind_Id, 48, 57) \
  X(98, PJRT_ExecuteContext_Create, 52, 57) \
  X(99, PJRT_ExecuteContext_Destroy, 52, 57) \
  X(100, PJRT_Buffer_CopyRawToHost, 56, 57) \
  X(101, PJRT_AsyncHostToDeviceTransferManager_Destroy, 60, 60) \
  X(102, PJRT_AsyncHostToDeviceTransferManager_TransferData, 60, 60) \
  X(103, PJRT_Client_CreateBuffersForAsyncHostToDevice, 60, 60) \
  X(104, PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, 62, 62) \
  X(105, PJRT_AsyncHostToDeviceTransferManager_Device, 62, 62) \
  X(106, PJRT_AsyncHostToDeviceTransferManager_BufferCount, 62, 62) \
  X(107, PJRT_AsyncHostToDeviceTransferManager_BufferSize, 62, 62) \
  X(108, PJRT_AsyncHostToDeviceTransferManager_SetBufferError, 62, 62) \
  X(109, PJRT_AsyncHostToDeviceTransferManager_AddMetadata, 62, 62) \
  X(110, PJRT_Client_DmaMap, 67, 67) \
  X(111, PJRT_Client_DmaUnmap, 67, 67) \
  X(112, PJRT_Client_CreateUninitializedBuffer, 69, 69) \
  X(113, PJRT_Client_UpdateGlobalProcessInfo, 73, 73) \
  X(114, PJRT_TopologyDescription_Deserialize, 75, 75) \
  X(115, PJRT_Client_CreateAliasBuffer, 77, 77) \
  X(116, PJRT_Client_FulfillAliasBuffer, 77, 77) \
  X(117, PJRT_LoadedExecutable_GetDeviceAssignment, 79, 79) \
  X(118, PJRT_Client_CreateErrorBuffer, 82, 82) \
  X(119, PJRT_AsyncHostToDeviceTransferManager_TransferLiteral, 83, 83) \
  X(120, PJRT_Buffer_CopyRawToHostFuture, 84, 84) \
  X(121, PJRT_Device_PoisonExecution, 85, 85) \
  X(122, PJRT_Device_CreateAsyncTrackingEvent, 86, 86) \
  X(123, PJRT_AsyncTrackingEvent_Destroy, 86, 86) \
  X(124, PJRT_Executable_GetCompileOptions, 87, 87) \
  X(125, PJRT_Buffer_DonateWithControlDependency, 88, 88) \
  X(126, PJRT_Event_Create, 89, 89) \
  X(127, PJRT_Event_Set, 89, 89) \
  X(128, PJRT_Device_GetAttributes, 92, 92) \
  X(129, PJRT_Client_Load, 95, 95) \
  X(130, PJRT_LoadedExecutable_AddressableDeviceLogicalIds, 96, 96) \
  X(131, PJRT_Buffer_Bitcast, 98, 98) \
  X(132, PJRT_Error_ForEachPayload, 99, 99) \
  X(133, PJRT_TopologyDescription_Fingerprint, 101, 101) \
  X(134, PJRT_Executable_ParameterMemoryKinds, 102, 102) \
  X(135, PJRT_Device_ClearMemoryStats, 106, 106) \
  X(136, PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, 109, 109) \
  X(137, PJRT_TopologyDescription_GetMemorySpaceKindIds, 110, 110) \

#define CONF_NUM_SLOTS 138

/* The header must lay PJRT_Api out exactly like the table. */
_Static_assert(offsetof(PJRT_Api, pjrt_api_version) == 16, "PJRT_Api.pjrt_api_version");
_Static_assert(offsetof(PJRT_Api, pjrt_api_version) + offsetof(PJRT_Api_Version, major_version) == 32,
               "PJRT_Api major version at byte 32");
_Static_assert(offsetof(PJRT_Api, pjrt_api_version) + offsetof(PJRT_Api_Version, minor_version) == 36,
               "PJRT_Api minor version at byte 36");
#define X(i, n, p, r) _Static_assert(offsetof(PJRT_Api, n) == 40 + 8 * (i), "slot " #n);
CONF_SLOTS(X)
#undef X
_Static_assert(PJRT_Api_STRUCT_SIZE == 40 + 8 * CONF_NUM_SLOTS, "PJRT_Api_STRUCT_SIZE");

/* ------------------------------------------------------------------------- */
/* Small utilities                                                           */
/* ------------------------------------------------------------------------- */

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "conformance plugin: out of memory\n");
    abort();
  }
  return p;
}

static void *xcalloc(size_t n, size_t m) {
  void *p = calloc(n ? n : 1, m ? m : 1);
  if (!p) {
    fprintf(stderr, "conformance plugin: out of memory\n");
    abort();
  }
  return p;
}

static char *xstrndup(const char *s, size_t n) {
  char *p = xmalloc(n + 1);
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A growable string. */
typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

static void sb_reserve(sbuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) abort();
  b->p = p;
  b->cap = cap;
}

static void sb_putn(sbuf *b, const char *s, size_t n) {
  sb_reserve(b, n);
  if (n) memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  sb_reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Returns a NUL-terminated copy of b's contents (never NULL) and resets b. */
static char *sb_take(sbuf *b) {
  if (!b->p) return xstrndup("", 0);
  char *p = b->p;
  b->p = NULL;
  b->len = b->cap = 0;
  return p;
}

static uint64_t fnv1a(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

/* ------------------------------------------------------------------------- */
/* Live-object accounting and counters (exported for leak/marshalling tests) */
/* ------------------------------------------------------------------------- */

#define LIVE_KINDS(X)                                                              \
  X(error) X(client) X(device) X(device_description) X(memory) X(buffer) X(storage) \
  X(event) X(event_object) X(executable) X(loaded_executable) X(program)            \
  X(execute_context) X(topology) X(serialized_executable) X(serialized_topology)    \
  X(serialized_compile_options) X(serialized_layout) X(layout) X(ffi_error)        \
  X(device_attributes) X(job) X(transfer_manager) X(dma_mapping) X(alias_callback)    \
  X(raw_future) X(donation) X(async_tracking_event) X(serialized_device_assignment)  \
  X(serialized_shape)

enum {
#define X(n) LK_##n,
  LIVE_KINDS(X)
#undef X
  LK_COUNT
};
static const char *const g_live_names[] = {
#define X(n) #n,
    LIVE_KINDS(X)
#undef X
};
static _Atomic int64_t g_live[LK_COUNT];

#define COUNTERS(X)                                                                      \
  X(get_pjrt_api) X(plugin_initialize) X(plugin_attributes) X(struct_size_failures)     \
  X(unimplemented_calls) X(invalid_handles) X(client_create) X(client_create_kv_callbacks) \
  X(compile_calls) X(execute_calls) X(execute_jobs) X(execute_failures) X(buffer_from_host) \
  X(to_host_buffer) X(events_completed) X(onready_registered) X(onready_calls)          \
  X(onready_immediate) X(onready_foreign_thread) X(ffi_metadata_calls) X(ffi_handler_calls) \
  X(ffi_handler_registrations) X(ffi_type_registrations) X(ffi_user_data_added)         \
  X(ffi_user_data_deleted) X(gpu_custom_call_registrations) X(zero_copy_released)       \
  X(view_on_delete_calls) X(worker_jobs) X(double_destroy) X(poisoned_executions)         \
  X(event_awaits) X(alias_buffers_failed)

enum {
#define X(n) C_##n,
  COUNTERS(X)
#undef X
  C_COUNT
};
static const char *const g_counter_names[] = {
#define X(n) #n,
    COUNTERS(X)
#undef X
};
static _Atomic int64_t g_counters[C_COUNT];

static inline void live_add(int kind, int64_t d) { atomic_fetch_add(&g_live[kind], d); }
static inline void count(int c) { atomic_fetch_add(&g_counters[c], 1); }

EXPORT int64_t conformance_live(const char *kind) {
  if (!kind) return -1;
  for (int i = 0; i < LK_COUNT; i++)
    if (strcmp(kind, g_live_names[i]) == 0) return atomic_load(&g_live[i]);
  return -1;
}

EXPORT int64_t conformance_counter(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < C_COUNT; i++)
    if (strcmp(name, g_counter_names[i]) == 0) return atomic_load(&g_counters[i]);
  return -1;
}

/*
 * Text records (last client options, last execute, ...) are kept under one
 * mutex; the exported getters return a per-thread copy that stays valid until
 * the same thread calls a getter again.
 */
static pthread_mutex_t g_rec_mu = PTHREAD_MUTEX_INITIALIZER;
static char *g_last_client_options;
static char *g_last_execute;
static char *g_last_execute_extra;
static uint8_t *g_last_compile_options;
static size_t g_last_compile_options_len;

static __thread char *t_ret_buf;

static const char *return_copy(const char *s) {
  size_t n = s ? strlen(s) : 0;
  free(t_ret_buf);
  t_ret_buf = xstrndup(s ? s : "", n);
  return t_ret_buf;
}

static void set_record(char **slot, char *value /* takes ownership */) {
  pthread_mutex_lock(&g_rec_mu);
  free(*slot);
  *slot = value;
  pthread_mutex_unlock(&g_rec_mu);
}

static const char *get_record(char **slot) {
  pthread_mutex_lock(&g_rec_mu);
  const char *r = return_copy(*slot);
  pthread_mutex_unlock(&g_rec_mu);
  return r;
}

/* Named records of the calls that have no dedicated getter (see README). */
#define NAMED_RECORDS(X) \
  X(process_info) X(async_metadata) X(dma) X(async_tracking) X(poison) X(gpu_custom_call_handlers)
enum {
#define X(n) R_##n,
  NAMED_RECORDS(X)
#undef X
  R_COUNT
};
static const char *const g_record_names[] = {
#define X(n) #n,
    NAMED_RECORDS(X)
#undef X
};
static char *g_records[R_COUNT];

/* Appends text to a named record, separated by ';'. */
static void record_append(int r, const char *text) {
  pthread_mutex_lock(&g_rec_mu);
  sbuf b = {0};
  if (g_records[r] && g_records[r][0]) {
    sb_puts(&b, g_records[r]);
    sb_puts(&b, ";");
  }
  sb_puts(&b, text);
  free(g_records[r]);
  g_records[r] = sb_take(&b);
  pthread_mutex_unlock(&g_rec_mu);
}

EXPORT const char *conformance_record(const char *name) {
  for (int i = 0; name && i < R_COUNT; i++)
    if (strcmp(name, g_record_names[i]) == 0) return get_record(&g_records[i]);
  return NULL;
}

EXPORT const char *conformance_last_client_options(void) { return get_record(&g_last_client_options); }
EXPORT const char *conformance_last_execute(void) { return get_record(&g_last_execute); }
EXPORT const char *conformance_last_execute_extra(void) { return get_record(&g_last_execute_extra); }

static __thread uint8_t *t_ret_bytes;

EXPORT const uint8_t *conformance_last_compile_options(size_t *len) {
  pthread_mutex_lock(&g_rec_mu);
  size_t n = g_last_compile_options_len;
  free(t_ret_bytes);
  t_ret_bytes = xmalloc(n + 1);
  if (n) memcpy(t_ret_bytes, g_last_compile_options, n);
  t_ret_bytes[n] = 0;
  pthread_mutex_unlock(&g_rec_mu);
  if (len) *len = n;
  return t_ret_bytes;
}

static void record_compile_options(const void *p, size_t n) {
  uint8_t *copy = xmalloc(n + 1);
  if (n && p) memcpy(copy, p, n);
  pthread_mutex_lock(&g_rec_mu);
  free(g_last_compile_options);
  g_last_compile_options = copy;
  g_last_compile_options_len = p ? n : 0;
  pthread_mutex_unlock(&g_rec_mu);
}

/* ------------------------------------------------------------------------- */
/* Worker threads                                                            */
/* ------------------------------------------------------------------------- */

#define NUM_WORKERS 4

typedef struct job {
  struct job *next;
  void (*fn)(void *);
  void *arg;
  int64_t due_ns;
} job;

static pthread_mutex_t g_q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_q_cv = PTHREAD_COND_INITIALIZER;
static job *g_q_head, *g_q_tail;
static pthread_once_t g_workers_once = PTHREAD_ONCE_INIT;
static _Atomic int64_t g_delay_ns = 1000000; /* 1 ms */

static void read_delay_env(void) {
  const char *s = getenv("CONFORMANCE_EVENT_DELAY_US");
  if (!s || !*s) return;
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  if (end != s && v >= 0) atomic_store(&g_delay_ns, (int64_t)v * 1000);
}

static void *worker_main(void *unused) {
  (void)unused;
  for (;;) {
    pthread_mutex_lock(&g_q_mu);
    while (!g_q_head) pthread_cond_wait(&g_q_cv, &g_q_mu);
    job *j = g_q_head;
    g_q_head = j->next;
    if (!g_q_head) g_q_tail = NULL;
    pthread_mutex_unlock(&g_q_mu);
    int64_t wait = j->due_ns - now_ns();
    if (wait > 0) {
      struct timespec ts = {(time_t)(wait / 1000000000LL), (long)(wait % 1000000000LL)};
      while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
      }
    }
    j->fn(j->arg);
    free(j);
    live_add(LK_job, -1);
    count(C_worker_jobs);
  }
  return NULL;
}

static void start_workers(void) {
  read_delay_env();
  /* Workers run with all signals blocked: the host process (a Go program)
   * handles signals on its own threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (int i = 0; i < NUM_WORKERS; i++) {
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 8u << 20);
    if (pthread_create(&th, &attr, worker_main, NULL) != 0) {
      fprintf(stderr, "conformance plugin: cannot start worker thread\n");
      abort();
    }
    pthread_attr_destroy(&attr);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Runs fn(arg) on a worker thread after the configured delay. */
static void enqueue(void (*fn)(void *), void *arg) {
  pthread_once(&g_workers_once, start_workers);
  job *j = xmalloc(sizeof(*j));
  j->next = NULL;
  j->fn = fn;
  j->arg = arg;
  j->due_ns = now_ns() + atomic_load(&g_delay_ns);
  live_add(LK_job, 1);
  pthread_mutex_lock(&g_q_mu);
  if (g_q_tail)
    g_q_tail->next = j;
  else
    g_q_head = j;
  g_q_tail = j;
  pthread_cond_signal(&g_q_cv);
  pthread_mutex_unlock(&g_q_mu);
}

/* ------------------------------------------------------------------------- */
/* Errors                                                                    */
/* ------------------------------------------------------------------------- */

#define MAGIC_ERROR 0x43455252u      /* CERR */
#define MAGIC_EVENT 0x43455654u      /* CEVT */
#define MAGIC_CLIENT 0x43434c49u     /* CCLI */
#define MAGIC_DEVICE 0x43444556u     /* CDEV */
#define MAGIC_DEVDESC 0x43444453u    /* CDDS */
#define MAGIC_MEMORY 0x434d454du     /* CMEM */
#define MAGIC_MEMDESC 0x434d4453u    /* CMDS */
#define MAGIC_BUFFER 0x43425546u     /* CBUF */
#define MAGIC_EXEC 0x43455845u       /* CEXE */
#define MAGIC_LOADED 0x434c4558u     /* CLEX */
#define MAGIC_CONTEXT 0x43435458u    /* CCTX */
#define MAGIC_TOPOLOGY 0x43544f50u   /* CTOP */
#define MAGIC_SERIALIZED 0x43534552u /* CSER */
#define MAGIC_LAYOUT 0x434c4159u     /* CLAY */
#define MAGIC_FFI_ERROR 0x43464645u  /* CFFE */
#define MAGIC_FFI_CTX 0x43464643u    /* CFFC */
#define MAGIC_DEVATTR 0x43444154u    /* CDAT */
#define MAGIC_DEAD 0xdeadbeefu

typedef struct conf_error {
  PJRT_Error base; /* vtable == NULL: use the PJRT_Error_* API functions */
  uint32_t magic;
  int32_t code;
  size_t len;
  char *msg;
  char *payload_key; /* one optional payload (PJRT_Error_ForEachPayload) */
  size_t payload_key_len;
  char *payload_value;
  size_t payload_value_len;
} conf_error;

static PJRT_Error *err_copy(int32_t code, const char *msg, size_t len) {
  conf_error *e = xcalloc(1, sizeof(*e));
  e->base.vtable = NULL;
  e->magic = MAGIC_ERROR;
  e->code = code;
  e->msg = xstrndup(msg ? msg : "", msg ? len : 0);
  e->len = msg ? len : 0;
  live_add(LK_error, 1);
  return (PJRT_Error *)e;
}

__attribute__((format(printf, 2, 3))) static PJRT_Error *err_new(int32_t code, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof(buf)) n = (int)sizeof(buf) - 1;
  return err_copy(code, buf, (size_t)n);
}

/* Attaches a payload "key=value" (split at the first '=') to an error. */
static PJRT_Error *err_set_payload(PJRT_Error *pe, const char *kv, size_t n) {
  conf_error *e = (conf_error *)pe;
  const char *eq = memchr(kv, '=', n);
  size_t kl = eq ? (size_t)(eq - kv) : n;
  free(e->payload_key);
  free(e->payload_value);
  e->payload_key = xstrndup(kv, kl);
  e->payload_key_len = kl;
  e->payload_value = eq ? xstrndup(eq + 1, n - kl - 1) : xstrndup("", 0);
  e->payload_value_len = eq ? n - kl - 1 : 0;
  return pe;
}

/* CONFORMANCE_REQUIRE_LARGER: the name of one args struct for which the
 * plugin demands 8 bytes more than its STRUCT_SIZE (read at GetPjrtApi). */
static char g_require_larger[128];
/* CONFORMANCE_NO_OUTPUT_DIMS: PJRT_Executable_OutputDimensions reports no
   outputs, as a plugin that cannot tell them before running. */
static atomic_bool g_no_output_dims;
/* CONFORMANCE_TOKEN_OUTPUTS: executables report their outputs, and s32
   buffers their element type, as TOKEN (a type a binding may not map). */
static atomic_bool g_token_outputs;

/* The minor version reported by the last GetPjrtApi (CONFORMANCE_PJRT_MINOR). */
static _Atomic int g_minor = PJRT_API_MINOR;

static size_t need_size(const char *name, size_t base) {
  if (g_require_larger[0] && strcmp(name, g_require_larger) == 0) return base + 8;
  return base;
}

static PJRT_Error *size_error(const char *name, size_t want, size_t got) {
  count(C_struct_size_failures);
  return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                 "Unexpected %s size: expected at least %zu, got %zu. Check installed software versions.", name,
                 want, got);
}

#define CHECK_ARGS(T)                                                                             \
  do {                                                                                            \
    if (args == NULL) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, #T " pointer is NULL"); \
    size_t need_ = need_size(#T, (size_t)T##_STRUCT_SIZE);                                        \
    if (args->struct_size < need_) return size_error(#T, need_, args->struct_size);               \
  } while (0)

#define CHECK_NESTED(T, p, what)                                                                           \
  do {                                                                                                     \
    if ((p) == NULL) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: " what " is NULL", FN); \
    size_t need_ = need_size(#T, (size_t)T##_STRUCT_SIZE);                                                 \
    if (((const T *)(p))->struct_size < need_) return size_error(#T, need_, ((const T *)(p))->struct_size); \
  } while (0)

/* Inside impl_PJRT_Foo functions: "PJRT_Foo". */
#define FN (&__func__[5])

static PJRT_Error *bad_handle(const char *fn, const char *what, const void *p) {
  count(C_invalid_handles);
  return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %s is not a valid %s handle of the conformance plugin",
                 fn, p ? "argument" : "NULL pointer", what);
}

static PJRT_Error *unimplemented(const char *name) {
  count(C_unimplemented_calls);
  return err_new(PJRT_Error_Code_UNIMPLEMENTED, "%s is not implemented by the conformance plugin", name);
}

/* Generated stubs for every slot: each returns UNIMPLEMENTED naming itself. */
#define X(i, n, p, r)                                  \
  static PJRT_Error *unimpl_##n(void *args) {          \
    (void)args;                                        \
    return unimplemented(#n);                          \
  }
CONF_SLOTS(X)
#undef X

static conf_error *as_error(const void *p) {
  conf_error *e = (conf_error *)p;
  if (!e || e->magic != MAGIC_ERROR) return NULL;
  return e;
}

static void impl_PJRT_Error_Destroy(PJRT_Error_Destroy_Args *args) {
  if (!args) return;
  if (args->struct_size < (size_t)PJRT_Error_Destroy_Args_STRUCT_SIZE) {
    count(C_struct_size_failures);
    return;
  }
  conf_error *e = as_error(args->error);
  if (!e) {
    if (args->error) count(C_invalid_handles);
    return;
  }
  e->magic = MAGIC_DEAD;
  free(e->msg);
  free(e->payload_key);
  free(e->payload_value);
  free(e);
  live_add(LK_error, -1);
}

static void impl_PJRT_Error_Message(PJRT_Error_Message_Args *args) {
  if (!args) return;
  if (args->struct_size < (size_t)PJRT_Error_Message_Args_STRUCT_SIZE) {
    count(C_struct_size_failures);
    return;
  }
  conf_error *e = as_error(args->error);
  if (!e) {
    static const char bad[] = "invalid PJRT_Error handle passed to PJRT_Error_Message";
    count(C_invalid_handles);
    args->message = (void *)bad;
    args->message_size = sizeof(bad) - 1;
    return;
  }
  args->message = e->msg;
  args->message_size = e->len;
}

static PJRT_Error *impl_PJRT_Error_GetCode(PJRT_Error_GetCode_Args *args) {
  CHECK_ARGS(PJRT_Error_GetCode_Args);
  conf_error *e = as_error(args->error);
  if (!e) return bad_handle(FN, "PJRT_Error", args->error);
  args->code = e->code;
  return NULL;
}

static PJRT_Error *impl_PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args *args) {
  CHECK_ARGS(PJRT_Error_ForEachPayload_Args);
  conf_error *e = as_error(args->error);
  if (!e) return bad_handle(FN, "PJRT_Error", args->error);
  if (!args->visitor) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Error_ForEachPayload: visitor is NULL");
  /* void (*PJRT_Error_PayloadVisitor)(key, key_size, value, value_size, user_arg) */
  typedef void (*payload_visitor_fn)(const char *, size_t, const char *, size_t, void *);
  if (e->payload_key)
    ((payload_visitor_fn)args->visitor)(e->payload_key, e->payload_key_len, e->payload_value, e->payload_value_len,
                                        args->user_arg);
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Events                                                                    */
/* ------------------------------------------------------------------------- */

typedef void (*pjrt_onready_fn)(PJRT_Error *error, void *user_arg);
typedef void (*internal_ready_fn)(void *arg, int32_t code, const char *msg);

typedef struct ev_cb {
  struct ev_cb *next;
  pjrt_onready_fn user_fn;   /* a PJRT_Event_OnReady callback, or */
  internal_ready_fn int_fn;  /* a callback of the plugin itself */
  void *arg;
  pthread_t thread; /* registering thread */
} ev_cb;

typedef struct conf_event {
  uint32_t magic;
  _Atomic int refs;
  bool user;                 /* handed out through the API */
  _Atomic bool destroyed;    /* PJRT_Event_Destroy was called */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool ready;
  int32_t code;
  char *msg;
  size_t msg_len;
  ev_cb *head, *tail;
} conf_event;

static conf_event *event_new(bool user) {
  conf_event *e = xcalloc(1, sizeof(*e));
  e->magic = MAGIC_EVENT;
  atomic_init(&e->refs, 1);
  e->user = user;
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cv, NULL);
  live_add(LK_event_object, 1);
  if (user) live_add(LK_event, 1);
  return e;
}

static conf_event *event_ref(conf_event *e) {
  atomic_fetch_add(&e->refs, 1);
  return e;
}

static void event_unref(conf_event *e) {
  if (!e) return;
  if (atomic_fetch_sub(&e->refs, 1) != 1) return;
  /* Pending callbacks of an event that can no longer complete are dropped. */
  ev_cb *c = e->head;
  while (c) {
    ev_cb *n = c->next;
    free(c);
    c = n;
  }
  e->magic = MAGIC_DEAD;
  pthread_mutex_destroy(&e->mu);
  pthread_cond_destroy(&e->cv);
  free(e->msg);
  free(e);
  live_add(LK_event_object, -1);
}

/* Completes e (code 0 = success) and runs its callbacks on this thread. */
static void event_complete(conf_event *e, int32_t code, const char *msg) {
  pthread_mutex_lock(&e->mu);
  if (e->ready) {
    pthread_mutex_unlock(&e->mu);
    return;
  }
  e->ready = true;
  e->code = code;
  if (code != 0) {
    const char *m = msg ? msg : "";
    e->msg_len = strlen(m);
    e->msg = xstrndup(m, e->msg_len);
  }
  ev_cb *c = e->head;
  e->head = e->tail = NULL;
  pthread_cond_broadcast(&e->cv);
  pthread_mutex_unlock(&e->mu);
  count(C_events_completed);
  pthread_t self = pthread_self();
  while (c) {
    ev_cb *n = c->next;
    if (c->int_fn) {
      c->int_fn(c->arg, code, e->msg);
    } else {
      PJRT_Error *err = code ? err_copy(code, e->msg, e->msg_len) : NULL;
      count(C_onready_calls);
      if (!pthread_equal(self, c->thread)) count(C_onready_foreign_thread);
      c->user_fn(err, c->arg);
    }
    free(c);
    c = n;
  }
}

/* Registers an internal callback; runs it now if e is already complete. */
static void event_on_ready_internal(conf_event *e, internal_ready_fn fn, void *arg) {
  pthread_mutex_lock(&e->mu);
  if (e->ready) {
    int32_t code = e->code;
    pthread_mutex_unlock(&e->mu);
    /* e->msg is immutable once ready. */
    fn(arg, code, e->msg);
    return;
  }
  ev_cb *c = xcalloc(1, sizeof(*c));
  c->int_fn = fn;
  c->arg = arg;
  c->thread = pthread_self();
  if (e->tail)
    e->tail->next = c;
  else
    e->head = c;
  e->tail = c;
  pthread_mutex_unlock(&e->mu);
}

/* The error of a completed event as a new PJRT_Error (NULL if OK). */
static PJRT_Error *event_error_copy(conf_event *e) { return e->code ? err_copy(e->code, e->msg, e->msg_len) : NULL; }

static void chain_complete_cb(void *arg, int32_t code, const char *msg) {
  conf_event *dst = arg;
  event_complete(dst, code, msg);
  event_unref(dst);
}

/* A new user event that completes when src completes, with src's status. */
static conf_event *event_chain_user(conf_event *src) {
  conf_event *dst = event_new(true);
  event_ref(dst);
  event_on_ready_internal(src, chain_complete_cb, dst);
  return dst;
}

/*
 * Dependencies: run fn(arg, code, msg) on a worker thread (after the delay)
 * once all events in evs[] are complete; code/msg carry the first error.
 */
typedef struct deps {
  _Atomic int remaining;
  pthread_mutex_t mu;
  int32_t code;
  char *msg;
  internal_ready_fn fn;
  void *arg;
} deps;

static void deps_run(void *p) {
  deps *d = p;
  d->fn(d->arg, d->code, d->msg);
  pthread_mutex_destroy(&d->mu);
  free(d->msg);
  free(d);
}

static void deps_dec(void *p, int32_t code, const char *msg) {
  deps *d = p;
  if (code != 0) {
    pthread_mutex_lock(&d->mu);
    if (d->code == 0) {
      d->code = code;
      d->msg = xstrndup(msg ? msg : "", msg ? strlen(msg) : 0);
    }
    pthread_mutex_unlock(&d->mu);
  }
  if (atomic_fetch_sub(&d->remaining, 1) == 1) enqueue(deps_run, d);
}

/* With inline execution on (conformance_set_inline), work whose inputs are
 * ready runs on the calling thread before the PJRT call returns, as XLA's
 * CPU client runs cheap computations inline. */
static _Atomic int g_inline_execute;

EXPORT void conformance_set_inline(int on) { atomic_store(&g_inline_execute, on); }

static void run_after(conf_event *const *evs, size_t n, internal_ready_fn fn, void *arg) {
  deps *d = xcalloc(1, sizeof(*d));
  atomic_init(&d->remaining, (int)n + 1);
  pthread_mutex_init(&d->mu, NULL);
  d->fn = fn;
  d->arg = arg;
  for (size_t i = 0; i < n; i++) event_on_ready_internal(evs[i], deps_dec, d);
  if (atomic_load(&g_inline_execute) && atomic_load(&d->remaining) == 1) {
    /* Every input is ready: only this call's count is left. */
    atomic_store(&d->remaining, 0);
    deps_run(d);
    return;
  }
  deps_dec(d, 0, NULL);
}

static PJRT_Error *get_event(const char *fn, void *p, conf_event **out) {
  conf_event *e = p;
  if (!e || e->magic != MAGIC_EVENT || !e->user) return bad_handle(fn, "PJRT_Event", p);
  if (atomic_load(&e->destroyed)) {
    count(C_double_destroy);
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: the PJRT_Event was already destroyed", fn);
  }
  *out = e;
  return NULL;
}

static PJRT_Error *impl_PJRT_Event_Destroy(PJRT_Event_Destroy_Args *args) {
  CHECK_ARGS(PJRT_Event_Destroy_Args);
  conf_event *e = NULL;
  PJRT_Error *err = get_event(FN, args->event, &e);
  if (err) return err;
  if (atomic_exchange(&e->destroyed, true)) {
    count(C_double_destroy);
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Event_Destroy: the PJRT_Event was already destroyed");
  }
  live_add(LK_event, -1);
  event_unref(e);
  return NULL;
}

static PJRT_Error *impl_PJRT_Event_IsReady(PJRT_Event_IsReady_Args *args) {
  CHECK_ARGS(PJRT_Event_IsReady_Args);
  conf_event *e = NULL;
  PJRT_Error *err = get_event(FN, args->event, &e);
  if (err) return err;
  pthread_mutex_lock(&e->mu);
  args->is_ready = e->ready;
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

static PJRT_Error *impl_PJRT_Event_Error(PJRT_Event_Error_Args *args) {
  CHECK_ARGS(PJRT_Event_Error_Args);
  conf_event *e = NULL;
  PJRT_Error *err = get_event(FN, args->event, &e);
  if (err) return err;
  pthread_mutex_lock(&e->mu);
  bool ready = e->ready;
  pthread_mutex_unlock(&e->mu);
  if (!ready)
    return err_new(PJRT_Error_Code_FAILED_PRECONDITION,
                   "PJRT_Event_Error called on an event that is not ready (a real plugin aborts the process here)");
  return event_error_copy(e);
}

static PJRT_Error *impl_PJRT_Event_Await(PJRT_Event_Await_Args *args) {
  CHECK_ARGS(PJRT_Event_Await_Args);
  conf_event *e = NULL;
  PJRT_Error *err = get_event(FN, args->event, &e);
  if (err) return err;
  count(C_event_awaits);
  pthread_mutex_lock(&e->mu);
  while (!e->ready) pthread_cond_wait(&e->cv, &e->mu);
  pthread_mutex_unlock(&e->mu);
  return event_error_copy(e);
}

static PJRT_Error *impl_PJRT_Event_OnReady(PJRT_Event_OnReady_Args *args) {
  CHECK_ARGS(PJRT_Event_OnReady_Args);
  conf_event *e = NULL;
  PJRT_Error *err = get_event(FN, args->event, &e);
  if (err) return err;
  if (!args->callback) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Event_OnReady: callback is NULL");
  count(C_onready_registered);
  pjrt_onready_fn fn = (pjrt_onready_fn)args->callback;
  pthread_mutex_lock(&e->mu);
  if (e->ready) {
    pthread_mutex_unlock(&e->mu);
    count(C_onready_immediate);
    count(C_onready_calls);
    fn(event_error_copy(e), args->user_arg);
    return NULL;
  }
  ev_cb *c = xcalloc(1, sizeof(*c));
  c->user_fn = fn;
  c->arg = args->user_arg;
  c->thread = pthread_self();
  if (e->tail)
    e->tail->next = c;
  else
    e->head = c;
  e->tail = c;
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

static PJRT_Error *impl_PJRT_Event_Create(PJRT_Event_Create_Args *args) {
  CHECK_ARGS(PJRT_Event_Create_Args);
  args->event = (void *)event_new(true);
  return NULL;
}

static PJRT_Error *impl_PJRT_Event_Set(PJRT_Event_Set_Args *args) {
  CHECK_ARGS(PJRT_Event_Set_Args);
  conf_event *e = NULL;
  PJRT_Error *err = get_event(FN, args->event, &e);
  if (err) return err;
  pthread_mutex_lock(&e->mu);
  bool ready = e->ready;
  pthread_mutex_unlock(&e->mu);
  if (ready) return err_new(PJRT_Error_Code_FAILED_PRECONDITION, "PJRT_Event_Set: the event is already set");
  char *msg = xstrndup(args->error_message ? (const char *)args->error_message : "",
                       args->error_message ? args->error_message_size : 0);
  event_ref(e);
  event_complete(e, args->error_code, msg);
  event_unref(e);
  free(msg);
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Named values, plugin initialization and attributes                        */
/* ------------------------------------------------------------------------- */

static void nv_init(PJRT_NamedValue *nv, const char *name, int32_t type) {
  memset(nv, 0, sizeof(*nv));
  nv->struct_size = PJRT_NamedValue_STRUCT_SIZE;
  nv->extension_start = NULL;
  nv->name = (void *)name;
  nv->name_size = strlen(name);
  nv->type = type;
  nv->value_size = 1;
}

static void nv_int64(PJRT_NamedValue *nv, const char *name, int64_t v) {
  nv_init(nv, name, PJRT_NamedValue_kInt64);
  nv->int64_value = v;
}

static void nv_string(PJRT_NamedValue *nv, const char *name, const char *v) {
  nv_init(nv, name, PJRT_NamedValue_kString);
  nv->string_value = (void *)v;
  nv->value_size = strlen(v);
}

static void nv_int64list(PJRT_NamedValue *nv, const char *name, const int64_t *v, size_t n) {
  nv_init(nv, name, PJRT_NamedValue_kInt64List);
  nv->int64_array_value = (void *)v;
  nv->value_size = n;
}

static void nv_float(PJRT_NamedValue *nv, const char *name, float v) {
  nv_init(nv, name, PJRT_NamedValue_kFloat);
  nv->float_value = v;
}

static void nv_bool(PJRT_NamedValue *nv, const char *name, bool v) {
  nv_init(nv, name, PJRT_NamedValue_kBool);
  nv->bool_value = v;
}

/* Appends "name=type:value" for one named value. */
static void nv_dump(sbuf *b, const PJRT_NamedValue *nv) {
  sb_putn(b, nv->name ? (const char *)nv->name : "", nv->name ? nv->name_size : 0);
  sb_puts(b, "=");
  switch (nv->type) {
    case PJRT_NamedValue_kString:
      sb_puts(b, "string:");
      if (nv->string_value) sb_putn(b, (const char *)nv->string_value, nv->value_size);
      break;
    case PJRT_NamedValue_kInt64:
      sb_printf(b, "int64:%" PRId64, (int64_t)nv->int64_value);
      break;
    case PJRT_NamedValue_kInt64List: {
      sb_puts(b, "int64list:");
      const int64_t *v = (const int64_t *)nv->int64_array_value;
      for (size_t i = 0; v && i < nv->value_size; i++) sb_printf(b, "%s%" PRId64, i ? "," : "", v[i]);
      break;
    }
    case PJRT_NamedValue_kFloat:
      sb_printf(b, "float:%g", (double)nv->float_value);
      break;
    case PJRT_NamedValue_kBool:
      sb_printf(b, "bool:%s", nv->bool_value ? "true" : "false");
      break;
    default:
      sb_printf(b, "unknown(%d):", (int)nv->type);
      break;
  }
}

static bool nv_name_is(const PJRT_NamedValue *nv, const char *name) {
  size_t n = strlen(name);
  return nv->name && nv->name_size == n && memcmp(nv->name, name, n) == 0;
}

static PJRT_Error *impl_PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args *args) {
  CHECK_ARGS(PJRT_Plugin_Initialize_Args);
  count(C_plugin_initialize);
  return NULL;
}

static const int64_t g_stablehlo_current[3] = {1, 13, 0};
static const int64_t g_stablehlo_minimum[3] = {0, 9, 0};
static PJRT_NamedValue g_plugin_attrs[6];
static pthread_once_t g_plugin_attrs_once = PTHREAD_ONCE_INIT;

static void init_plugin_attrs(void) {
  nv_int64(&g_plugin_attrs[0], "xla_version", 2);
  nv_int64list(&g_plugin_attrs[1], "stablehlo_current_version", g_stablehlo_current, 3);
  nv_int64list(&g_plugin_attrs[2], "stablehlo_minimum_version", g_stablehlo_minimum, 3);
  nv_string(&g_plugin_attrs[3], "conformance_name", "halo-conformance");
  nv_float(&g_plugin_attrs[4], "conformance_float", 0.5f);
  nv_bool(&g_plugin_attrs[5], "conformance_bool", true);
}

static PJRT_Error *impl_PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args *args) {
  CHECK_ARGS(PJRT_Plugin_Attributes_Args);
  count(C_plugin_attributes);
  pthread_once(&g_plugin_attrs_once, init_plugin_attrs);
  args->attributes = (void *)g_plugin_attrs;
  args->num_attributes = sizeof(g_plugin_attrs) / sizeof(g_plugin_attrs[0]);
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Clients, devices, memories, topologies                                    */
/* ------------------------------------------------------------------------- */

#define MEM_DEVICE 0
#define MEM_PINNED_HOST 1
static const char *const g_mem_kinds[2] = {"device", "pinned_host"};

typedef struct conf_memdesc {
  uint32_t magic;
  const char *kind;
  int kind_id;
} conf_memdesc;

typedef struct conf_devdesc {
  uint32_t magic;
  int id;
  char debug[64];
  char tostr[64];
  char name[32];
  int64_t coords[3];
  PJRT_NamedValue attrs[3];
  conf_memdesc md[2];
  const void *md_ptrs[2];
} conf_devdesc;

struct conf_device;
struct conf_client;

typedef struct conf_memory {
  PJRT_Memory base; /* vtable == NULL */
  uint32_t magic;
  struct conf_device *dev;
  int id;
  int kind_id;
  const char *kind;
  char debug[64];
  char tostr[64];
} conf_memory;

typedef struct conf_device {
  uint32_t magic;
  struct conf_client *client;
  int index;
  conf_devdesc desc;
  conf_memory mem[2];
  void *mem_ptrs[2];
  void *self_ptr[1];
  _Atomic int64_t bytes_in_use;
  _Atomic int64_t peak_bytes_in_use;
  _Atomic int64_t num_allocs;
  _Atomic int64_t largest_alloc;
} conf_device;

typedef struct conf_topology {
  uint32_t magic;
  bool client_owned;
  int n;
  conf_devdesc *descs; /* standalone topologies only */
  void **desc_ptrs;
  PJRT_NamedValue attrs[2];
  int64_t device_ids_storage[1];
} conf_topology;

typedef struct conf_client {
  uint32_t magic;
  _Atomic int refs;
  _Atomic bool destroyed;
  int n;
  conf_device *devs;
  void **dev_ptrs;
  void **mem_ptrs;
  conf_topology topo;
} conf_client;

static void devdesc_init(conf_devdesc *d, int i) {
  memset(d, 0, sizeof(*d));
  d->magic = MAGIC_DEVDESC;
  d->id = i;
  snprintf(d->debug, sizeof(d->debug), "conformance_device:%d", i);
  snprintf(d->tostr, sizeof(d->tostr), "ConformanceDevice(id=%d)", i);
  snprintf(d->name, sizeof(d->name), "dev%d", i);
  d->coords[0] = i;
  d->coords[1] = 0;
  d->coords[2] = 0;
  nv_int64(&d->attrs[0], "core_count", i + 1);
  nv_string(&d->attrs[1], "name", d->name);
  nv_int64list(&d->attrs[2], "coords", d->coords, 3);
  for (int k = 0; k < 2; k++) {
    d->md[k].magic = MAGIC_MEMDESC;
    d->md[k].kind = g_mem_kinds[k];
    d->md[k].kind_id = k;
    d->md_ptrs[k] = &d->md[k];
  }
  live_add(LK_device_description, 1);
}

static void topology_init_attrs(conf_topology *t) {
  nv_int64(&t->attrs[0], "device_count", t->n);
  nv_string(&t->attrs[1], "platform", "conformance");
}

static conf_client *client_ref(conf_client *c) {
  atomic_fetch_add(&c->refs, 1);
  return c;
}

static void client_unref(conf_client *c) {
  if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
  for (int i = 0; i < c->n; i++) {
    c->devs[i].magic = MAGIC_DEAD;
    c->devs[i].desc.magic = MAGIC_DEAD;
    c->devs[i].mem[0].magic = MAGIC_DEAD;
    c->devs[i].mem[1].magic = MAGIC_DEAD;
  }
  live_add(LK_device, -c->n);
  live_add(LK_device_description, -c->n);
  live_add(LK_memory, -2 * c->n);
  c->magic = MAGIC_DEAD;
  c->topo.magic = MAGIC_DEAD;
  free(c->devs);
  free(c->dev_ptrs);
  free(c->mem_ptrs);
  free(c->topo.desc_ptrs);
  free(c);
}

static conf_client *client_new(int n) {
  conf_client *c = xcalloc(1, sizeof(*c));
  c->magic = MAGIC_CLIENT;
  atomic_init(&c->refs, 1);
  c->n = n;
  c->devs = xcalloc((size_t)n, sizeof(conf_device));
  c->dev_ptrs = xcalloc((size_t)n, sizeof(void *));
  c->mem_ptrs = xcalloc((size_t)n * 2, sizeof(void *));
  for (int i = 0; i < n; i++) {
    conf_device *d = &c->devs[i];
    d->magic = MAGIC_DEVICE;
    d->client = c;
    d->index = i;
    devdesc_init(&d->desc, i);
    for (int k = 0; k < 2; k++) {
      conf_memory *m = &d->mem[k];
      m->base.vtable = NULL;
      m->magic = MAGIC_MEMORY;
      m->dev = d;
      m->id = 2 * i + k;
      m->kind_id = k;
      m->kind = g_mem_kinds[k];
      snprintf(m->debug, sizeof(m->debug), "conformance_memory(id=%d, kind=%s, device=%d)", m->id, m->kind, i);
      snprintf(m->tostr, sizeof(m->tostr), "%s:%d", m->kind, m->id);
      d->mem_ptrs[k] = m;
      c->mem_ptrs[2 * i + k] = m;
    }
    d->self_ptr[0] = d;
    c->dev_ptrs[i] = d;
  }
  live_add(LK_device, n);
  live_add(LK_memory, 2 * n);
  c->topo.magic = MAGIC_TOPOLOGY;
  c->topo.client_owned = true;
  c->topo.n = n;
  c->topo.desc_ptrs = xcalloc((size_t)n, sizeof(void *));
  for (int i = 0; i < n; i++) c->topo.desc_ptrs[i] = &c->devs[i].desc;
  topology_init_attrs(&c->topo);
  return c;
}

static PJRT_Error *get_client(const char *fn, void *p, conf_client **out) {
  conf_client *c = p;
  if (!c || c->magic != MAGIC_CLIENT || atomic_load(&c->destroyed)) return bad_handle(fn, "PJRT_Client", p);
  *out = c;
  return NULL;
}

static PJRT_Error *get_device(const char *fn, void *p, conf_device **out) {
  conf_device *d = p;
  if (!d || d->magic != MAGIC_DEVICE) return bad_handle(fn, "PJRT_Device", p);
  *out = d;
  return NULL;
}

static PJRT_Error *get_devdesc(const char *fn, void *p, conf_devdesc **out) {
  conf_devdesc *d = p;
  if (!d || d->magic != MAGIC_DEVDESC) return bad_handle(fn, "PJRT_DeviceDescription", p);
  *out = d;
  return NULL;
}

static PJRT_Error *get_memory(const char *fn, void *p, conf_memory **out) {
  conf_memory *m = p;
  if (!m || m->magic != MAGIC_MEMORY) return bad_handle(fn, "PJRT_Memory", p);
  *out = m;
  return NULL;
}

static PJRT_Error *get_topology(const char *fn, void *p, conf_topology **out) {
  conf_topology *t = p;
  if (!t || t->magic != MAGIC_TOPOLOGY) return bad_handle(fn, "PJRT_TopologyDescription", p);
  *out = t;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_Create(PJRT_Client_Create_Args *args) {
  CHECK_ARGS(PJRT_Client_Create_Args);
  count(C_client_create);
  read_delay_env();
  if (args->num_options && !args->create_options)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_Create: create_options is NULL but num_options is %zu",
                   args->num_options);
  const PJRT_NamedValue *opts = (const PJRT_NamedValue *)args->create_options;
  for (size_t i = 0; i < args->num_options; i++)
    if (opts[i].struct_size < (size_t)PJRT_NamedValue_STRUCT_SIZE)
      return size_error("PJRT_NamedValue", PJRT_NamedValue_STRUCT_SIZE, opts[i].struct_size);
  sbuf b = {0};
  for (size_t i = 0; i < args->num_options; i++) {
    if (i) sb_puts(&b, ";");
    nv_dump(&b, &opts[i]);
  }
  set_record(&g_last_client_options, sb_take(&b));
  if (args->kv_get_callback && args->kv_put_callback) count(C_client_create_kv_callbacks);

  int64_t n = 2;
  const PJRT_NamedValue *payload = NULL;
  for (size_t i = 0; i < args->num_options; i++)
    if (nv_name_is(&opts[i], "fail_payload") && opts[i].type == PJRT_NamedValue_kString && opts[i].string_value)
      payload = &opts[i];
  for (size_t i = 0; i < args->num_options; i++) {
    const PJRT_NamedValue *nv = &opts[i];
    if (nv_name_is(nv, "fail_create") && nv->type == PJRT_NamedValue_kString) {
      PJRT_Error *e =
          err_copy(PJRT_Error_Code_INTERNAL, (const char *)nv->string_value, nv->string_value ? nv->value_size : 0);
      if (payload) err_set_payload(e, (const char *)payload->string_value, payload->value_size);
      return e;
    }
    if (nv_name_is(nv, "device_count")) {
      if (nv->type != PJRT_NamedValue_kInt64)
        return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_Create: option device_count must be kInt64");
      n = nv->int64_value;
      if (n < 1 || n > 1024)
        return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                       "PJRT_Client_Create: option device_count must be in [1, 1024], got %" PRId64, n);
    }
    if (nv_name_is(nv, "event_delay_us")) {
      if (nv->type != PJRT_NamedValue_kInt64 || nv->int64_value < 0)
        return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                       "PJRT_Client_Create: option event_delay_us must be a non-negative kInt64");
      atomic_store(&g_delay_ns, nv->int64_value * 1000);
    }
  }
  conf_client *c = client_new((int)n);
  live_add(LK_client, 1);
  args->client = (void *)c;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_Destroy(PJRT_Client_Destroy_Args *args) {
  CHECK_ARGS(PJRT_Client_Destroy_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  if (atomic_exchange(&c->destroyed, true)) {
    count(C_double_destroy);
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_Destroy: client already destroyed");
  }
  live_add(LK_client, -1);
  client_unref(c);
  return NULL;
}

static const char g_platform_name[] = "conformance";
static const char g_platform_version[] = "conformance 0.114";

static PJRT_Error *impl_PJRT_Client_PlatformName(PJRT_Client_PlatformName_Args *args) {
  CHECK_ARGS(PJRT_Client_PlatformName_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  args->platform_name = (void *)g_platform_name;
  args->platform_name_size = sizeof(g_platform_name) - 1;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_PlatformVersion(PJRT_Client_PlatformVersion_Args *args) {
  CHECK_ARGS(PJRT_Client_PlatformVersion_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  args->platform_version = (void *)g_platform_version;
  args->platform_version_size = sizeof(g_platform_version) - 1;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_ProcessIndex(PJRT_Client_ProcessIndex_Args *args) {
  CHECK_ARGS(PJRT_Client_ProcessIndex_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  args->process_index = 0;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_Devices(PJRT_Client_Devices_Args *args) {
  CHECK_ARGS(PJRT_Client_Devices_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  args->devices = (void *)c->dev_ptrs;
  args->num_devices = (size_t)c->n;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_AddressableDevices(PJRT_Client_AddressableDevices_Args *args) {
  CHECK_ARGS(PJRT_Client_AddressableDevices_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  args->addressable_devices = (void *)c->dev_ptrs;
  args->num_addressable_devices = (size_t)c->n;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_LookupDevice(PJRT_Client_LookupDevice_Args *args) {
  CHECK_ARGS(PJRT_Client_LookupDevice_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  if (args->id < 0 || args->id >= c->n)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_LookupDevice: no device with id %d (device count %d)",
                   args->id, c->n);
  args->device = (void *)&c->devs[args->id];
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_LookupAddressableDevice(PJRT_Client_LookupAddressableDevice_Args *args) {
  CHECK_ARGS(PJRT_Client_LookupAddressableDevice_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  int i = args->local_hardware_id - 100;
  if (i < 0 || i >= c->n)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "PJRT_Client_LookupAddressableDevice: no addressable device with local_hardware_id %d "
                   "(ids are 100..%d)",
                   args->local_hardware_id, 100 + c->n - 1);
  args->addressable_device = (void *)&c->devs[i];
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_AddressableMemories(PJRT_Client_AddressableMemories_Args *args) {
  CHECK_ARGS(PJRT_Client_AddressableMemories_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  args->addressable_memories = (void *)c->mem_ptrs;
  args->num_addressable_memories = (size_t)c->n * 2;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_DefaultDeviceAssignment(PJRT_Client_DefaultDeviceAssignment_Args *args) {
  CHECK_ARGS(PJRT_Client_DefaultDeviceAssignment_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  if (args->num_replicas < 1 || args->num_partitions < 1)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "PJRT_Client_DefaultDeviceAssignment: num_replicas (%d) and num_partitions (%d) must be >= 1",
                   args->num_replicas, args->num_partitions);
  size_t need = (size_t)args->num_replicas * (size_t)args->num_partitions;
  if (args->default_assignment_size < need)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "PJRT_Client_DefaultDeviceAssignment: default_assignment_size %zu is smaller than "
                   "num_replicas*num_partitions = %zu",
                   args->default_assignment_size, need);
  if (!args->default_assignment)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_DefaultDeviceAssignment: default_assignment is NULL");
  int *out = args->default_assignment;
  for (size_t k = 0; k < need; k++) out[k] = (int)(k % (size_t)c->n);
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_TopologyDescription(PJRT_Client_TopologyDescription_Args *args) {
  CHECK_ARGS(PJRT_Client_TopologyDescription_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  args->topology = (void *)&c->topo;
  return NULL;
}

/* Device descriptions */

static PJRT_Error *impl_PJRT_DeviceDescription_Id(PJRT_DeviceDescription_Id_Args *args) {
  CHECK_ARGS(PJRT_DeviceDescription_Id_Args);
  conf_devdesc *d = NULL;
  PJRT_Error *err = get_devdesc(FN, args->device_description, &d);
  if (err) return err;
  args->id = d->id;
  return NULL;
}

static PJRT_Error *impl_PJRT_DeviceDescription_ProcessIndex(PJRT_DeviceDescription_ProcessIndex_Args *args) {
  CHECK_ARGS(PJRT_DeviceDescription_ProcessIndex_Args);
  conf_devdesc *d = NULL;
  PJRT_Error *err = get_devdesc(FN, args->device_description, &d);
  if (err) return err;
  args->process_index = 0;
  return NULL;
}

static PJRT_Error *impl_PJRT_DeviceDescription_Attributes(PJRT_DeviceDescription_Attributes_Args *args) {
  CHECK_ARGS(PJRT_DeviceDescription_Attributes_Args);
  conf_devdesc *d = NULL;
  PJRT_Error *err = get_devdesc(FN, args->device_description, &d);
  if (err) return err;
  args->attributes = (void *)d->attrs;
  args->num_attributes = 3;
  return NULL;
}

static const char g_device_kind[] = "conformance_device";

static PJRT_Error *impl_PJRT_DeviceDescription_Kind(PJRT_DeviceDescription_Kind_Args *args) {
  CHECK_ARGS(PJRT_DeviceDescription_Kind_Args);
  conf_devdesc *d = NULL;
  PJRT_Error *err = get_devdesc(FN, args->device_description, &d);
  if (err) return err;
  args->device_kind = (void *)g_device_kind;
  args->device_kind_size = sizeof(g_device_kind) - 1;
  return NULL;
}

static PJRT_Error *impl_PJRT_DeviceDescription_DebugString(PJRT_DeviceDescription_DebugString_Args *args) {
  CHECK_ARGS(PJRT_DeviceDescription_DebugString_Args);
  conf_devdesc *d = NULL;
  PJRT_Error *err = get_devdesc(FN, args->device_description, &d);
  if (err) return err;
  args->debug_string = d->debug;
  args->debug_string_size = strlen(d->debug);
  return NULL;
}

static PJRT_Error *impl_PJRT_DeviceDescription_ToString(PJRT_DeviceDescription_ToString_Args *args) {
  CHECK_ARGS(PJRT_DeviceDescription_ToString_Args);
  conf_devdesc *d = NULL;
  PJRT_Error *err = get_devdesc(FN, args->device_description, &d);
  if (err) return err;
  args->to_string = d->tostr;
  args->to_string_size = strlen(d->tostr);
  return NULL;
}

/* Devices */

static PJRT_Error *impl_PJRT_Device_GetDescription(PJRT_Device_GetDescription_Args *args) {
  CHECK_ARGS(PJRT_Device_GetDescription_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  args->device_description = (void *)&d->desc;
  return NULL;
}

static PJRT_Error *impl_PJRT_Device_IsAddressable(PJRT_Device_IsAddressable_Args *args) {
  CHECK_ARGS(PJRT_Device_IsAddressable_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  args->is_addressable = true;
  return NULL;
}

static PJRT_Error *impl_PJRT_Device_LocalHardwareId(PJRT_Device_LocalHardwareId_Args *args) {
  CHECK_ARGS(PJRT_Device_LocalHardwareId_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  args->local_hardware_id = 100 + d->index;
  return NULL;
}

static PJRT_Error *impl_PJRT_Device_AddressableMemories(PJRT_Device_AddressableMemories_Args *args) {
  CHECK_ARGS(PJRT_Device_AddressableMemories_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  args->memories = (void *)d->mem_ptrs;
  args->num_memories = 2;
  return NULL;
}

static PJRT_Error *impl_PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args *args) {
  CHECK_ARGS(PJRT_Device_DefaultMemory_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  args->memory = (void *)&d->mem[MEM_DEVICE];
  return NULL;
}

static PJRT_Error *impl_PJRT_Device_MemoryStats(PJRT_Device_MemoryStats_Args *args) {
  CHECK_ARGS(PJRT_Device_MemoryStats_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  /* Clear every output field (everything after the device pointer). */
  size_t off = offsetof(PJRT_Device_MemoryStats_Args, bytes_in_use);
  memset((char *)args + off, 0, (size_t)PJRT_Device_MemoryStats_Args_STRUCT_SIZE - off);
  args->bytes_in_use = atomic_load(&d->bytes_in_use);
  args->peak_bytes_in_use = atomic_load(&d->peak_bytes_in_use);
  args->peak_bytes_in_use_is_set = true;
  args->num_allocs = atomic_load(&d->num_allocs);
  args->num_allocs_is_set = true;
  args->largest_alloc_size = atomic_load(&d->largest_alloc);
  args->largest_alloc_size_is_set = true;
  args->bytes_limit = (int64_t)1 << 34;
  args->bytes_limit_is_set = true;
  return NULL;
}

static PJRT_Error *impl_PJRT_Device_ClearMemoryStats(PJRT_Device_ClearMemoryStats_Args *args) {
  CHECK_ARGS(PJRT_Device_ClearMemoryStats_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  atomic_store(&d->peak_bytes_in_use, atomic_load(&d->bytes_in_use));
  atomic_store(&d->num_allocs, 0);
  atomic_store(&d->largest_alloc, 0);
  return NULL;
}

typedef struct conf_devattrs {
  uint32_t magic;
} conf_devattrs;

static void devattrs_deleter(void *p) {
  conf_devattrs *a = p;
  if (!a || a->magic != MAGIC_DEVATTR) {
    count(C_invalid_handles);
    return;
  }
  a->magic = MAGIC_DEAD;
  free(a);
  live_add(LK_device_attributes, -1);
}

static PJRT_Error *impl_PJRT_Device_GetAttributes(PJRT_Device_GetAttributes_Args *args) {
  CHECK_ARGS(PJRT_Device_GetAttributes_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  conf_devattrs *a = xcalloc(1, sizeof(*a));
  a->magic = MAGIC_DEVATTR;
  live_add(LK_device_attributes, 1);
  args->attributes = (void *)d->desc.attrs;
  args->num_attributes = 3;
  args->device_attributes = (void *)a;
  args->attributes_deleter = (void *)devattrs_deleter;
  return NULL;
}

/* Memories */

static PJRT_Error *impl_PJRT_Memory_Id(PJRT_Memory_Id_Args *args) {
  CHECK_ARGS(PJRT_Memory_Id_Args);
  conf_memory *m = NULL;
  PJRT_Error *err = get_memory(FN, args->memory, &m);
  if (err) return err;
  args->id = m->id;
  return NULL;
}

static PJRT_Error *impl_PJRT_Memory_Kind(PJRT_Memory_Kind_Args *args) {
  CHECK_ARGS(PJRT_Memory_Kind_Args);
  conf_memory *m = NULL;
  PJRT_Error *err = get_memory(FN, args->memory, &m);
  if (err) return err;
  args->kind = (void *)m->kind;
  args->kind_size = strlen(m->kind);
  return NULL;
}

static PJRT_Error *impl_PJRT_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args *args) {
  CHECK_ARGS(PJRT_Memory_Kind_Id_Args);
  conf_memory *m = NULL;
  PJRT_Error *err = get_memory(FN, args->memory, &m);
  if (err) return err;
  args->kind_id = m->kind_id;
  return NULL;
}

static PJRT_Error *impl_PJRT_Memory_DebugString(PJRT_Memory_DebugString_Args *args) {
  CHECK_ARGS(PJRT_Memory_DebugString_Args);
  conf_memory *m = NULL;
  PJRT_Error *err = get_memory(FN, args->memory, &m);
  if (err) return err;
  args->debug_string = m->debug;
  args->debug_string_size = strlen(m->debug);
  return NULL;
}

static PJRT_Error *impl_PJRT_Memory_ToString(PJRT_Memory_ToString_Args *args) {
  CHECK_ARGS(PJRT_Memory_ToString_Args);
  conf_memory *m = NULL;
  PJRT_Error *err = get_memory(FN, args->memory, &m);
  if (err) return err;
  args->to_string = m->tostr;
  args->to_string_size = strlen(m->tostr);
  return NULL;
}

static PJRT_Error *impl_PJRT_Memory_AddressableByDevices(PJRT_Memory_AddressableByDevices_Args *args) {
  CHECK_ARGS(PJRT_Memory_AddressableByDevices_Args);
  conf_memory *m = NULL;
  PJRT_Error *err = get_memory(FN, args->memory, &m);
  if (err) return err;
  args->devices = (void *)m->dev->self_ptr;
  args->num_devices = 1;
  return NULL;
}

/* Topologies */

static conf_topology *topology_new_standalone(int n) {
  conf_topology *t = xcalloc(1, sizeof(*t));
  t->magic = MAGIC_TOPOLOGY;
  t->client_owned = false;
  t->n = n;
  t->descs = xcalloc((size_t)n, sizeof(conf_devdesc));
  t->desc_ptrs = xcalloc((size_t)n, sizeof(void *));
  for (int i = 0; i < n; i++) {
    devdesc_init(&t->descs[i], i);
    t->desc_ptrs[i] = &t->descs[i];
  }
  topology_init_attrs(t);
  live_add(LK_topology, 1);
  return t;
}

static PJRT_Error *impl_PJRT_TopologyDescription_Create(PJRT_TopologyDescription_Create_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_Create_Args);
  const PJRT_NamedValue *opts = (const PJRT_NamedValue *)args->create_options;
  int64_t n = 2;
  for (size_t i = 0; opts && i < args->num_options; i++) {
    if (opts[i].struct_size < (size_t)PJRT_NamedValue_STRUCT_SIZE)
      return size_error("PJRT_NamedValue", PJRT_NamedValue_STRUCT_SIZE, opts[i].struct_size);
    if (nv_name_is(&opts[i], "device_count") && opts[i].type == PJRT_NamedValue_kInt64) n = opts[i].int64_value;
  }
  if (n < 1 || n > 1024)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "PJRT_TopologyDescription_Create: device_count must be in [1, 1024], got %" PRId64, n);
  args->topology = (void *)topology_new_standalone((int)n);
  return NULL;
}

static PJRT_Error *impl_PJRT_TopologyDescription_Destroy(PJRT_TopologyDescription_Destroy_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_Destroy_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  if (t->client_owned)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "PJRT_TopologyDescription_Destroy: this topology is owned by its PJRT_Client and must not be destroyed");
  t->magic = MAGIC_DEAD;
  for (int i = 0; i < t->n; i++) t->descs[i].magic = MAGIC_DEAD;
  live_add(LK_device_description, -t->n);
  free(t->descs);
  free(t->desc_ptrs);
  free(t);
  live_add(LK_topology, -1);
  return NULL;
}

static PJRT_Error *impl_PJRT_TopologyDescription_PlatformName(PJRT_TopologyDescription_PlatformName_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_PlatformName_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  args->platform_name = (void *)g_platform_name;
  args->platform_name_size = sizeof(g_platform_name) - 1;
  return NULL;
}

static PJRT_Error *impl_PJRT_TopologyDescription_PlatformVersion(PJRT_TopologyDescription_PlatformVersion_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_PlatformVersion_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  args->platform_version = (void *)g_platform_version;
  args->platform_version_size = sizeof(g_platform_version) - 1;
  return NULL;
}

static PJRT_Error *impl_PJRT_TopologyDescription_GetDeviceDescriptions(
    PJRT_TopologyDescription_GetDeviceDescriptions_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  args->descriptions = (void *)t->desc_ptrs;
  args->num_descriptions = (size_t)t->n;
  return NULL;
}

static PJRT_Error *impl_PJRT_TopologyDescription_Attributes(PJRT_TopologyDescription_Attributes_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_Attributes_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  args->attributes = (void *)t->attrs;
  args->num_attributes = 2;
  return NULL;
}

static PJRT_Error *impl_PJRT_TopologyDescription_Fingerprint(PJRT_TopologyDescription_Fingerprint_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_Fingerprint_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  char buf[64];
  int n = snprintf(buf, sizeof(buf), "conformance/%d", t->n);
  args->fingerprint = fnv1a(buf, (size_t)n);
  return NULL;
}

static const int g_memory_kind_ids[2] = {0, 1};

static PJRT_Error *impl_PJRT_TopologyDescription_GetMemorySpaceKindIds(
    PJRT_TopologyDescription_GetMemorySpaceKindIds_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  args->memory_space_kind_ids = (void *)g_memory_kind_ids;
  args->num_memory_space_kind_ids = 2;
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Serialized blobs (executables, topologies, compile options, layouts)      */
/* ------------------------------------------------------------------------- */

typedef struct conf_serialized {
  uint32_t magic;
  int kind; /* an LK_* value */
  char *bytes;
  size_t len;
} conf_serialized;

static conf_serialized *serialized_new(int kind, const void *p, size_t n) {
  conf_serialized *s = xcalloc(1, sizeof(*s));
  s->magic = MAGIC_SERIALIZED;
  s->kind = kind;
  s->bytes = xmalloc(n + 1);
  if (n) memcpy(s->bytes, p, n);
  s->bytes[n] = 0;
  s->len = n;
  live_add(kind, 1);
  return s;
}

/* The deleter handed out with every serialized blob. */
static void serialized_deleter(void *p) {
  conf_serialized *s = p;
  if (!s || s->magic != MAGIC_SERIALIZED) {
    count(C_invalid_handles);
    return;
  }
  s->magic = MAGIC_DEAD;
  live_add(s->kind, -1);
  free(s->bytes);
  free(s);
}

static PJRT_Error *impl_PJRT_TopologyDescription_Serialize(PJRT_TopologyDescription_Serialize_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_Serialize_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  char buf[64];
  int n = snprintf(buf, sizeof(buf), "CONFTOPO:%d", t->n);
  conf_serialized *s = serialized_new(LK_serialized_topology, buf, (size_t)n);
  args->serialized_bytes = s->bytes;
  args->serialized_bytes_size = s->len;
  args->serialized_topology = (void *)s;
  args->serialized_topology_deleter = (void *)serialized_deleter;
  return NULL;
}

static PJRT_Error *impl_PJRT_TopologyDescription_Deserialize(PJRT_TopologyDescription_Deserialize_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_Deserialize_Args);
  const char *p = (const char *)args->serialized_topology;
  size_t len = args->serialized_topology_size;
  int n = 0;
  bool ok = p && len > 9 && len < 32 && memcmp(p, "CONFTOPO:", 9) == 0;
  for (size_t i = 9; ok && i < len; i++) {
    if (p[i] < '0' || p[i] > '9') ok = false;
    n = n * 10 + (p[i] - '0');
  }
  if (!ok || n < 1 || n > 1024)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "PJRT_TopologyDescription_Deserialize: not a serialized conformance topology");
  args->topology = (void *)topology_new_standalone(n);
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Element types                                                             */
/* ------------------------------------------------------------------------- */

typedef struct type_info {
  int32_t type;   /* PJRT_Buffer_Type */
  const char *name;
  size_t size;    /* bytes per element in host buffers (sub-byte types: 1) */
  int32_t ffi;    /* XLA_FFI_DataType (values from ffi_enums.tsv; 0 = none) */
} type_info;

static const type_info g_types[] = {
    {PJRT_Buffer_Type_PRED, "pred", 1, 1},
    {PJRT_Buffer_Type_S8, "s8", 1, 2},
    {PJRT_Buffer_Type_S16, "s16", 2, 3},
    {PJRT_Buffer_Type_S32, "s32", 4, 4},
    {PJRT_Buffer_Type_S64, "s64", 8, 5},
    {PJRT_Buffer_Type_U8, "u8", 1, 6},
    {PJRT_Buffer_Type_U16, "u16", 2, 7},
    {PJRT_Buffer_Type_U32, "u32", 4, 8},
    {PJRT_Buffer_Type_U64, "u64", 8, 9},
    {PJRT_Buffer_Type_F16, "f16", 2, 10},
    {PJRT_Buffer_Type_F32, "f32", 4, 11},
    {PJRT_Buffer_Type_F64, "f64", 8, 12},
    {PJRT_Buffer_Type_BF16, "bf16", 2, 16},
    {PJRT_Buffer_Type_C64, "c64", 8, 15},
    {PJRT_Buffer_Type_C128, "c128", 16, 18},
    {PJRT_Buffer_Type_F8E5M2, "f8e5m2", 1, 19},
    {PJRT_Buffer_Type_F8E4M3FN, "f8e4m3fn", 1, 20},
    {PJRT_Buffer_Type_F8E4M3B11FNUZ, "f8e4m3b11fnuz", 1, 23},
    {PJRT_Buffer_Type_F8E5M2FNUZ, "f8e5m2fnuz", 1, 24},
    {PJRT_Buffer_Type_F8E4M3FNUZ, "f8e4m3fnuz", 1, 25},
    {PJRT_Buffer_Type_S4, "s4", 1, 21},
    {PJRT_Buffer_Type_U4, "u4", 1, 22},
    {PJRT_Buffer_Type_S2, "s2", 1, 26},
    {PJRT_Buffer_Type_U2, "u2", 1, 27},
    {PJRT_Buffer_Type_F8E4M3, "f8e4m3", 1, 28},
    {PJRT_Buffer_Type_F8E3M4, "f8e3m4", 1, 29},
    {PJRT_Buffer_Type_F8E8M0FNU, "f8e8m0fnu", 1, 33},
    {PJRT_Buffer_Type_F4E2M1FN, "f4e2m1fn", 1, 32},
    {PJRT_Buffer_Type_S1, "s1", 1, 30},
    {PJRT_Buffer_Type_U1, "u1", 1, 31},
    {PJRT_Buffer_Type_F6E2M3FN, "f6e2m3fn", 1, 0},
    {PJRT_Buffer_Type_F6E3M2FN, "f6e3m2fn", 1, 0},
};
#define NUM_TYPES (sizeof(g_types) / sizeof(g_types[0]))

static const type_info *type_lookup(int32_t t) {
  for (size_t i = 0; i < NUM_TYPES; i++)
    if (g_types[i].type == t) return &g_types[i];
  return NULL;
}

static const type_info *type_by_name(const char *s, size_t n) {
  for (size_t i = 0; i < NUM_TYPES; i++)
    if (strlen(g_types[i].name) == n && memcmp(g_types[i].name, s, n) == 0) return &g_types[i];
  return NULL;
}

static const char *type_name(int32_t t) {
  const type_info *ti = type_lookup(t);
  if (ti) return ti->name;
  if (t == PJRT_Buffer_Type_TOKEN) return "token";
  return "invalid";
}

#define MAX_RANK 16
#define MAX_ELEMENTS ((int64_t)1 << 40)

/* Number of elements of dims, or -1 if a dimension is negative/too large. */
static int64_t num_elements(const int64_t *dims, size_t n) {
  int64_t e = 1;
  for (size_t i = 0; i < n; i++) {
    if (dims[i] < 0) return -1;
    if (dims[i] != 0 && e > MAX_ELEMENTS / dims[i]) return -1;
    e *= dims[i];
  }
  return e;
}

static void shape_str(char *buf, size_t cap, int32_t type, const int64_t *dims, size_t n) {
  sbuf b = {0};
  sb_printf(&b, "%s[", type_name(type));
  for (size_t i = 0; i < n; i++) sb_printf(&b, "%s%" PRId64, i ? "," : "", dims[i]);
  sb_puts(&b, "]");
  snprintf(buf, cap, "%s", b.p);
  free(b.p);
}

/* True if layout (may be NULL) is the dense row-major layout for rank n. */
static bool layout_is_default(const PJRT_Buffer_MemoryLayout *l, int32_t type, const int64_t *dims, size_t n) {
  if (!l) return true;
  if (l->type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    const int64_t *m2m = (const int64_t *)l->tiled.minor_to_major;
    if (l->tiled.num_tiles != 0) return false;
    if (l->tiled.minor_to_major_size != n) return false;
    for (size_t i = 0; i < n; i++)
      if (!m2m || m2m[i] != (int64_t)(n - 1 - i)) return false;
    return true;
  }
  if (l->type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    const int64_t *st = (const int64_t *)l->strides.byte_strides;
    if (l->strides.num_byte_strides != n) return false;
    const type_info *ti = type_lookup(type);
    int64_t s = ti ? (int64_t)ti->size : 1;
    for (size_t i = n; i-- > 0;) {
      if (!st || (dims[i] > 1 && st[i] != s)) return false;
      s *= dims[i];
    }
    return true;
  }
  return false;
}

/* Copies a strided host array into a dense row-major destination. */
static void strided_copy(char *dst, const char *src, size_t esize, const int64_t *dims, const int64_t *strides,
                         size_t n) {
  int64_t total = num_elements(dims, n);
  if (total <= 0) return;
  int64_t idx[MAX_RANK] = {0};
  for (int64_t k = 0; k < total; k++) {
    int64_t off = 0;
    for (size_t d = 0; d < n; d++) off += idx[d] * strides[d];
    memcpy(dst + (size_t)k * esize, src + off, esize);
    for (size_t d = n; d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

/* ------------------------------------------------------------------------- */
/* Buffers                                                                   */
/* ------------------------------------------------------------------------- */

enum { ST_OWNED, ST_ZERO_COPY, ST_VIEW };

/* The bytes of a buffer; refcounted because pending work may outlive it. */
typedef struct storage {
  _Atomic int refs;
  int kind;
  void *data;
  size_t size;
  conf_device *dev;      /* accounted in dev's memory stats (ST_OWNED) */
  conf_client *client;   /* reference */
  conf_event *done;      /* ST_ZERO_COPY: done_with_host_buffer */
  void (*on_delete)(void *device_buffer_ptr, void *user_arg); /* ST_VIEW */
  void *on_delete_arg;
} storage;

static storage *storage_new(conf_client *c, conf_device *dev, size_t size) {
  storage *s = xcalloc(1, sizeof(*s));
  atomic_init(&s->refs, 1);
  s->kind = ST_OWNED;
  s->data = xcalloc(1, size ? size : 1);
  s->size = size;
  s->dev = dev;
  s->client = client_ref(c);
  int64_t now = atomic_fetch_add(&dev->bytes_in_use, (int64_t)size) + (int64_t)size;
  int64_t peak = atomic_load(&dev->peak_bytes_in_use);
  while (now > peak && !atomic_compare_exchange_weak(&dev->peak_bytes_in_use, &peak, now)) {
  }
  atomic_fetch_add(&dev->num_allocs, 1);
  int64_t largest = atomic_load(&dev->largest_alloc);
  while ((int64_t)size > largest && !atomic_compare_exchange_weak(&dev->largest_alloc, &largest, (int64_t)size)) {
  }
  live_add(LK_storage, 1);
  return s;
}

static storage *storage_external(conf_client *c, int kind, void *data, size_t size) {
  storage *s = xcalloc(1, sizeof(*s));
  atomic_init(&s->refs, 1);
  s->kind = kind;
  s->data = data;
  s->size = size;
  s->client = client_ref(c);
  live_add(LK_storage, 1);
  return s;
}

static storage *storage_ref(storage *s) {
  atomic_fetch_add(&s->refs, 1);
  return s;
}

static void storage_unref(storage *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
  switch (s->kind) {
    case ST_OWNED:
      atomic_fetch_sub(&s->dev->bytes_in_use, (int64_t)s->size);
      free(s->data);
      break;
    case ST_ZERO_COPY:
      count(C_zero_copy_released);
      if (s->done) {
        event_complete(s->done, 0, NULL);
        event_unref(s->done);
      }
      break;
    case ST_VIEW:
      count(C_view_on_delete_calls);
      if (s->on_delete) s->on_delete(s->data, s->on_delete_arg);
      break;
  }
  client_unref(s->client);
  free(s);
  live_add(LK_storage, -1);
}

typedef struct conf_buffer {
  uint32_t magic;
  uint64_t id;
  conf_client *client; /* reference */
  conf_device *dev;
  conf_memory *mem;
  int32_t type;
  size_t ndims;
  int64_t dims[MAX_RANK];
  int64_t m2m[MAX_RANK];
  size_t nbytes;
  char shape[160];
  pthread_mutex_t mu;
  bool deleted;
  storage *st;       /* NULL once deleted */
  conf_event *ready; /* internal: completes when the data is defined */
  _Atomic int64_t ext_refs;
} conf_buffer;

static _Atomic uint64_t g_next_buffer_id = 1;

/* Takes ownership of st's and ready's references. */
static conf_buffer *buffer_new(conf_client *c, conf_memory *mem, int32_t type, const int64_t *dims, size_t ndims,
                               storage *st, conf_event *ready) {
  conf_buffer *b = xcalloc(1, sizeof(*b));
  b->magic = MAGIC_BUFFER;
  b->id = atomic_fetch_add(&g_next_buffer_id, 1);
  b->client = client_ref(c);
  b->mem = mem;
  b->dev = mem->dev;
  b->type = type;
  b->ndims = ndims;
  for (size_t i = 0; i < ndims; i++) {
    b->dims[i] = dims[i];
    b->m2m[i] = (int64_t)(ndims - 1 - i);
  }
  const type_info *ti = type_lookup(type);
  b->nbytes = (size_t)num_elements(dims, ndims) * (ti ? ti->size : 0);
  shape_str(b->shape, sizeof(b->shape), type, dims, ndims);
  pthread_mutex_init(&b->mu, NULL);
  b->st = st;
  b->ready = ready;
  live_add(LK_buffer, 1);
  return b;
}

static PJRT_Error *get_buffer(const char *fn, void *p, conf_buffer **out) {
  conf_buffer *b = p;
  if (!b || b->magic != MAGIC_BUFFER) return bad_handle(fn, "PJRT_Buffer", p);
  *out = b;
  return NULL;
}

static PJRT_Error *deleted_error(const char *fn, const conf_buffer *b) {
  return err_new(PJRT_Error_Code_FAILED_PRECONDITION, "%s: buffer #%" PRIu64 " (%s on device %d) has been deleted", fn,
                 b->id, b->shape, b->dev->index);
}

/* Takes a reference to b's storage (and optionally its ready event). */
static PJRT_Error *buffer_use(const char *fn, conf_buffer *b, storage **st, conf_event **ready) {
  pthread_mutex_lock(&b->mu);
  if (b->deleted) {
    pthread_mutex_unlock(&b->mu);
    return deleted_error(fn, b);
  }
  if (st) *st = storage_ref(b->st);
  if (ready) *ready = event_ref(b->ready);
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

static void buffer_delete(conf_buffer *b) {
  pthread_mutex_lock(&b->mu);
  storage *st = b->deleted ? NULL : b->st;
  b->deleted = true;
  b->st = NULL;
  pthread_mutex_unlock(&b->mu);
  storage_unref(st);
}

static conf_memory *memory_for(conf_device *d, conf_memory *m) { return m ? m : &d->mem[MEM_DEVICE]; }

static PJRT_Error *impl_PJRT_Buffer_Destroy(PJRT_Buffer_Destroy_Args *args) {
  CHECK_ARGS(PJRT_Buffer_Destroy_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  buffer_delete(b);
  b->magic = MAGIC_DEAD;
  event_unref(b->ready);
  client_unref(b->client);
  pthread_mutex_destroy(&b->mu);
  free(b);
  live_add(LK_buffer, -1);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_Delete(PJRT_Buffer_Delete_Args *args) {
  CHECK_ARGS(PJRT_Buffer_Delete_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  buffer_delete(b);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_IsDeleted(PJRT_Buffer_IsDeleted_Args *args) {
  CHECK_ARGS(PJRT_Buffer_IsDeleted_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  pthread_mutex_lock(&b->mu);
  args->is_deleted = b->deleted;
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_ElementType(PJRT_Buffer_ElementType_Args *args) {
  CHECK_ARGS(PJRT_Buffer_ElementType_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  args->type = b->type;
  if (atomic_load(&g_token_outputs) && b->type == PJRT_Buffer_Type_S32) args->type = PJRT_Buffer_Type_TOKEN;
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args *args) {
  CHECK_ARGS(PJRT_Buffer_Dimensions_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  args->dims = (void *)b->dims;
  args->num_dims = b->ndims;
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_UnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args *args) {
  CHECK_ARGS(PJRT_Buffer_UnpaddedDimensions_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  args->unpadded_dims = (void *)b->dims;
  args->num_dims = b->ndims;
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_DynamicDimensionIndices(PJRT_Buffer_DynamicDimensionIndices_Args *args) {
  CHECK_ARGS(PJRT_Buffer_DynamicDimensionIndices_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  args->dynamic_dim_indices = NULL;
  args->num_dynamic_dims = 0;
  return NULL;
}

static void fill_default_layout(PJRT_Buffer_MemoryLayout *l, const int64_t *m2m, size_t n) {
  memset(l, 0, sizeof(*l));
  l->struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  l->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  l->tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  l->tiled.minor_to_major = (void *)m2m;
  l->tiled.minor_to_major_size = n;
  l->tiled.tile_dims = NULL;
  l->tiled.tile_dim_sizes = NULL;
  l->tiled.num_tiles = 0;
}

static PJRT_Error *impl_PJRT_Buffer_GetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args *args) {
  CHECK_ARGS(PJRT_Buffer_GetMemoryLayout_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  fill_default_layout(&args->layout, b->m2m, b->ndims);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_OnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args *args) {
  CHECK_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  if ((err = buffer_use(FN, b, NULL, NULL))) return err;
  args->on_device_size_in_bytes = b->nbytes;
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_Device(PJRT_Buffer_Device_Args *args) {
  CHECK_ARGS(PJRT_Buffer_Device_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  args->device = (void *)b->dev;
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_Memory(PJRT_Buffer_Memory_Args *args) {
  CHECK_ARGS(PJRT_Buffer_Memory_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  args->memory = (void *)b->mem;
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_IsOnCpu(PJRT_Buffer_IsOnCpu_Args *args) {
  CHECK_ARGS(PJRT_Buffer_IsOnCpu_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  args->is_on_cpu = true;
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args *args) {
  CHECK_ARGS(PJRT_Buffer_ReadyEvent_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  conf_event *ready = NULL;
  if ((err = buffer_use(FN, b, NULL, &ready))) return err;
  args->event = (void *)event_chain_user(ready);
  event_unref(ready);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_UnsafePointer(PJRT_Buffer_UnsafePointer_Args *args) {
  CHECK_ARGS(PJRT_Buffer_UnsafePointer_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  storage *st = NULL;
  if ((err = buffer_use(FN, b, &st, NULL))) return err;
  args->buffer_pointer = (uintptr_t)st->data;
  storage_unref(st);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_OpaqueDeviceMemoryDataPointer(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args *args) {
  CHECK_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  storage *st = NULL;
  if ((err = buffer_use(FN, b, &st, NULL))) return err;
  args->device_memory_ptr = st->data;
  storage_unref(st);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_IncreaseExternalReferenceCount(
    PJRT_Buffer_IncreaseExternalReferenceCount_Args *args) {
  CHECK_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  if ((err = buffer_use(FN, b, NULL, NULL))) return err;
  atomic_fetch_add(&b->ext_refs, 1);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_DecreaseExternalReferenceCount(
    PJRT_Buffer_DecreaseExternalReferenceCount_Args *args) {
  CHECK_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  int64_t cur = atomic_load(&b->ext_refs);
  do {
    if (cur <= 0)
      return err_new(PJRT_Error_Code_FAILED_PRECONDITION,
                     "PJRT_Buffer_DecreaseExternalReferenceCount: buffer #%" PRIu64
                     " has no external references (more decreases than increases)",
                     b->id);
  } while (!atomic_compare_exchange_weak(&b->ext_refs, &cur, cur - 1));
  return NULL;
}

/* Host -> device transfers */

typedef struct h2d_job {
  storage *st;
  const char *src;
  size_t esize;
  size_t ndims;
  int64_t dims[MAX_RANK];
  int64_t strides[MAX_RANK];
  bool strided;
  conf_event *done;  /* done_with_host_buffer */
  conf_event *ready; /* buffer ready */
} h2d_job;

static void h2d_run(void *p) {
  h2d_job *j = p;
  if (j->strided)
    strided_copy(j->st->data, j->src, j->esize, j->dims, j->strides, j->ndims);
  else if (j->st->size)
    memcpy(j->st->data, j->src, j->st->size);
  event_complete(j->done, 0, NULL);
  event_complete(j->ready, 0, NULL);
  event_unref(j->done);
  event_unref(j->ready);
  storage_unref(j->st);
  free(j);
}

static PJRT_Error *resolve_target(const char *fn, conf_client *c, void *devp, void *memp, conf_memory **out) {
  conf_device *d = NULL;
  conf_memory *m = NULL;
  PJRT_Error *err;
  if (devp && (err = get_device(fn, devp, &d))) return err;
  if (memp && (err = get_memory(fn, memp, &m))) return err;
  if (!d && !m) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: neither device nor memory is set", fn);
  if (d && m && m->dev != d)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: memory %d is not attached to device %d", fn, m->id,
                   d->index);
  conf_memory *r = m ? m : memory_for(d, NULL);
  if (r->dev->client != c)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: the target device belongs to another PJRT_Client", fn);
  *out = r;
  return NULL;
}

static PJRT_Error *check_shape(const char *fn, int32_t type, const int64_t *dims, size_t ndims, size_t *nbytes) {
  const type_info *ti = type_lookup(type);
  if (!ti)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: unsupported element type %d (%s)", fn, (int)type,
                   type_name(type));
  if (ndims > MAX_RANK)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: rank %zu exceeds the conformance plugin's limit of %d", fn,
                   ndims, MAX_RANK);
  if (ndims && !dims) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: dims is NULL but num_dims is %zu", fn, ndims);
  int64_t e = num_elements(dims, ndims);
  if (e < 0) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: invalid dimensions", fn);
  *nbytes = (size_t)e * ti->size;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_BufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args *args) {
  CHECK_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  count(C_buffer_from_host);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  conf_memory *mem = NULL;
  if ((err = resolve_target(FN, c, args->device, args->memory, &mem))) return err;
  const int64_t *dims = (const int64_t *)args->dims;
  size_t nbytes;
  if ((err = check_shape(FN, args->type, dims, args->num_dims, &nbytes))) return err;
  if (nbytes && !args->data) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: data is NULL", FN);
  if (!layout_is_default((const PJRT_Buffer_MemoryLayout *)args->device_layout, args->type, dims, args->num_dims))
    return err_new(PJRT_Error_Code_UNIMPLEMENTED,
                   "%s: device_layout other than the default row-major layout is not supported by the conformance "
                   "plugin",
                   FN);
  const int64_t *strides = (const int64_t *)args->byte_strides;
  if (strides && args->num_byte_strides != args->num_dims)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: num_byte_strides (%zu) must equal num_dims (%zu)", FN,
                   args->num_byte_strides, args->num_dims);
  size_t esize = type_lookup(args->type)->size;
  bool strided = false;
  if (strides) {
    int64_t s = (int64_t)esize;
    for (size_t i = args->num_dims; i-- > 0;) {
      if (dims[i] > 1 && strides[i] != s) strided = true;
      s *= dims[i];
    }
  }
  int32_t sem = args->host_buffer_semantics;
  if (sem < PJRT_HostBufferSemantics_kImmutableOnlyDuringCall || sem > PJRT_HostBufferSemantics_kMutableZeroCopy)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: unknown host_buffer_semantics %d", FN, (int)sem);

  conf_event *done = event_new(true);
  conf_event *ready = event_new(false);
  storage *st = NULL;
  if ((sem == PJRT_HostBufferSemantics_kImmutableZeroCopy || sem == PJRT_HostBufferSemantics_kMutableZeroCopy) &&
      !strided && nbytes) {
    /* Zero copy: the host memory is the buffer; released when the buffer is. */
    st = storage_external(c, ST_ZERO_COPY, (void *)args->data, nbytes);
    st->done = event_ref(done);
    event_complete(ready, 0, NULL);
  } else if (sem == PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes) {
    st = storage_new(c, mem->dev, nbytes);
    h2d_job *j = xcalloc(1, sizeof(*j));
    j->st = storage_ref(st);
    j->src = args->data;
    j->esize = esize;
    j->ndims = args->num_dims;
    for (size_t i = 0; i < args->num_dims; i++) {
      j->dims[i] = dims[i];
      j->strides[i] = strides ? strides[i] : 0;
    }
    j->strided = strided;
    j->done = event_ref(done);
    j->ready = event_ref(ready);
    enqueue(h2d_run, j);
  } else {
    /* kImmutableOnlyDuringCall (and zero-copy requests that need a copy). */
    st = storage_new(c, mem->dev, nbytes);
    if (strided)
      strided_copy(st->data, args->data, esize, dims, strides, args->num_dims);
    else if (nbytes)
      memcpy(st->data, args->data, nbytes);
    event_complete(done, 0, NULL);
    event_complete(ready, 0, NULL);
  }
  args->done_with_host_buffer = (void *)done;
  args->buffer = (void *)buffer_new(c, mem, args->type, dims, args->num_dims, st, ready);
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_CreateUninitializedBuffer(PJRT_Client_CreateUninitializedBuffer_Args *args) {
  CHECK_ARGS(PJRT_Client_CreateUninitializedBuffer_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  conf_memory *mem = NULL;
  if ((err = resolve_target(FN, c, args->device, args->memory, &mem))) return err;
  const int64_t *dims = (const int64_t *)args->shape_dims;
  size_t nbytes;
  if ((err = check_shape(FN, args->shape_element_type, dims, args->shape_num_dims, &nbytes))) return err;
  if (!layout_is_default((const PJRT_Buffer_MemoryLayout *)args->shape_layout, args->shape_element_type, dims,
                         args->shape_num_dims))
    return err_new(PJRT_Error_Code_UNIMPLEMENTED, "%s: only the default layout is supported", FN);
  conf_event *ready = event_new(false);
  event_complete(ready, 0, NULL);
  args->buffer = (void *)buffer_new(c, mem, args->shape_element_type, dims, args->shape_num_dims,
                                    storage_new(c, mem->dev, nbytes), ready);
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_CreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args *args) {
  CHECK_ARGS(PJRT_Client_CreateErrorBuffer_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  conf_memory *mem = NULL;
  if ((err = resolve_target(FN, c, NULL, args->memory, &mem))) return err;
  const int64_t *dims = (const int64_t *)args->shape_dims;
  size_t nbytes;
  if ((err = check_shape(FN, args->shape_element_type, dims, args->shape_num_dims, &nbytes))) return err;
  if (args->error_code == 0)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: error_code must not be OK", FN);
  char *msg = xstrndup(args->error_message ? (const char *)args->error_message : "",
                       args->error_message ? args->error_message_size : 0);
  conf_event *ready = event_new(false);
  event_complete(ready, args->error_code, msg);
  free(msg);
  args->buffer = (void *)buffer_new(c, mem, args->shape_element_type, dims, args->shape_num_dims,
                                    storage_new(c, mem->dev, nbytes), ready);
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_CreateViewOfDeviceBuffer(PJRT_Client_CreateViewOfDeviceBuffer_Args *args) {
  CHECK_ARGS(PJRT_Client_CreateViewOfDeviceBuffer_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  conf_memory *mem = NULL;
  if ((err = resolve_target(FN, c, args->device, args->memory, &mem))) return err;
  const int64_t *dims = (const int64_t *)args->dims;
  size_t nbytes;
  if ((err = check_shape(FN, args->element_type, dims, args->num_dims, &nbytes))) return err;
  if (!args->device_buffer_ptr && nbytes)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: device_buffer_ptr is NULL", FN);
  if (!layout_is_default((const PJRT_Buffer_MemoryLayout *)args->layout, args->element_type, dims, args->num_dims))
    return err_new(PJRT_Error_Code_UNIMPLEMENTED, "%s: only the default layout is supported", FN);
  storage *st = storage_external(c, ST_VIEW, args->device_buffer_ptr, nbytes);
  st->on_delete = (void (*)(void *, void *))args->on_delete_callback;
  st->on_delete_arg = args->on_delete_callback_arg;
  conf_event *ready = event_new(false);
  event_complete(ready, 0, NULL);
  args->buffer = (void *)buffer_new(c, mem, args->element_type, dims, args->num_dims, st, ready);
  return NULL;
}

/* Device -> host and device -> device copies */

typedef struct copy_job {
  storage *src;
  char *dst;         /* host destination, or NULL */
  storage *dst_st;   /* device destination, or NULL */
  size_t offset, size;
  conf_event *done;  /* completes after the copy (user event or dst ready) */
} copy_job;

static void copy_run(void *p, int32_t code, const char *msg) {
  copy_job *j = p;
  if (code == 0) {
    if (j->dst && j->size) memcpy(j->dst, (char *)j->src->data + j->offset, j->size);
    if (j->dst_st && j->size) memcpy(j->dst_st->data, (char *)j->src->data + j->offset, j->size);
  }
  event_complete(j->done, code, msg);
  event_unref(j->done);
  storage_unref(j->src);
  storage_unref(j->dst_st);
  free(j);
}

static PJRT_Error *impl_PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args *args) {
  CHECK_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  count(C_to_host_buffer);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->src, &b);
  if (err) return err;
  if (!layout_is_default((const PJRT_Buffer_MemoryLayout *)args->host_layout, b->type, b->dims, b->ndims))
    return err_new(PJRT_Error_Code_UNIMPLEMENTED,
                   "%s: host_layout other than the default row-major layout is not supported by the conformance plugin",
                   FN);
  if (!args->dst) {
    if ((err = buffer_use(FN, b, NULL, NULL))) return err;
    args->dst_size = b->nbytes;
    args->event = NULL;
    return NULL;
  }
  if (args->dst_size < b->nbytes)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: dst_size %zu is smaller than the %zu bytes of buffer #%" PRIu64 " (%s)", FN, args->dst_size,
                   b->nbytes, b->id, b->shape);
  storage *st = NULL;
  conf_event *ready = NULL;
  if ((err = buffer_use(FN, b, &st, &ready))) return err;
  copy_job *j = xcalloc(1, sizeof(*j));
  j->src = st;
  j->dst = args->dst;
  j->size = b->nbytes;
  conf_event *ev = event_new(true);
  j->done = event_ref(ev);
  run_after(&ready, 1, copy_run, j);
  event_unref(ready);
  args->event = (void *)ev;
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_CopyRawToHost(PJRT_Buffer_CopyRawToHost_Args *args) {
  CHECK_ARGS(PJRT_Buffer_CopyRawToHost_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  if (args->offset < 0 || args->transfer_size < 0 || (uint64_t)args->offset + (uint64_t)args->transfer_size > b->nbytes)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: range [%" PRId64 ", %" PRId64 ") is outside the %zu bytes of buffer #%" PRIu64, FN,
                   args->offset, args->offset + args->transfer_size, b->nbytes, b->id);
  if (!args->dst && args->transfer_size) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: dst is NULL", FN);
  storage *st = NULL;
  conf_event *ready = NULL;
  if ((err = buffer_use(FN, b, &st, &ready))) return err;
  copy_job *j = xcalloc(1, sizeof(*j));
  j->src = st;
  j->dst = args->dst;
  j->offset = (size_t)args->offset;
  j->size = (size_t)args->transfer_size;
  conf_event *ev = event_new(true);
  j->done = event_ref(ev);
  run_after(&ready, 1, copy_run, j);
  event_unref(ready);
  args->event = (void *)ev;
  return NULL;
}

static PJRT_Error *copy_to(const char *fn, conf_buffer *b, conf_memory *dst_mem, void **out) {
  if (dst_mem->dev->client != b->client)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: the destination belongs to another PJRT_Client", fn);
  storage *st = NULL;
  conf_event *ready = NULL;
  PJRT_Error *err;
  if ((err = buffer_use(fn, b, &st, &ready))) return err;
  storage *dst = storage_new(b->client, dst_mem->dev, b->nbytes);
  conf_event *dst_ready = event_new(false);
  copy_job *j = xcalloc(1, sizeof(*j));
  j->src = st;
  j->dst_st = storage_ref(dst);
  j->size = b->nbytes;
  j->done = event_ref(dst_ready);
  run_after(&ready, 1, copy_run, j);
  event_unref(ready);
  *out = (void *)buffer_new(b->client, dst_mem, b->type, b->dims, b->ndims, dst, dst_ready);
  return NULL;
}

static PJRT_Error *impl_PJRT_Buffer_CopyToDevice(PJRT_Buffer_CopyToDevice_Args *args) {
  CHECK_ARGS(PJRT_Buffer_CopyToDevice_Args);
  conf_buffer *b = NULL;
  conf_device *d = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  if ((err = get_device(FN, args->dst_device, &d))) return err;
  return copy_to(FN, b, memory_for(d, NULL), &args->dst_buffer);
}

static PJRT_Error *impl_PJRT_Buffer_CopyToMemory(PJRT_Buffer_CopyToMemory_Args *args) {
  CHECK_ARGS(PJRT_Buffer_CopyToMemory_Args);
  conf_buffer *b = NULL;
  conf_memory *m = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  if ((err = get_memory(FN, args->dst_memory, &m))) return err;
  return copy_to(FN, b, m, &args->dst_buffer);
}

/* ------------------------------------------------------------------------- */
/* Programs: the "// conformance:" directive                                 */
/* ------------------------------------------------------------------------- */

enum { OP_ADD, OP_IDENTITY, OP_FAIL, OP_FFI };
#define MAX_VALUES 64
#define MAX_NAME 128

typedef struct tyspec {
  int32_t type;
  size_t ndims;
  int64_t dims[MAX_RANK];
  size_t nbytes;
} tyspec;

/* An FFI attribute given by a directive option attr.NAME=TYPE:VALUE. */
#define MAX_ATTRS 16
enum { ATTR_ARRAY = 1, ATTR_SCALAR = 3, ATTR_STRING = 4 }; /* XLA_FFI_AttrType */
typedef struct ffi_attr {
  char name[64];
  int kind;
  int32_t dtype; /* XLA_FFI_DataType of a scalar or array */
  union {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    bool b;
  } v;
  int64_t arr[MAX_VALUES];
  size_t arr_len;
  char str[128];
  size_t str_len;
} ffi_attr;

typedef struct program {
  _Atomic int refs;
  char *text; /* the program bytes as given (NUL-terminated copy) */
  size_t len;
  char format[16];
  int op;
  char op_text[MAX_NAME + 8];
  char ffi_name[MAX_NAME];
  int nin, nout;
  tyspec in[MAX_VALUES];
  tyspec out[MAX_VALUES];
  int nattrs;
  ffi_attr attrs[MAX_ATTRS]; /* sorted by name, as XLA passes them */
  int replicas, partitions;
  int portable; /* portable=1: no device assignment (GetDeviceAssignment gives 0 bytes) */
  char name[MAX_NAME + 32];
  char fingerprint[17];
  char *options; /* compile options bytes */
  size_t options_len;
  /* Arrays handed out by the PJRT_Executable_* queries. */
  int32_t out_types[MAX_VALUES];
  int64_t out_dims_flat[MAX_VALUES * MAX_RANK + 1];
  size_t out_dim_sizes[MAX_VALUES];
  const char *out_kinds[MAX_VALUES];
  size_t out_kind_sizes[MAX_VALUES];
  const char *in_kinds[MAX_VALUES];
  size_t in_kind_sizes[MAX_VALUES];
  PJRT_NamedValue cost[2];
} program;

static program *program_ref(program *p) {
  atomic_fetch_add(&p->refs, 1);
  return p;
}

static void program_unref(program *p) {
  if (!p || atomic_fetch_sub(&p->refs, 1) != 1) return;
  free(p->text);
  free(p->options);
  free(p);
  live_add(LK_program, -1);
}

static const char g_directive_help[] =
    "expected a line like `// conformance: add f32[4] f32[4] -> f32[4]` (ops: add, identity, fail, ffi:<target>)";

static bool parse_type(const char *tok, tyspec *t) {
  const char *br = strchr(tok, '[');
  if (!br) return false;
  const type_info *ti = type_by_name(tok, (size_t)(br - tok));
  if (!ti) return false;
  size_t len = strlen(tok);
  if (tok[len - 1] != ']') return false;
  t->type = ti->type;
  t->ndims = 0;
  const char *p = br + 1;
  if (*p == ']') {
    if (p[1] != 0) return false;
  } else {
    for (;;) {
      if (*p < '0' || *p > '9') return false;
      char *end;
      long long v = strtoll(p, &end, 10);
      if (t->ndims >= MAX_RANK || v < 0) return false;
      t->dims[t->ndims++] = v;
      p = end;
      if (*p == ',') {
        p++;
        continue;
      }
      if (*p == ']' && p[1] == 0) break;
      return false;
    }
  }
  int64_t e = num_elements(t->dims, t->ndims);
  if (e < 0) return false;
  t->nbytes = (size_t)e * ti->size;
  return true;
}

static bool same_type(const tyspec *a, const tyspec *b) {
  if (a->type != b->type || a->ndims != b->ndims) return false;
  for (size_t i = 0; i < a->ndims; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

static bool add_supported(int32_t t) {
  switch (t) {
    case PJRT_Buffer_Type_F32:
    case PJRT_Buffer_Type_F64:
    case PJRT_Buffer_Type_S8:
    case PJRT_Buffer_Type_S16:
    case PJRT_Buffer_Type_S32:
    case PJRT_Buffer_Type_S64:
    case PJRT_Buffer_Type_U8:
    case PJRT_Buffer_Type_U16:
    case PJRT_Buffer_Type_U32:
    case PJRT_Buffer_Type_U64:
      return true;
    default:
      return false;
  }
}

/* Parses the directive of code[0:len] into p; on error writes err. */
/* Parses "NAME=TYPE:VALUE" (after "attr.") into a; TYPE is i32, i64, f32, f64,
 * pred, str or i64s (a comma-separated array). */
static bool parse_attr(const char *t, ffi_attr *a) {
  memset(a, 0, sizeof(*a));
  const char *eq = strchr(t, '=');
  if (!eq || eq == t || (size_t)(eq - t) >= sizeof(a->name)) return false;
  memcpy(a->name, t, (size_t)(eq - t));
  const char *ty = eq + 1;
  const char *colon = strchr(ty, ':');
  if (!colon) return false;
  size_t tl = (size_t)(colon - ty);
  const char *val = colon + 1;
  char *end = NULL;
  if (tl == 3 && memcmp(ty, "str", 3) == 0) {
    a->kind = ATTR_STRING;
    a->str_len = strlen(val);
    if (a->str_len >= sizeof(a->str)) return false;
    memcpy(a->str, val, a->str_len);
    return true;
  }
  if (tl == 4 && memcmp(ty, "i64s", 4) == 0) {
    a->kind = ATTR_ARRAY;
    a->dtype = 5; /* S64 */
    while (*val) {
      if (a->arr_len == MAX_VALUES) return false;
      a->arr[a->arr_len++] = strtoll(val, &end, 10);
      if (end == val || (*end && *end != ',')) return false;
      val = *end ? end + 1 : end;
    }
    return true;
  }
  a->kind = ATTR_SCALAR;
  if (tl == 3 && memcmp(ty, "i32", 3) == 0) {
    a->dtype = 4;
    a->v.i32 = (int32_t)strtol(val, &end, 10);
  } else if (tl == 3 && memcmp(ty, "i64", 3) == 0) {
    a->dtype = 5;
    a->v.i64 = strtoll(val, &end, 10);
  } else if (tl == 3 && memcmp(ty, "f32", 3) == 0) {
    a->dtype = 11;
    a->v.f32 = strtof(val, &end);
  } else if (tl == 3 && memcmp(ty, "f64", 3) == 0) {
    a->dtype = 12;
    a->v.f64 = strtod(val, &end);
  } else if (tl == 4 && memcmp(ty, "pred", 4) == 0) {
    a->dtype = 1;
    if (strcmp(val, "true") == 0) {
      a->v.b = true;
    } else if (strcmp(val, "false") != 0) {
      return false;
    }
    return true;
  } else {
    return false;
  }
  return end != val && *end == 0;
}

static int attr_cmp(const void *x, const void *y) {
  return strcmp(((const ffi_attr *)x)->name, ((const ffi_attr *)y)->name);
}

static bool parse_directive(const char *code, size_t len, program *p, char *err, size_t errcap) {
  bool bytecode = len >= 4 && memcmp(code, "ML\xefR", 4) == 0;
  static const char marker[] = "// conformance:";
  const char *m = memmem(code, len, marker, sizeof(marker) - 1);
  size_t mlen = sizeof(marker) - 1;
  if (!m && bytecode) {
    m = memmem(code, len, "conformance:", 12);
    mlen = 12;
  }
  if (!m) {
    snprintf(err, errcap, "program has no conformance directive (%s)", g_directive_help);
    return false;
  }
  const char *s = m + mlen;
  const char *end = code + len;
  char line[4096];
  size_t n = 0;
  while (s < end && n + 1 < sizeof(line)) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '\n' || ch == '\r' || ch == 0 || (ch < 0x20 && ch != '\t') || ch >= 0x7f || ch == '"') break;
    line[n++] = (char)ch;
    s++;
  }
  line[n] = 0;

  char *toks[2 * MAX_VALUES + 16];
  int nt = 0;
  for (char *save = NULL, *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
    if (nt == (int)(sizeof(toks) / sizeof(toks[0]))) {
      snprintf(err, errcap, "malformed conformance directive: too many tokens");
      return false;
    }
    toks[nt++] = t;
  }
  if (nt == 0) {
    snprintf(err, errcap, "malformed conformance directive: missing op (%s)", g_directive_help);
    return false;
  }
  const char *op = toks[0];
  if (strcmp(op, "add") == 0) {
    p->op = OP_ADD;
  } else if (strcmp(op, "identity") == 0) {
    p->op = OP_IDENTITY;
  } else if (strcmp(op, "fail") == 0) {
    p->op = OP_FAIL;
  } else if (strncmp(op, "ffi:", 4) == 0 && op[4] && strlen(op + 4) < MAX_NAME) {
    p->op = OP_FFI;
    snprintf(p->ffi_name, sizeof(p->ffi_name), "%s", op + 4);
  } else {
    snprintf(err, errcap, "malformed conformance directive: unknown op \"%s\" (%s)", op, g_directive_help);
    return false;
  }
  snprintf(p->op_text, sizeof(p->op_text), "%s", op);
  int i = 1;
  p->nin = p->nout = 0;
  for (; i < nt && strcmp(toks[i], "->") != 0; i++) {
    if (p->nin == MAX_VALUES || !parse_type(toks[i], &p->in[p->nin])) {
      snprintf(err, errcap, "malformed conformance directive: bad input type \"%s\" (types look like f32[2,3] or s32[])",
               toks[i]);
      return false;
    }
    p->nin++;
  }
  if (i == nt) {
    snprintf(err, errcap, "malformed conformance directive: missing \"->\" (%s)", g_directive_help);
    return false;
  }
  p->replicas = p->partitions = 1;
  for (i++; i < nt; i++) {
    const char *t = toks[i];
    if (strchr(t, '=')) {
      char *endp;
      if (strncmp(t, "replicas=", 9) == 0) {
        long v = strtol(t + 9, &endp, 10);
        if (*endp || v < 1 || v > 1024) goto bad_opt;
        p->replicas = (int)v;
      } else if (strncmp(t, "partitions=", 11) == 0) {
        long v = strtol(t + 11, &endp, 10);
        if (*endp || v < 1 || v > 1024) goto bad_opt;
        p->partitions = (int)v;
      } else if (strcmp(t, "portable=1") == 0) {
        p->portable = 1;
      } else if (strncmp(t, "attr.", 5) == 0 && p->op == OP_FFI) {
        if (p->nattrs == MAX_ATTRS || !parse_attr(t + 5, &p->attrs[p->nattrs])) {
          snprintf(err, errcap,
                   "malformed conformance directive: bad attribute \"%s\" (attr.NAME=TYPE:VALUE with TYPE one of i32, "
                   "i64, f32, f64, pred, str, i64s)",
                   t);
          return false;
        }
        p->nattrs++;
      } else {
        goto bad_opt;
      }
      continue;
    bad_opt:
      snprintf(err, errcap,
               "malformed conformance directive: bad option \"%s\" (options: replicas=R partitions=P portable=1, and "
               "attr.NAME=TYPE:VALUE for ffi ops)",
               t);
      return false;
    }
    if (p->nout == MAX_VALUES || !parse_type(t, &p->out[p->nout])) {
      snprintf(err, errcap, "malformed conformance directive: bad output type \"%s\" (types look like f32[2,3] or s32[])",
               t);
      return false;
    }
    p->nout++;
  }
  qsort(p->attrs, (size_t)p->nattrs, sizeof(ffi_attr), attr_cmp);
  if (p->op == OP_ADD) {
    if (p->nin != 2 || p->nout != 1 || !same_type(&p->in[0], &p->in[1]) || !same_type(&p->in[0], &p->out[0])) {
      snprintf(err, errcap, "malformed conformance directive: add needs two inputs and one output of the same type");
      return false;
    }
    if (!add_supported(p->in[0].type)) {
      snprintf(err, errcap, "malformed conformance directive: add does not support element type %s",
               type_name(p->in[0].type));
      return false;
    }
  }
  if (p->op == OP_IDENTITY) {
    bool ok = p->nin == p->nout;
    for (int k = 0; ok && k < p->nin; k++) ok = same_type(&p->in[k], &p->out[k]);
    if (!ok) {
      snprintf(err, errcap, "malformed conformance directive: identity needs outputs of the same types as its inputs");
      return false;
    }
  }
  return true;
}

/* Builds a program from a PJRT_Program (format checked by the caller). */
static PJRT_Error *program_new(const char *fn, const char *code, size_t len, const char *format, size_t format_len,
                               const char *options, size_t options_len, program **out) {
  if (!code && len) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: program code is NULL", fn);
  program *p = xcalloc(1, sizeof(*p));
  atomic_init(&p->refs, 1);
  live_add(LK_program, 1);
  p->text = xstrndup(code ? code : "", code ? len : 0);
  p->len = code ? len : 0;
  snprintf(p->format, sizeof(p->format), "%.*s", (int)format_len, format);
  char err[1024];
  if (!parse_directive(p->text, p->len, p, err, sizeof(err))) {
    program_unref(p);
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %s", fn, err);
  }
  snprintf(p->name, sizeof(p->name), "conformance_%s", p->op_text);
  snprintf(p->fingerprint, sizeof(p->fingerprint), "%016" PRIx64, fnv1a(p->text, p->len));
  p->options = xmalloc(options_len + 1);
  if (options && options_len) memcpy(p->options, options, options_len);
  p->options_len = options ? options_len : 0;
  size_t flat = 0;
  int64_t out_elems = 0;
  size_t bytes = 0;
  for (int i = 0; i < p->nout; i++) {
    p->out_types[i] = p->out[i].type;
    p->out_dim_sizes[i] = p->out[i].ndims;
    for (size_t d = 0; d < p->out[i].ndims; d++) p->out_dims_flat[flat++] = p->out[i].dims[d];
    p->out_kinds[i] = g_mem_kinds[MEM_DEVICE];
    p->out_kind_sizes[i] = strlen(g_mem_kinds[MEM_DEVICE]);
    out_elems += num_elements(p->out[i].dims, p->out[i].ndims);
    bytes += p->out[i].nbytes;
  }
  for (int i = 0; i < p->nin; i++) {
    p->in_kinds[i] = g_mem_kinds[MEM_DEVICE];
    p->in_kind_sizes[i] = strlen(g_mem_kinds[MEM_DEVICE]);
    bytes += p->in[i].nbytes;
  }
  nv_float(&p->cost[0], "flops", (float)(p->op == OP_ADD ? out_elems : 0));
  nv_float(&p->cost[1], "bytes accessed", (float)bytes);
  *out = p;
  return NULL;
}

static PJRT_Error *program_from_pjrt(const char *fn, const PJRT_Program *prog, const char *options, size_t options_len,
                                     program **out) {
  CHECK_NESTED(PJRT_Program, prog, "program");
  const char *format = (const char *)prog->format;
  size_t flen = format ? prog->format_size : 0;
  if (!((flen == 4 && memcmp(format, "mlir", 4) == 0) || (flen == 3 && memcmp(format, "hlo", 3) == 0)))
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: unsupported program format \"%.*s\" (the conformance plugin accepts \"mlir\" and \"hlo\")", fn,
                   (int)flen, format ? format : "");
  return program_new(fn, (const char *)prog->code, prog->code_size, format, flen, options, options_len, out);
}

/* ------------------------------------------------------------------------- */
/* Executables                                                               */
/* ------------------------------------------------------------------------- */

typedef struct conf_layout {
  uint32_t magic;
  bool owned_by_executable;
  size_t n;
  int64_t m2m[MAX_RANK];
} conf_layout;

typedef struct conf_exec {
  uint32_t magic;
  program *prog;
  pthread_mutex_t mu;
  conf_layout *out_layouts;  /* lazily, Layouts extension */
  void **out_layout_ptrs;
  conf_layout *in_layouts;
  void **in_layout_ptrs;
} conf_exec;

typedef struct conf_loaded {
  uint32_t magic;
  conf_client *client; /* reference */
  program *prog;
  _Atomic bool deleted;
  int ndev;
  void **dev_ptrs;
  PJRT_LogicalDeviceIds *logical_ids;
} conf_loaded;

static conf_exec *exec_new(program *p /* takes the reference */) {
  conf_exec *e = xcalloc(1, sizeof(*e));
  e->magic = MAGIC_EXEC;
  e->prog = p;
  pthread_mutex_init(&e->mu, NULL);
  live_add(LK_executable, 1);
  return e;
}

static PJRT_Error *loaded_new(const char *fn, conf_client *c, program *p /* takes the reference */,
                              conf_loaded **out) {
  int ndev = p->replicas * p->partitions;
  if (ndev > c->n) {
    PJRT_Error *e = err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                            "%s: the program needs replicas*partitions = %d devices but the client has %d", fn, ndev,
                            c->n);
    program_unref(p);
    return e;
  }
  conf_loaded *l = xcalloc(1, sizeof(*l));
  l->magic = MAGIC_LOADED;
  l->client = client_ref(c);
  l->prog = p;
  l->ndev = ndev;
  l->dev_ptrs = xcalloc((size_t)ndev, sizeof(void *));
  l->logical_ids = xcalloc((size_t)ndev, sizeof(PJRT_LogicalDeviceIds));
  for (int k = 0; k < ndev; k++) {
    l->dev_ptrs[k] = &c->devs[k];
    l->logical_ids[k].replica = k / p->partitions;
    l->logical_ids[k].partition = k % p->partitions;
  }
  live_add(LK_loaded_executable, 1);
  *out = l;
  return NULL;
}

static PJRT_Error *get_exec(const char *fn, const void *p, conf_exec **out) {
  conf_exec *e = (conf_exec *)p;
  if (!e || e->magic != MAGIC_EXEC) return bad_handle(fn, "PJRT_Executable", p);
  *out = e;
  return NULL;
}

static PJRT_Error *get_loaded(const char *fn, void *p, conf_loaded **out) {
  conf_loaded *l = p;
  if (!l || l->magic != MAGIC_LOADED) return bad_handle(fn, "PJRT_LoadedExecutable", p);
  *out = l;
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_Compile(PJRT_Client_Compile_Args *args) {
  CHECK_ARGS(PJRT_Client_Compile_Args);
  count(C_compile_calls);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  record_compile_options(args->compile_options, args->compile_options_size);
  program *p = NULL;
  if ((err = program_from_pjrt(FN, (const PJRT_Program *)args->program, (const char *)args->compile_options,
                               args->compile_options_size, &p)))
    return err;
  conf_loaded *l = NULL;
  if ((err = loaded_new(FN, c, p, &l))) return err;
  args->executable = (void *)l;
  return NULL;
}

static PJRT_Error *impl_PJRT_Compile(PJRT_Compile_Args *args) {
  CHECK_ARGS(PJRT_Compile_Args);
  count(C_compile_calls);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology, &t);
  if (err) return err;
  if (args->client) {
    conf_client *c;
    if ((err = get_client(FN, args->client, &c))) return err;
  }
  record_compile_options(args->compile_options, args->compile_options_size);
  program *p = NULL;
  if ((err = program_from_pjrt(FN, (const PJRT_Program *)args->program, (const char *)args->compile_options,
                               args->compile_options_size, &p)))
    return err;
  if (p->replicas * p->partitions > t->n) {
    int need = p->replicas * p->partitions;
    program_unref(p);
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: the program needs replicas*partitions = %d devices but the topology has %d", FN, need, t->n);
  }
  args->executable = (void *)exec_new(p);
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_Load(PJRT_Client_Load_Args *args) {
  CHECK_ARGS(PJRT_Client_Load_Args);
  conf_client *c = NULL;
  conf_exec *e = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  if ((err = get_exec(FN, args->executable, &e))) return err;
  conf_loaded *l = NULL;
  if ((err = loaded_new(FN, c, program_ref(e->prog), &l))) return err;
  args->loaded_executable = (void *)l;
  return NULL;
}

static void layouts_free(conf_layout *ls) { free(ls); }

static PJRT_Error *impl_PJRT_Executable_Destroy(PJRT_Executable_Destroy_Args *args) {
  CHECK_ARGS(PJRT_Executable_Destroy_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  e->magic = MAGIC_DEAD;
  if (e->out_layouts) live_add(LK_layout, -(int64_t)e->prog->nout);
  if (e->in_layouts) live_add(LK_layout, -(int64_t)e->prog->nin);
  program_unref(e->prog);
  layouts_free(e->out_layouts);
  layouts_free(e->in_layouts);
  free(e->out_layout_ptrs);
  free(e->in_layout_ptrs);
  pthread_mutex_destroy(&e->mu);
  free(e);
  live_add(LK_executable, -1);
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_Name(PJRT_Executable_Name_Args *args) {
  CHECK_ARGS(PJRT_Executable_Name_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->executable_name = e->prog->name;
  args->executable_name_size = strlen(e->prog->name);
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_NumReplicas(PJRT_Executable_NumReplicas_Args *args) {
  CHECK_ARGS(PJRT_Executable_NumReplicas_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->num_replicas = (size_t)e->prog->replicas;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_NumPartitions(PJRT_Executable_NumPartitions_Args *args) {
  CHECK_ARGS(PJRT_Executable_NumPartitions_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->num_partitions = (size_t)e->prog->partitions;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_NumOutputs(PJRT_Executable_NumOutputs_Args *args) {
  CHECK_ARGS(PJRT_Executable_NumOutputs_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->num_outputs = (size_t)e->prog->nout;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_SizeOfGeneratedCodeInBytes(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args *args) {
  CHECK_ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->size_in_bytes = (int64_t)e->prog->len;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_GetCostAnalysis(PJRT_Executable_GetCostAnalysis_Args *args) {
  CHECK_ARGS(PJRT_Executable_GetCostAnalysis_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->properties = (void *)e->prog->cost;
  args->num_properties = 2;
  return NULL;
}

static const int32_t g_token_types[16] = {
    PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN,
    PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN,
    PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN,
    PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN, PJRT_Buffer_Type_TOKEN};

static PJRT_Error *impl_PJRT_Executable_OutputElementTypes(PJRT_Executable_OutputElementTypes_Args *args) {
  CHECK_ARGS(PJRT_Executable_OutputElementTypes_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->output_types = (void *)e->prog->out_types;
  args->num_output_types = (size_t)e->prog->nout;
  if (atomic_load(&g_token_outputs) && e->prog->nout <= 16) args->output_types = (void *)g_token_types;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_OutputDimensions(PJRT_Executable_OutputDimensions_Args *args) {
  CHECK_ARGS(PJRT_Executable_OutputDimensions_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  if (atomic_load(&g_no_output_dims)) {
    args->num_outputs = 0;
    args->dims = NULL;
    args->dim_sizes = NULL;
    return NULL;
  }
  args->num_outputs = (size_t)e->prog->nout;
  args->dims = (void *)e->prog->out_dims_flat;
  args->dim_sizes = (void *)e->prog->out_dim_sizes;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_OutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args *args) {
  CHECK_ARGS(PJRT_Executable_OutputMemoryKinds_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->num_outputs = (size_t)e->prog->nout;
  args->memory_kinds = (void *)e->prog->out_kinds;
  args->memory_kind_sizes = (void *)e->prog->out_kind_sizes;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_ParameterMemoryKinds(PJRT_Executable_ParameterMemoryKinds_Args *args) {
  CHECK_ARGS(PJRT_Executable_ParameterMemoryKinds_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->num_parameters = (size_t)e->prog->nin;
  args->memory_kinds = (void *)e->prog->in_kinds;
  args->memory_kind_sizes = (void *)e->prog->in_kind_sizes;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_OptimizedProgram(PJRT_Executable_OptimizedProgram_Args *args) {
  CHECK_ARGS(PJRT_Executable_OptimizedProgram_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  CHECK_NESTED(PJRT_Program, args->program, "program");
  PJRT_Program *prog = args->program;
  prog->format = e->prog->format;
  prog->format_size = strlen(e->prog->format);
  if (!prog->code) {
    prog->code_size = e->prog->len;
    return NULL;
  }
  if (prog->code_size < e->prog->len)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: code_size %zu is smaller than the program's %zu bytes", FN,
                   prog->code_size, e->prog->len);
  memcpy(prog->code, e->prog->text, e->prog->len);
  prog->code_size = e->prog->len;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_Fingerprint(PJRT_Executable_Fingerprint_Args *args) {
  CHECK_ARGS(PJRT_Executable_Fingerprint_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  args->executable_fingerprint = e->prog->fingerprint;
  args->executable_fingerprint_size = strlen(e->prog->fingerprint);
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_GetCompiledMemoryStats(PJRT_Executable_GetCompiledMemoryStats_Args *args) {
  CHECK_ARGS(PJRT_Executable_GetCompiledMemoryStats_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  size_t off = offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, generated_code_size_in_bytes);
  memset((char *)args + off, 0, (size_t)PJRT_Executable_GetCompiledMemoryStats_Args_STRUCT_SIZE - off);
  int64_t in = 0, out = 0;
  for (int i = 0; i < e->prog->nin; i++) in += (int64_t)e->prog->in[i].nbytes;
  for (int i = 0; i < e->prog->nout; i++) out += (int64_t)e->prog->out[i].nbytes;
  args->generated_code_size_in_bytes = (int64_t)e->prog->len;
  args->argument_size_in_bytes = in;
  args->output_size_in_bytes = out;
  args->peak_memory_in_bytes = in + out;
  args->total_size_in_bytes = in + out;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_Serialize(PJRT_Executable_Serialize_Args *args) {
  CHECK_ARGS(PJRT_Executable_Serialize_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  size_t n = 8 + e->prog->len;
  char *buf = xmalloc(n);
  memcpy(buf, "CONFEXEC", 8);
  memcpy(buf + 8, e->prog->text, e->prog->len);
  conf_serialized *s = serialized_new(LK_serialized_executable, buf, n);
  free(buf);
  args->serialized_bytes = s->bytes;
  args->serialized_bytes_size = s->len;
  args->serialized_executable = (void *)s;
  args->serialized_executable_deleter = (void *)serialized_deleter;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_GetCompileOptions(PJRT_Executable_GetCompileOptions_Args *args) {
  CHECK_ARGS(PJRT_Executable_GetCompileOptions_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  conf_serialized *s = serialized_new(LK_serialized_compile_options, e->prog->options, e->prog->options_len);
  args->serialized_bytes = s->bytes;
  args->serialized_bytes_size = s->len;
  args->serialized_compile_options = (void *)s;
  args->serialized_compile_options_deleter = (void *)serialized_deleter;
  return NULL;
}

static PJRT_Error *impl_PJRT_Executable_DeserializeAndLoad(PJRT_Executable_DeserializeAndLoad_Args *args) {
  CHECK_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  const char *bytes = (const char *)args->serialized_executable;
  size_t n = args->serialized_executable_size;
  if (!bytes || n < 8 || memcmp(bytes, "CONFEXEC", 8) != 0)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: not a serialized conformance executable (missing the CONFEXEC header)", FN);
  const char *opts = (const char *)args->overridden_serialized_compile_options;
  size_t opts_len = opts ? args->overridden_serialized_compile_options_size : 0;
  if (opts) record_compile_options(opts, opts_len);
  program *p = NULL;
  if ((err = program_new(FN, bytes + 8, n - 8, "mlir", 4, opts, opts_len, &p))) return err;
  conf_loaded *l = NULL;
  if ((err = loaded_new(FN, c, p, &l))) return err;
  args->loaded_executable = (void *)l;
  return NULL;
}

/* Loaded executables */

static PJRT_Error *impl_PJRT_LoadedExecutable_Destroy(PJRT_LoadedExecutable_Destroy_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_Destroy_Args);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->executable, &l);
  if (err) return err;
  l->magic = MAGIC_DEAD;
  program_unref(l->prog);
  client_unref(l->client);
  free(l->dev_ptrs);
  free(l->logical_ids);
  free(l);
  live_add(LK_loaded_executable, -1);
  return NULL;
}

static PJRT_Error *impl_PJRT_LoadedExecutable_GetExecutable(PJRT_LoadedExecutable_GetExecutable_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->loaded_executable, &l);
  if (err) return err;
  args->executable = (void *)exec_new(program_ref(l->prog));
  return NULL;
}

static PJRT_Error *impl_PJRT_LoadedExecutable_AddressableDevices(PJRT_LoadedExecutable_AddressableDevices_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->executable, &l);
  if (err) return err;
  args->addressable_devices = (void *)l->dev_ptrs;
  args->num_addressable_devices = (size_t)l->ndev;
  return NULL;
}

static PJRT_Error *impl_PJRT_LoadedExecutable_AddressableDeviceLogicalIds(
    PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->executable, &l);
  if (err) return err;
  args->addressable_device_logical_ids = (void *)l->logical_ids;
  args->num_addressable_device_logical_ids = (size_t)l->ndev;
  return NULL;
}

static PJRT_Error *impl_PJRT_LoadedExecutable_Delete(PJRT_LoadedExecutable_Delete_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_Delete_Args);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->executable, &l);
  if (err) return err;
  atomic_store(&l->deleted, true);
  return NULL;
}

static PJRT_Error *impl_PJRT_LoadedExecutable_IsDeleted(PJRT_LoadedExecutable_IsDeleted_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_IsDeleted_Args);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->executable, &l);
  if (err) return err;
  args->is_deleted = atomic_load(&l->deleted);
  return NULL;
}

static PJRT_Error *impl_PJRT_LoadedExecutable_Fingerprint(PJRT_LoadedExecutable_Fingerprint_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_Fingerprint_Args);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->executable, &l);
  if (err) return err;
  args->executable_fingerprint = l->prog->fingerprint;
  args->executable_fingerprint_size = strlen(l->prog->fingerprint);
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Execute contexts and the FFI registries                                   */
/* ------------------------------------------------------------------------- */

typedef struct ud_entry {
  int64_t type_id;
  void *data;
  void (*deleter)(void *);
} ud_entry;

typedef struct exec_ctx {
  uint32_t magic;
  _Atomic int refs;
  _Atomic bool destroyed;
  pthread_mutex_t mu;
  ud_entry *ud;
  size_t nud, cap;
} exec_ctx;

static exec_ctx *ctx_ref(exec_ctx *c) {
  atomic_fetch_add(&c->refs, 1);
  return c;
}

static void ctx_unref(exec_ctx *c) {
  if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
  for (size_t i = 0; i < c->nud; i++) {
    if (c->ud[i].deleter) {
      count(C_ffi_user_data_deleted);
      c->ud[i].deleter(c->ud[i].data);
    }
  }
  c->magic = MAGIC_DEAD;
  free(c->ud);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static PJRT_Error *get_ctx(const char *fn, void *p, exec_ctx **out) {
  exec_ctx *c = p;
  if (!c || c->magic != MAGIC_CONTEXT || atomic_load(&c->destroyed)) return bad_handle(fn, "PJRT_ExecuteContext", p);
  *out = c;
  return NULL;
}

static PJRT_Error *impl_PJRT_ExecuteContext_Create(PJRT_ExecuteContext_Create_Args *args) {
  CHECK_ARGS(PJRT_ExecuteContext_Create_Args);
  exec_ctx *c = xcalloc(1, sizeof(*c));
  c->magic = MAGIC_CONTEXT;
  atomic_init(&c->refs, 1);
  pthread_mutex_init(&c->mu, NULL);
  live_add(LK_execute_context, 1);
  args->context = (void *)c;
  return NULL;
}

static PJRT_Error *impl_PJRT_ExecuteContext_Destroy(PJRT_ExecuteContext_Destroy_Args *args) {
  CHECK_ARGS(PJRT_ExecuteContext_Destroy_Args);
  exec_ctx *c = NULL;
  PJRT_Error *err = get_ctx(FN, args->context, &c);
  if (err) return err;
  atomic_store(&c->destroyed, true);
  live_add(LK_execute_context, -1);
  ctx_unref(c);
  return NULL;
}

/* FFI type registry (shared by PJRT_FFI_Type_Register and XLA_FFI_Type_Register). */
typedef struct type_entry {
  char *name;
  int64_t id;
  void (*deleter)(void *);
} type_entry;

static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static type_entry *g_ffi_types;
static size_t g_ffi_ntypes, g_ffi_types_cap;
static int64_t g_ffi_next_type_id = 1;

/* Returns 0 and sets *id, or an error code with msg. */
static int32_t ffi_type_register(const char *name, size_t len, int64_t *id, void (*deleter)(void *), char *msg,
                                 size_t cap) {
  count(C_ffi_type_registrations);
  pthread_mutex_lock(&g_reg_mu);
  for (size_t i = 0; i < g_ffi_ntypes; i++) {
    type_entry *t = &g_ffi_types[i];
    if (strlen(t->name) == len && memcmp(t->name, name, len) == 0) {
      if (*id == 0) {
        /* As XLA's TypeRegistry::AssignTypeId: a name gets an id once. */
        pthread_mutex_unlock(&g_reg_mu);
        snprintf(msg, cap, "Type name %.*s already registered with type id %" PRId64, (int)len, name, t->id);
        return PJRT_Error_Code_INTERNAL;
      }
      if (*id != t->id) {
        pthread_mutex_unlock(&g_reg_mu);
        snprintf(msg, cap, "FFI type \"%.*s\" is already registered with type id %" PRId64 ", not %" PRId64, (int)len,
                 name, t->id, *id);
        return PJRT_Error_Code_ALREADY_EXISTS;
      }
      *id = t->id;
      if (deleter) t->deleter = deleter;
      pthread_mutex_unlock(&g_reg_mu);
      return 0;
    }
    if (*id != 0 && t->id == *id) {
      pthread_mutex_unlock(&g_reg_mu);
      snprintf(msg, cap, "FFI type id %" PRId64 " is already used by type \"%s\"", *id, t->name);
      return PJRT_Error_Code_ALREADY_EXISTS;
    }
  }
  if (g_ffi_ntypes == g_ffi_types_cap) {
    g_ffi_types_cap = g_ffi_types_cap ? 2 * g_ffi_types_cap : 16;
    g_ffi_types = realloc(g_ffi_types, g_ffi_types_cap * sizeof(type_entry));
    if (!g_ffi_types) abort();
  }
  if (*id == 0) *id = g_ffi_next_type_id++;
  if (*id >= g_ffi_next_type_id) g_ffi_next_type_id = *id + 1;
  g_ffi_types[g_ffi_ntypes++] = (type_entry){xstrndup(name, len), *id, deleter};
  pthread_mutex_unlock(&g_reg_mu);
  return 0;
}

static void (*ffi_type_deleter(int64_t id))(void *) {
  void (*d)(void *) = NULL;
  pthread_mutex_lock(&g_reg_mu);
  for (size_t i = 0; i < g_ffi_ntypes; i++)
    if (g_ffi_types[i].id == id) d = g_ffi_types[i].deleter;
  pthread_mutex_unlock(&g_reg_mu);
  return d;
}

EXPORT const char *conformance_ffi_types(void) {
  sbuf b = {0};
  pthread_mutex_lock(&g_reg_mu);
  for (size_t i = 0; i < g_ffi_ntypes; i++)
    sb_printf(&b, "%s%s=%" PRId64, i ? ";" : "", g_ffi_types[i].name, g_ffi_types[i].id);
  pthread_mutex_unlock(&g_reg_mu);
  char *s = sb_take(&b);
  const char *r = return_copy(s);
  free(s);
  return r;
}

/* ------------------------------------------------------------------------- */
/* XLA FFI C API (0.3) structures, per ffi_layout.tsv. Private names so that  */
/* this file does not depend on whether pjrt_abi.h also declares them.        */
/* ------------------------------------------------------------------------- */

#define CF_FFI_API_MAJOR 0
#define CF_FFI_API_MINOR 3
#define CF_FFI_EXTENSION_METADATA 1 /* XLA_FFI_Extension_Metadata */
#define CF_FFI_ARG_BUFFER 1         /* XLA_FFI_ArgType_BUFFER */
#define CF_FFI_RET_BUFFER 1         /* XLA_FFI_RetType_BUFFER */
#define CF_FFI_STAGE_EXECUTE 3      /* XLA_FFI_ExecutionStage_EXECUTE */

typedef struct cf_ffi_ext_base {
  size_t struct_size;
  int32_t type;
  void *next;
} cf_ffi_ext_base;

typedef struct cf_ffi_api_version {
  size_t struct_size;
  void *extension_start;
  int major_version;
  int minor_version;
} cf_ffi_api_version;

typedef struct cf_ffi_error_create_args {
  size_t struct_size;
  void *extension_start;
  const char *message;
  int32_t errc;
} cf_ffi_error_create_args;

typedef struct cf_ffi_error_get_message_args {
  size_t struct_size;
  void *extension_start;
  void *error;
  const char *message;
} cf_ffi_error_get_message_args;

typedef struct cf_ffi_error_destroy_args {
  size_t struct_size;
  void *extension_start;
  void *error;
} cf_ffi_error_destroy_args;

typedef struct cf_ffi_buffer {
  size_t struct_size;
  void *extension_start;
  int32_t dtype;
  void *data;
  int64_t rank;
  int64_t *dims;
} cf_ffi_buffer;

typedef struct cf_ffi_scalar {
  int32_t dtype;
  void *value;
} cf_ffi_scalar;

typedef struct cf_ffi_array {
  int32_t dtype;
  size_t size;
  void *data;
} cf_ffi_array;

typedef struct cf_ffi_args {
  size_t struct_size;
  void *extension_start;
  int64_t size;
  int32_t *types;
  void **args;
} cf_ffi_args;

typedef struct cf_ffi_rets {
  size_t struct_size;
  void *extension_start;
  int64_t size;
  int32_t *types;
  void **rets;
} cf_ffi_rets;

typedef struct cf_ffi_attrs {
  size_t struct_size;
  void *extension_start;
  int64_t size;
  int32_t *types;
  void **names;
  void **attrs;
} cf_ffi_attrs;

typedef struct cf_ffi_call_frame {
  size_t struct_size;
  void *extension_start;
  const void *api;
  void *ctx;
  int32_t stage;
  cf_ffi_args args;
  cf_ffi_rets rets;
  cf_ffi_attrs attrs;
  void *future;
} cf_ffi_call_frame;

typedef struct cf_ffi_bytespan {
  const char *ptr;
  size_t len;
} cf_ffi_bytespan;

typedef struct cf_ffi_handler_bundle {
  void *instantiate;
  void *prepare;
  void *initialize;
  void *execute;
} cf_ffi_handler_bundle;

typedef struct cf_ffi_handler_register_args {
  size_t struct_size;
  void *extension_start;
  cf_ffi_bytespan name;
  cf_ffi_bytespan platform;
  cf_ffi_handler_bundle bundle;
  uint32_t traits;
} cf_ffi_handler_register_args;

typedef struct cf_ffi_type_id {
  int64_t type_id;
} cf_ffi_type_id;

typedef struct cf_ffi_type_info {
  size_t struct_size;
  void *extension_start;
  void (*deleter)(void *object);
} cf_ffi_type_info;

typedef struct cf_ffi_type_register_args {
  size_t struct_size;
  void *extension_start;
  cf_ffi_bytespan name;
  cf_ffi_type_id *type_id;
  const cf_ffi_type_info *type_info;
} cf_ffi_type_register_args;

typedef struct cf_ffi_ctx_get_args {
  size_t struct_size;
  void *extension_start;
  void *ctx;
  cf_ffi_type_id *type_id;
  void *data;
} cf_ffi_ctx_get_args;

typedef struct cf_ffi_stream_get_args {
  size_t struct_size;
  void *extension_start;
  void *ctx;
  void *stream;
} cf_ffi_stream_get_args;

typedef struct cf_ffi_mem_alloc_args {
  size_t struct_size;
  void *extension_start;
  void *ctx;
  size_t size;
  size_t alignment;
  void *data;
} cf_ffi_mem_alloc_args;

typedef struct cf_ffi_mem_free_args {
  size_t struct_size;
  void *extension_start;
  void *ctx;
  size_t size;
  void *data;
} cf_ffi_mem_free_args;

typedef struct cf_ffi_run_id_args {
  size_t struct_size;
  void *extension_start;
  void *ctx;
  int64_t run_id;
} cf_ffi_run_id_args;

typedef struct cf_ffi_device_ordinal_args {
  size_t struct_size;
  void *extension_start;
  void *ctx;
  int32_t device_ordinal;
} cf_ffi_device_ordinal_args;

typedef struct cf_ffi_metadata {
  size_t struct_size;
  cf_ffi_api_version api_version;
  uint32_t traits;
  int64_t state_type_id;
} cf_ffi_metadata;

typedef struct cf_ffi_metadata_ext {
  cf_ffi_ext_base extension_base;
  cf_ffi_metadata *metadata;
} cf_ffi_metadata_ext;

typedef struct cf_ffi_api {
  size_t struct_size;
  void *extension_start;
  cf_ffi_api_version api_version;
  const void *internal_api;
  void *XLA_FFI_Error_Create;
  void *XLA_FFI_Error_GetMessage;
  void *XLA_FFI_Error_Destroy;
  void *XLA_FFI_Handler_Register;
  void *XLA_FFI_Stream_Get;
  void *XLA_FFI_Type_Register;
  void *XLA_FFI_ExecutionContext_Get;
  void *XLA_FFI_State_Set;
  void *XLA_FFI_State_Get;
  void *XLA_FFI_DeviceMemory_Allocate;
  void *XLA_FFI_DeviceMemory_Free;
  void *XLA_FFI_ThreadPool_Schedule;
  void *XLA_FFI_ThreadPool_NumThreads;
  void *XLA_FFI_Future_Create;
  void *XLA_FFI_Future_SetAvailable;
  void *XLA_FFI_Future_SetError;
  void *XLA_FFI_RunId_Get;
  void *XLA_FFI_DeviceOrdinal_Get;
} cf_ffi_api;

/* STRUCT_SIZE macros of the FFI header (ffi_layout.tsv). */
#define CF_FFI_Api_Version_STRUCT_SIZE 24
#define CF_FFI_Error_Create_Args_STRUCT_SIZE 28
#define CF_FFI_Error_GetMessage_Args_STRUCT_SIZE 32
#define CF_FFI_Error_Destroy_Args_STRUCT_SIZE 24
#define CF_FFI_Buffer_STRUCT_SIZE 48
#define CF_FFI_Args_STRUCT_SIZE 40
#define CF_FFI_Rets_STRUCT_SIZE 40
#define CF_FFI_Attrs_STRUCT_SIZE 48
#define CF_FFI_CallFrame_STRUCT_SIZE 168
#define CF_FFI_Handler_Register_Args_STRUCT_SIZE 84
#define CF_FFI_Type_Register_Args_STRUCT_SIZE 40
#define CF_FFI_ExecutionContext_Get_Args_STRUCT_SIZE 40
#define CF_FFI_Stream_Get_Args_STRUCT_SIZE 32
#define CF_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE 48
#define CF_FFI_DeviceMemory_Free_Args_STRUCT_SIZE 40
#define CF_FFI_RunId_Get_Args_STRUCT_SIZE 32
#define CF_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE 28
#define CF_FFI_Metadata_STRUCT_SIZE 36
#define CF_FFI_Metadata_Extension_STRUCT_SIZE 32
#define CF_FFI_Api_STRUCT_SIZE 192

_Static_assert(sizeof(cf_ffi_ext_base) == 24, "XLA_FFI_Extension_Base");
_Static_assert(sizeof(cf_ffi_api_version) == 24, "XLA_FFI_Api_Version");
_Static_assert(offsetof(cf_ffi_error_create_args, errc) == 24, "XLA_FFI_Error_Create_Args.errc");
_Static_assert(offsetof(cf_ffi_error_get_message_args, message) == 24, "XLA_FFI_Error_GetMessage_Args.message");
_Static_assert(offsetof(cf_ffi_buffer, dtype) == 16 && offsetof(cf_ffi_buffer, data) == 24 &&
                   offsetof(cf_ffi_buffer, rank) == 32 && offsetof(cf_ffi_buffer, dims) == 40 &&
                   sizeof(cf_ffi_buffer) == 48,
               "XLA_FFI_Buffer");
_Static_assert(offsetof(cf_ffi_args, size) == 16 && offsetof(cf_ffi_args, types) == 24 &&
                   offsetof(cf_ffi_args, args) == 32 && sizeof(cf_ffi_args) == 40,
               "XLA_FFI_Args");
_Static_assert(sizeof(cf_ffi_rets) == 40, "XLA_FFI_Rets");
_Static_assert(offsetof(cf_ffi_attrs, names) == 32 && sizeof(cf_ffi_attrs) == 48, "XLA_FFI_Attrs");
_Static_assert(offsetof(cf_ffi_call_frame, api) == 16 && offsetof(cf_ffi_call_frame, ctx) == 24 &&
                   offsetof(cf_ffi_call_frame, stage) == 32 && offsetof(cf_ffi_call_frame, args) == 40 &&
                   offsetof(cf_ffi_call_frame, rets) == 80 && offsetof(cf_ffi_call_frame, attrs) == 120 &&
                   offsetof(cf_ffi_call_frame, future) == 168,
               "XLA_FFI_CallFrame");
_Static_assert(offsetof(cf_ffi_handler_register_args, name) == 16 &&
                   offsetof(cf_ffi_handler_register_args, platform) == 32 &&
                   offsetof(cf_ffi_handler_register_args, bundle) == 48 &&
                   offsetof(cf_ffi_handler_register_args, traits) == 80,
               "XLA_FFI_Handler_Register_Args");
_Static_assert(offsetof(cf_ffi_type_register_args, type_id) == 32 &&
                   offsetof(cf_ffi_type_register_args, type_info) == 40,
               "XLA_FFI_Type_Register_Args");
_Static_assert(offsetof(cf_ffi_type_info, deleter) == 16, "XLA_FFI_TypeInfo");
_Static_assert(offsetof(cf_ffi_ctx_get_args, type_id) == 24 && offsetof(cf_ffi_ctx_get_args, data) == 32,
               "XLA_FFI_ExecutionContext_Get_Args");
_Static_assert(offsetof(cf_ffi_mem_alloc_args, data) == 40, "XLA_FFI_DeviceMemory_Allocate_Args");
_Static_assert(offsetof(cf_ffi_mem_free_args, data) == 32, "XLA_FFI_DeviceMemory_Free_Args");
_Static_assert(offsetof(cf_ffi_run_id_args, run_id) == 24, "XLA_FFI_RunId_Get_Args");
_Static_assert(offsetof(cf_ffi_device_ordinal_args, device_ordinal) == 24, "XLA_FFI_DeviceOrdinal_Get_Args");
_Static_assert(offsetof(cf_ffi_metadata, api_version) == 8 && offsetof(cf_ffi_metadata, traits) == 32 &&
                   offsetof(cf_ffi_metadata, state_type_id) == 40,
               "XLA_FFI_Metadata");
_Static_assert(offsetof(cf_ffi_metadata_ext, metadata) == 24, "XLA_FFI_Metadata_Extension");
_Static_assert(offsetof(cf_ffi_api, internal_api) == 40 && offsetof(cf_ffi_api, XLA_FFI_Error_Create) == 48 &&
                   offsetof(cf_ffi_api, XLA_FFI_ExecutionContext_Get) == 96 &&
                   offsetof(cf_ffi_api, XLA_FFI_DeviceOrdinal_Get) == 184 && sizeof(cf_ffi_api) == 192,
               "XLA_FFI_Api");

/* XLA_FFI_Error objects and the XLA_FFI_ExecutionContext handed to handlers. */
typedef struct cf_ffi_error {
  uint32_t magic;
  int32_t code;
  char *msg;
} cf_ffi_error;

typedef struct cf_ffi_exec_ctx {
  uint32_t magic;
  exec_ctx *ctx; /* may be NULL */
  int device_ordinal;
  int64_t run_id;
} cf_ffi_exec_ctx;

static cf_ffi_error *ffi_err_new(int32_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cf_ffi_error *ffi_err_new(int32_t code, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  cf_ffi_error *e = xcalloc(1, sizeof(*e));
  e->magic = MAGIC_FFI_ERROR;
  e->code = code;
  e->msg = xstrndup(buf, strlen(buf));
  live_add(LK_ffi_error, 1);
  return e;
}

static void ffi_err_free(cf_ffi_error *e) {
  if (!e || e->magic != MAGIC_FFI_ERROR) return;
  e->magic = MAGIC_DEAD;
  free(e->msg);
  free(e);
  live_add(LK_ffi_error, -1);
}

#define CHECK_FFI_ARGS(T, name)                                                                                   \
  do {                                                                                                            \
    if (!args) return ffi_err_new(PJRT_Error_Code_INVALID_ARGUMENT, name ": args is NULL");                     \
    if (args->struct_size < (size_t)CF_FFI_##T##_STRUCT_SIZE) {                                                   \
      count(C_struct_size_failures);                                                                              \
      return ffi_err_new(PJRT_Error_Code_INVALID_ARGUMENT,                                                        \
                         "Unexpected XLA_FFI_" #T " size: expected at least %d, got %zu. Check installed software " \
                         "versions.",                                                                             \
                         CF_FFI_##T##_STRUCT_SIZE, args->struct_size);                                            \
    }                                                                                                             \
  } while (0)

static cf_ffi_error *ffi_Error_Create(cf_ffi_error_create_args *args) {
  CHECK_FFI_ARGS(Error_Create_Args, "XLA_FFI_Error_Create");
  cf_ffi_error *e = ffi_err_new(args->errc ? args->errc : PJRT_Error_Code_UNKNOWN, "%s",
                                args->message ? args->message : "");
  return e;
}

static void ffi_Error_GetMessage(cf_ffi_error_get_message_args *args) {
  if (!args || args->struct_size < (size_t)CF_FFI_Error_GetMessage_Args_STRUCT_SIZE) return;
  cf_ffi_error *e = args->error;
  args->message = (e && e->magic == MAGIC_FFI_ERROR) ? e->msg : "invalid XLA_FFI_Error";
}

static void ffi_Error_Destroy(cf_ffi_error_destroy_args *args) {
  if (!args || args->struct_size < (size_t)CF_FFI_Error_Destroy_Args_STRUCT_SIZE) return;
  ffi_err_free(args->error);
}

static cf_ffi_error *ffi_unimplemented(const char *name) {
  count(C_unimplemented_calls);
  return ffi_err_new(PJRT_Error_Code_UNIMPLEMENTED, "%s is not implemented by the conformance plugin", name);
}

static cf_ffi_error *ffi_Stream_Get(cf_ffi_stream_get_args *args) {
  CHECK_FFI_ARGS(Stream_Get_Args, "XLA_FFI_Stream_Get");
  args->stream = NULL; /* host platform: no stream */
  return NULL;
}

static cf_ffi_error *ffi_Type_Register(cf_ffi_type_register_args *args) {
  CHECK_FFI_ARGS(Type_Register_Args, "XLA_FFI_Type_Register");
  if (!args->type_id || !args->name.ptr)
    return ffi_err_new(PJRT_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Type_Register: name and type_id must be set");
  void (*deleter)(void *) = NULL;
  if (args->struct_size >= offsetof(cf_ffi_type_register_args, type_info) + sizeof(void *) && args->type_info)
    deleter = args->type_info->deleter;
  char msg[512];
  int64_t id = args->type_id->type_id;
  int32_t code = ffi_type_register(args->name.ptr, args->name.len, &id, deleter, msg, sizeof(msg));
  if (code) return ffi_err_new(code, "XLA_FFI_Type_Register: %s", msg);
  args->type_id->type_id = id;
  return NULL;
}

static cf_ffi_error *ffi_ExecutionContext_Get(cf_ffi_ctx_get_args *args) {
  CHECK_FFI_ARGS(ExecutionContext_Get_Args, "XLA_FFI_ExecutionContext_Get");
  cf_ffi_exec_ctx *fc = args->ctx;
  if (!fc || fc->magic != MAGIC_FFI_CTX)
    return ffi_err_new(PJRT_Error_Code_INVALID_ARGUMENT, "XLA_FFI_ExecutionContext_Get: invalid execution context");
  if (!args->type_id)
    return ffi_err_new(PJRT_Error_Code_INVALID_ARGUMENT, "XLA_FFI_ExecutionContext_Get: type_id is NULL");
  int64_t id = args->type_id->type_id;
  if (fc->ctx) {
    pthread_mutex_lock(&fc->ctx->mu);
    for (size_t i = 0; i < fc->ctx->nud; i++) {
      if (fc->ctx->ud[i].type_id == id) {
        args->data = fc->ctx->ud[i].data;
        pthread_mutex_unlock(&fc->ctx->mu);
        return NULL;
      }
    }
    pthread_mutex_unlock(&fc->ctx->mu);
  }
  return ffi_err_new(PJRT_Error_Code_NOT_FOUND,
                     "XLA_FFI_ExecutionContext_Get: no user data with type id %" PRId64 " in the execute context%s", id,
                     fc->ctx ? "" : " (Execute was called without a PJRT_ExecuteContext)");
}

static cf_ffi_error *ffi_State_Set(void *args) {
  (void)args;
  return ffi_unimplemented("XLA_FFI_State_Set");
}
static cf_ffi_error *ffi_State_Get(void *args) {
  (void)args;
  return ffi_unimplemented("XLA_FFI_State_Get");
}

static cf_ffi_error *ffi_DeviceMemory_Allocate(cf_ffi_mem_alloc_args *args) {
  CHECK_FFI_ARGS(DeviceMemory_Allocate_Args, "XLA_FFI_DeviceMemory_Allocate");
  size_t align = args->alignment < sizeof(void *) ? sizeof(void *) : args->alignment;
  void *p = NULL;
  if (posix_memalign(&p, align, args->size ? args->size : 1) != 0)
    return ffi_err_new(PJRT_Error_Code_RESOURCE_EXHAUSTED, "XLA_FFI_DeviceMemory_Allocate: cannot allocate %zu bytes",
                       args->size);
  args->data = p;
  return NULL;
}

static cf_ffi_error *ffi_DeviceMemory_Free(cf_ffi_mem_free_args *args) {
  CHECK_FFI_ARGS(DeviceMemory_Free_Args, "XLA_FFI_DeviceMemory_Free");
  free(args->data);
  return NULL;
}

static cf_ffi_error *ffi_ThreadPool_Schedule(void *args) {
  (void)args;
  return ffi_unimplemented("XLA_FFI_ThreadPool_Schedule");
}
static cf_ffi_error *ffi_ThreadPool_NumThreads(void *args) {
  (void)args;
  return ffi_unimplemented("XLA_FFI_ThreadPool_NumThreads");
}
static cf_ffi_error *ffi_Future_Create(void *args) {
  (void)args;
  return ffi_unimplemented("XLA_FFI_Future_Create");
}
static cf_ffi_error *ffi_Future_SetAvailable(void *args) {
  (void)args;
  return ffi_unimplemented("XLA_FFI_Future_SetAvailable");
}
static cf_ffi_error *ffi_Future_SetError(void *args) {
  (void)args;
  return ffi_unimplemented("XLA_FFI_Future_SetError");
}

static cf_ffi_error *ffi_RunId_Get(cf_ffi_run_id_args *args) {
  CHECK_FFI_ARGS(RunId_Get_Args, "XLA_FFI_RunId_Get");
  cf_ffi_exec_ctx *fc = args->ctx;
  if (!fc || fc->magic != MAGIC_FFI_CTX)
    return ffi_err_new(PJRT_Error_Code_INVALID_ARGUMENT, "XLA_FFI_RunId_Get: invalid execution context");
  args->run_id = fc->run_id;
  return NULL;
}

static cf_ffi_error *ffi_DeviceOrdinal_Get(cf_ffi_device_ordinal_args *args) {
  CHECK_FFI_ARGS(DeviceOrdinal_Get_Args, "XLA_FFI_DeviceOrdinal_Get");
  cf_ffi_exec_ctx *fc = args->ctx;
  if (!fc || fc->magic != MAGIC_FFI_CTX)
    return ffi_err_new(PJRT_Error_Code_INVALID_ARGUMENT, "XLA_FFI_DeviceOrdinal_Get: invalid execution context");
  args->device_ordinal = fc->device_ordinal;
  return NULL;
}

static cf_ffi_error *ffi_Handler_Register(cf_ffi_handler_register_args *args);

static cf_ffi_api g_ffi_api;
static pthread_once_t g_ffi_api_once = PTHREAD_ONCE_INIT;

static void init_ffi_api(void) {
  g_ffi_api.struct_size = CF_FFI_Api_STRUCT_SIZE;
  g_ffi_api.extension_start = NULL;
  g_ffi_api.api_version.struct_size = CF_FFI_Api_Version_STRUCT_SIZE;
  g_ffi_api.api_version.major_version = CF_FFI_API_MAJOR;
  g_ffi_api.api_version.minor_version = CF_FFI_API_MINOR;
  g_ffi_api.internal_api = NULL;
  g_ffi_api.XLA_FFI_Error_Create = (void *)ffi_Error_Create;
  g_ffi_api.XLA_FFI_Error_GetMessage = (void *)ffi_Error_GetMessage;
  g_ffi_api.XLA_FFI_Error_Destroy = (void *)ffi_Error_Destroy;
  g_ffi_api.XLA_FFI_Handler_Register = (void *)ffi_Handler_Register;
  g_ffi_api.XLA_FFI_Stream_Get = (void *)ffi_Stream_Get;
  g_ffi_api.XLA_FFI_Type_Register = (void *)ffi_Type_Register;
  g_ffi_api.XLA_FFI_ExecutionContext_Get = (void *)ffi_ExecutionContext_Get;
  g_ffi_api.XLA_FFI_State_Set = (void *)ffi_State_Set;
  g_ffi_api.XLA_FFI_State_Get = (void *)ffi_State_Get;
  g_ffi_api.XLA_FFI_DeviceMemory_Allocate = (void *)ffi_DeviceMemory_Allocate;
  g_ffi_api.XLA_FFI_DeviceMemory_Free = (void *)ffi_DeviceMemory_Free;
  g_ffi_api.XLA_FFI_ThreadPool_Schedule = (void *)ffi_ThreadPool_Schedule;
  g_ffi_api.XLA_FFI_ThreadPool_NumThreads = (void *)ffi_ThreadPool_NumThreads;
  g_ffi_api.XLA_FFI_Future_Create = (void *)ffi_Future_Create;
  g_ffi_api.XLA_FFI_Future_SetAvailable = (void *)ffi_Future_SetAvailable;
  g_ffi_api.XLA_FFI_Future_SetError = (void *)ffi_Future_SetError;
  g_ffi_api.XLA_FFI_RunId_Get = (void *)ffi_RunId_Get;
  g_ffi_api.XLA_FFI_DeviceOrdinal_Get = (void *)ffi_DeviceOrdinal_Get;
}

static const cf_ffi_api *ffi_api(void) {
  pthread_once(&g_ffi_api_once, init_ffi_api);
  return &g_ffi_api;
}

/* Exported so that C tests can build call frames against the same API. */
EXPORT const void *conformance_ffi_api(void) { return ffi_api(); }

/* FFI handler registry */

typedef cf_ffi_error *(*ffi_handler_fn)(cf_ffi_call_frame *frame);

typedef struct handler_entry {
  char *name;
  char *platform;
  void *handler;
  uint32_t traits;
  int api_major, api_minor;
  uint32_t meta_traits;
} handler_entry;

static handler_entry *g_handlers;
static size_t g_nhandlers, g_handlers_cap;

/*
 * Registers an FFI handler. Like XLA, calls it once with a metadata call frame
 * (only struct_size and extension_start set) and rejects the registration
 * unless it filled in a compatible API version. Returns 0 or an error code.
 */
static int32_t ffi_register(const char *name, size_t name_len, const char *platform, size_t platform_len,
                            void *handler, uint32_t traits, char *msg, size_t cap) {
  count(C_ffi_handler_registrations);
  if (!name || !name_len) {
    snprintf(msg, cap, "FFI handler registration: target name is empty");
    return PJRT_Error_Code_INVALID_ARGUMENT;
  }
  if (!handler) {
    snprintf(msg, cap, "FFI handler registration for \"%.*s\": handler is NULL", (int)name_len, name);
    return PJRT_Error_Code_INVALID_ARGUMENT;
  }
  cf_ffi_metadata md;
  memset(&md, 0, sizeof(md));
  md.struct_size = CF_FFI_Metadata_STRUCT_SIZE;
  md.api_version.struct_size = CF_FFI_Api_Version_STRUCT_SIZE;
  cf_ffi_metadata_ext ext;
  memset(&ext, 0, sizeof(ext));
  ext.extension_base.struct_size = CF_FFI_Metadata_Extension_STRUCT_SIZE;
  ext.extension_base.type = CF_FFI_EXTENSION_METADATA;
  ext.extension_base.next = NULL;
  ext.metadata = &md;
  cf_ffi_call_frame frame;
  memset(&frame, 0, sizeof(frame));
  frame.struct_size = CF_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = &ext.extension_base;
  count(C_ffi_metadata_calls);
  cf_ffi_error *e = ((ffi_handler_fn)handler)(&frame);
  if (e) {
    bool ours = e->magic == MAGIC_FFI_ERROR;
    snprintf(msg, cap, "FFI handler registration for \"%.*s\" failed: the metadata call returned an error: %s",
             (int)name_len, name, ours ? e->msg : "(not an XLA_FFI_Error of this plugin)");
    int32_t code = ours && e->code ? e->code : PJRT_Error_Code_INVALID_ARGUMENT;
    ffi_err_free(e);
    return code;
  }
  int major = md.api_version.major_version, minor = md.api_version.minor_version;
  if (major != CF_FFI_API_MAJOR || minor < 1 || minor > CF_FFI_API_MINOR) {
    snprintf(msg, cap,
             "FFI handler registration for \"%.*s\" on platform \"%.*s\" failed: the handler's API version (%d.%d) is "
             "incompatible with the conformance plugin's XLA FFI API version %d.%d (the handler must fill "
             "XLA_FFI_Metadata.api_version when called with a metadata call frame)",
             (int)name_len, name, (int)platform_len, platform ? platform : "", major, minor, CF_FFI_API_MAJOR,
             CF_FFI_API_MINOR);
    return PJRT_Error_Code_INVALID_ARGUMENT;
  }
  pthread_mutex_lock(&g_reg_mu);
  for (size_t i = 0; i < g_nhandlers; i++) {
    handler_entry *h = &g_handlers[i];
    if (strlen(h->name) == name_len && memcmp(h->name, name, name_len) == 0 && strlen(h->platform) == platform_len &&
        (platform_len == 0 || memcmp(h->platform, platform, platform_len) == 0)) {
      if (h->handler != handler) {
        pthread_mutex_unlock(&g_reg_mu);
        snprintf(msg, cap, "FFI handler for \"%.*s\" on platform \"%.*s\" is already registered with another handler",
                 (int)name_len, name, (int)platform_len, platform ? platform : "");
        return PJRT_Error_Code_ALREADY_EXISTS;
      }
      h->traits = traits;
      h->api_major = major;
      h->api_minor = minor;
      h->meta_traits = md.traits;
      pthread_mutex_unlock(&g_reg_mu);
      return 0;
    }
  }
  if (g_nhandlers == g_handlers_cap) {
    g_handlers_cap = g_handlers_cap ? 2 * g_handlers_cap : 16;
    g_handlers = realloc(g_handlers, g_handlers_cap * sizeof(handler_entry));
    if (!g_handlers) abort();
  }
  g_handlers[g_nhandlers++] = (handler_entry){xstrndup(name, name_len),
                                              xstrndup(platform ? platform : "", platform ? platform_len : 0),
                                              handler,
                                              traits,
                                              major,
                                              minor,
                                              md.traits};
  pthread_mutex_unlock(&g_reg_mu);
  return 0;
}

static void *ffi_lookup(const char *name) {
  void *h = NULL;
  pthread_mutex_lock(&g_reg_mu);
  for (size_t i = 0; i < g_nhandlers && !h; i++)
    if (strcmp(g_handlers[i].name, name) == 0) h = g_handlers[i].handler;
  pthread_mutex_unlock(&g_reg_mu);
  return h;
}

EXPORT const char *conformance_ffi_handlers(void) {
  sbuf b = {0};
  pthread_mutex_lock(&g_reg_mu);
  for (size_t i = 0; i < g_nhandlers; i++) {
    handler_entry *h = &g_handlers[i];
    sb_printf(&b, "%s%s@%s:api=%d.%d:traits=%u:meta_traits=%u", i ? ";" : "", h->name, h->platform, h->api_major,
              h->api_minor, h->traits, h->meta_traits);
  }
  pthread_mutex_unlock(&g_reg_mu);
  char *s = sb_take(&b);
  const char *r = return_copy(s);
  free(s);
  return r;
}

static cf_ffi_error *ffi_Handler_Register(cf_ffi_handler_register_args *args) {
  CHECK_FFI_ARGS(Handler_Register_Args, "XLA_FFI_Handler_Register");
  char msg[1024];
  int32_t code = ffi_register(args->name.ptr, args->name.len, args->platform.ptr, args->platform.len,
                              args->bundle.execute, args->traits, msg, sizeof(msg));
  return code ? ffi_err_new(code, "%s", msg) : NULL;
}

/* The PJRT FFI extension */

static PJRT_Error *ext_ffi_type_register(PJRT_FFI_Type_Register_Args *args) {
  CHECK_ARGS(PJRT_FFI_Type_Register_Args);
  if (!args->type_name || !args->type_name_size)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_FFI_Type_Register: type_name is empty");
  /* XLA reads type_info->deleter unchecked when the args reach type_info:
   * a NULL there crashes a real plugin, so it is an error here. */
  if (args->struct_size >= offsetof(PJRT_FFI_Type_Register_Args, type_info) + sizeof(void *) && !args->type_info)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_FFI_Type_Register: type_info is NULL (XLA dereferences it)");
  const PJRT_FFI_Type_Info *ti = (const PJRT_FFI_Type_Info *)args->type_info;
  void (*deleter)(void *) = ti ? (void (*)(void *))ti->deleter : NULL;
  char msg[512];
  int64_t id = args->type_id;
  int32_t code = ffi_type_register((const char *)args->type_name, args->type_name_size, &id, deleter, msg, sizeof(msg));
  if (code) return err_new(code, "PJRT_FFI_Type_Register: %s", msg);
  args->type_id = id;
  return NULL;
}

/* Plugins built before minor 75 (emulated by CONFORMANCE_PJRT_MINOR) have the
 * older FFI extension: no register_handler (PJRT_FFI.struct_size 40), and a
 * PJRT_FFI_UserData with a third field, a per-datum deleter, which makes
 * PJRT_FFI_UserData_Add_Args 48 bytes. */
#define OLD_FFI_EXTENSION_BEFORE_MINOR 75
#define OLD_FFI_USER_DATA_ADD_ARGS_STRUCT_SIZE 48

static PJRT_Error *ext_ffi_user_data_add(PJRT_FFI_UserData_Add_Args *args) {
  CHECK_ARGS(PJRT_FFI_UserData_Add_Args);
  bool old = atomic_load(&g_minor) < OLD_FFI_EXTENSION_BEFORE_MINOR;
  if (old && args->struct_size < OLD_FFI_USER_DATA_ADD_ARGS_STRUCT_SIZE)
    return size_error("PJRT_FFI_UserData_Add_Args", OLD_FFI_USER_DATA_ADD_ARGS_STRUCT_SIZE, args->struct_size);
  exec_ctx *c = NULL;
  PJRT_Error *err = get_ctx("PJRT_FFI_UserData_Add", args->context, &c);
  if (err) return err;
  int64_t id = args->user_data.type_id;
  void (*deleter)(void *) = ffi_type_deleter(id);
  if (old) {
    void (*own)(void *) = *(void (**)(void *))((char *)args + 40);
    if (own) deleter = own;
  }
  pthread_mutex_lock(&c->mu);
  for (size_t i = 0; i < c->nud; i++) {
    if (c->ud[i].type_id == id) {
      pthread_mutex_unlock(&c->mu);
      return err_new(PJRT_Error_Code_ALREADY_EXISTS,
                     "PJRT_FFI_UserData_Add: the execute context already holds user data of type id %" PRId64, id);
    }
  }
  if (c->nud == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 4;
    c->ud = realloc(c->ud, c->cap * sizeof(ud_entry));
    if (!c->ud) abort();
  }
  c->ud[c->nud++] = (ud_entry){id, args->user_data.data, deleter};
  pthread_mutex_unlock(&c->mu);
  count(C_ffi_user_data_added);
  return NULL;
}

static PJRT_Error *ext_ffi_register_handler(PJRT_FFI_Register_Handler_Args *args) {
  CHECK_ARGS(PJRT_FFI_Register_Handler_Args);
  char msg[1024];
  int32_t code = ffi_register((const char *)args->target_name, args->target_name_size,
                              (const char *)args->platform_name, args->platform_name_size, args->handler,
                              (uint32_t)args->traits, msg, sizeof(msg));
  return code ? err_new(code, "PJRT_FFI_Register_Handler: %s", msg) : NULL;
}

/* The GPU custom call extension: records registrations. */

typedef struct gpu_cc_entry {
  char *name;
  int api_version;
  bool instantiate, prepare, initialize, execute;
} gpu_cc_entry;

static gpu_cc_entry *g_gpu_cc;
static size_t g_ngpu_cc, g_gpu_cc_cap;

/* Plugins built before minor 55 have version 1 of the GPU extension: the args
 * are {struct_size, function_name, function_name_size, api_version,
 * custom_call_function} (STRUCT_SIZE 40); version 2 replaced the function by
 * the four handler_* fields (STRUCT_SIZE 64). */
#define GPU_EXTENSION_V2_FROM_MINOR 55
#define GPU_V1_ARGS_STRUCT_SIZE 40

static PJRT_Error *ext_gpu_register_custom_call(PJRT_Gpu_Register_Custom_Call_Args *args) {
  bool v1 = atomic_load(&g_minor) < GPU_EXTENSION_V2_FROM_MINOR;
  if (v1) {
    if (!args) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Gpu_Register_Custom_Call_Args pointer is NULL");
    if (args->struct_size < GPU_V1_ARGS_STRUCT_SIZE)
      return size_error("PJRT_Gpu_Register_Custom_Call_Args", GPU_V1_ARGS_STRUCT_SIZE, args->struct_size);
  } else {
    CHECK_ARGS(PJRT_Gpu_Register_Custom_Call_Args);
  }
  count(C_gpu_custom_call_registrations);
  if (!args->function_name || !args->function_name_size)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Gpu_Register_Custom_Call: function_name is empty");
  if (args->api_version != 0 && args->api_version != 1)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "PJRT_Gpu_Register_Custom_Call: unsupported api_version %d (expected 0 or 1)", args->api_version);
  void *instantiate = v1 ? NULL : args->handler_instantiate;
  void *prepare = v1 ? NULL : args->handler_prepare;
  void *initialize = v1 ? NULL : args->handler_initialize;
  void *execute = v1 ? args->handler_instantiate /* custom_call_function, offset 32 */ : args->handler_execute;
  if (!execute)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Gpu_Register_Custom_Call: %s is NULL",
                   v1 ? "custom_call_function" : "handler_execute");
  if (args->api_version == 1) {
    /* Typed (XLA FFI) custom calls go to the FFI registry for platform CUDA,
     * with the metadata call, as in XLA. */
    char msg[1024];
    int32_t code = ffi_register((const char *)args->function_name, args->function_name_size, "CUDA", 4, execute, 0,
                                msg, sizeof(msg));
    if (code) return err_new(code, "PJRT_Gpu_Register_Custom_Call: %s", msg);
  }
  char rec[256];
  snprintf(rec, sizeof(rec), "%.*s:%s:%s%s%s%s", (int)(args->function_name_size < 128 ? args->function_name_size : 128),
           (const char *)args->function_name, v1 ? "v1" : "v2", instantiate ? "instantiate+" : "",
           prepare ? "prepare+" : "", initialize ? "initialize+" : "", "execute");
  record_append(R_gpu_custom_call_handlers, rec);
  pthread_mutex_lock(&g_reg_mu);
  if (g_ngpu_cc == g_gpu_cc_cap) {
    g_gpu_cc_cap = g_gpu_cc_cap ? 2 * g_gpu_cc_cap : 16;
    g_gpu_cc = realloc(g_gpu_cc, g_gpu_cc_cap * sizeof(gpu_cc_entry));
    if (!g_gpu_cc) abort();
  }
  g_gpu_cc[g_ngpu_cc++] = (gpu_cc_entry){xstrndup((const char *)args->function_name, args->function_name_size),
                                         args->api_version,
                                         instantiate != NULL,
                                         prepare != NULL,
                                         initialize != NULL,
                                         execute != NULL};
  pthread_mutex_unlock(&g_reg_mu);
  return NULL;
}

EXPORT const char *conformance_gpu_custom_calls(void) {
  sbuf b = {0};
  pthread_mutex_lock(&g_reg_mu);
  for (size_t i = 0; i < g_ngpu_cc; i++) {
    gpu_cc_entry *g = &g_gpu_cc[i];
    sb_printf(&b, "%s%s:%d", i ? ";" : "", g->name, g->api_version);
  }
  pthread_mutex_unlock(&g_reg_mu);
  char *s = sb_take(&b);
  const char *r = return_copy(s);
  free(s);
  return r;
}

/* ------------------------------------------------------------------------- */
/* Execute                                                                   */
/* ------------------------------------------------------------------------- */

typedef struct exec_job {
  program *prog;
  conf_client *client;
  int device_ordinal;
  int launch_id;
  exec_ctx *ctx;
  int nin, nout;
  storage *args[MAX_VALUES];
  conf_event *arg_ready[MAX_VALUES];
  storage *outs[MAX_VALUES];
  conf_event *out_ready[MAX_VALUES];
  conf_event *complete;
  /* Pending-job registry (PJRT_Device_PoisonExecution), under g_pending_mu. */
  struct exec_job *pnext, *pprev;
  bool registered;
  int32_t poison_code;
  char poison_msg[512];
} exec_job;

static pthread_mutex_t g_pending_mu = PTHREAD_MUTEX_INITIALIZER;
static exec_job *g_pending_jobs; /* submitted, not yet started */

static void pending_add(exec_job *j) {
  pthread_mutex_lock(&g_pending_mu);
  j->pnext = g_pending_jobs;
  j->pprev = NULL;
  if (g_pending_jobs) g_pending_jobs->pprev = j;
  g_pending_jobs = j;
  j->registered = true;
  pthread_mutex_unlock(&g_pending_mu);
}

/* Removes j from the registry; returns its poison code (0: not poisoned). */
static int32_t pending_take(exec_job *j, char *msg, size_t cap) {
  pthread_mutex_lock(&g_pending_mu);
  int32_t code = 0;
  if (j->registered) {
    if (j->pprev)
      j->pprev->pnext = j->pnext;
    else
      g_pending_jobs = j->pnext;
    if (j->pnext) j->pnext->pprev = j->pprev;
    j->registered = false;
    code = j->poison_code;
    if (code) snprintf(msg, cap, "%s", j->poison_msg);
  }
  pthread_mutex_unlock(&g_pending_mu);
  return code;
}

#define ADD_LOOP(T)                                                       \
  do {                                                                    \
    const T *x = (const T *)a;                                            \
    const T *y = (const T *)b;                                            \
    T *z = (T *)o;                                                        \
    for (int64_t k = 0; k < n; k++) z[k] = (T)(x[k] + y[k]);              \
  } while (0)

static void compute_add(int32_t type, const void *a, const void *b, void *o, int64_t n) {
  switch (type) {
    case PJRT_Buffer_Type_F32: ADD_LOOP(float); break;
    case PJRT_Buffer_Type_F64: ADD_LOOP(double); break;
    case PJRT_Buffer_Type_S8: ADD_LOOP(int8_t); break;
    case PJRT_Buffer_Type_S16: ADD_LOOP(int16_t); break;
    case PJRT_Buffer_Type_S32: ADD_LOOP(int32_t); break;
    case PJRT_Buffer_Type_S64: ADD_LOOP(int64_t); break;
    case PJRT_Buffer_Type_U8: ADD_LOOP(uint8_t); break;
    case PJRT_Buffer_Type_U16: ADD_LOOP(uint16_t); break;
    case PJRT_Buffer_Type_U32: ADD_LOOP(uint32_t); break;
    case PJRT_Buffer_Type_U64: ADD_LOOP(uint64_t); break;
    default: break;
  }
}

static int32_t compute_ffi(exec_job *j, char *msg, size_t cap) {
  program *p = j->prog;
  void *handler = ffi_lookup(p->ffi_name);
  if (!handler) {
    snprintf(msg, cap, "conformance: no FFI handler registered for target \"%s\"", p->ffi_name);
    return PJRT_Error_Code_NOT_FOUND;
  }
  cf_ffi_buffer in_bufs[MAX_VALUES], out_bufs[MAX_VALUES];
  void *in_ptrs[MAX_VALUES], *out_ptrs[MAX_VALUES];
  int32_t in_types[MAX_VALUES], out_types[MAX_VALUES];
  int64_t in_dims[MAX_VALUES][MAX_RANK], out_dims[MAX_VALUES][MAX_RANK];
  for (int i = 0; i < p->nin; i++) {
    const tyspec *t = &p->in[i];
    memset(&in_bufs[i], 0, sizeof(in_bufs[i]));
    in_bufs[i].struct_size = CF_FFI_Buffer_STRUCT_SIZE;
    in_bufs[i].dtype = type_lookup(t->type)->ffi;
    in_bufs[i].data = j->args[i]->data;
    in_bufs[i].rank = (int64_t)t->ndims;
    memcpy(in_dims[i], t->dims, sizeof(int64_t) * t->ndims);
    in_bufs[i].dims = in_dims[i];
    in_ptrs[i] = &in_bufs[i];
    in_types[i] = CF_FFI_ARG_BUFFER;
  }
  for (int i = 0; i < p->nout; i++) {
    const tyspec *t = &p->out[i];
    memset(&out_bufs[i], 0, sizeof(out_bufs[i]));
    out_bufs[i].struct_size = CF_FFI_Buffer_STRUCT_SIZE;
    out_bufs[i].dtype = type_lookup(t->type)->ffi;
    out_bufs[i].data = j->outs[i]->data;
    out_bufs[i].rank = (int64_t)t->ndims;
    memcpy(out_dims[i], t->dims, sizeof(int64_t) * t->ndims);
    out_bufs[i].dims = out_dims[i];
    out_ptrs[i] = &out_bufs[i];
    out_types[i] = CF_FFI_RET_BUFFER;
  }
  cf_ffi_exec_ctx fctx = {MAGIC_FFI_CTX, j->ctx, j->device_ordinal, j->launch_id};
  cf_ffi_call_frame frame;
  memset(&frame, 0, sizeof(frame));
  frame.struct_size = CF_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = NULL;
  frame.api = ffi_api();
  frame.ctx = &fctx;
  frame.stage = CF_FFI_STAGE_EXECUTE;
  frame.args.struct_size = CF_FFI_Args_STRUCT_SIZE;
  frame.args.size = p->nin;
  frame.args.types = in_types;
  frame.args.args = in_ptrs;
  frame.rets.struct_size = CF_FFI_Rets_STRUCT_SIZE;
  frame.rets.size = p->nout;
  frame.rets.types = out_types;
  frame.rets.rets = out_ptrs;
  frame.attrs.struct_size = CF_FFI_Attrs_STRUCT_SIZE;
  frame.attrs.size = p->nattrs;
  int32_t attr_types[MAX_ATTRS];
  cf_ffi_bytespan attr_name_spans[MAX_ATTRS], attr_strs[MAX_ATTRS];
  void *attr_names[MAX_ATTRS], *attr_ptrs[MAX_ATTRS];
  cf_ffi_scalar attr_scalars[MAX_ATTRS];
  cf_ffi_array attr_arrays[MAX_ATTRS];
  for (int i = 0; i < p->nattrs; i++) {
    const ffi_attr *a = &p->attrs[i];
    attr_types[i] = a->kind;
    attr_name_spans[i] = (cf_ffi_bytespan){a->name, strlen(a->name)};
    attr_names[i] = &attr_name_spans[i];
    if (a->kind == ATTR_STRING) {
      attr_strs[i] = (cf_ffi_bytespan){a->str, a->str_len};
      attr_ptrs[i] = &attr_strs[i];
    } else if (a->kind == ATTR_ARRAY) {
      attr_arrays[i] = (cf_ffi_array){a->dtype, a->arr_len, (void *)a->arr};
      attr_ptrs[i] = &attr_arrays[i];
    } else {
      attr_scalars[i] = (cf_ffi_scalar){a->dtype, (void *)&a->v};
      attr_ptrs[i] = &attr_scalars[i];
    }
  }
  frame.attrs.types = attr_types;
  frame.attrs.names = attr_names;
  frame.attrs.attrs = attr_ptrs;
  frame.future = NULL;
  count(C_ffi_handler_calls);
  cf_ffi_error *e = ((ffi_handler_fn)handler)(&frame);
  fctx.magic = MAGIC_DEAD;
  if (!e) return 0;
  int32_t code = PJRT_Error_Code_INTERNAL;
  if (e->magic == MAGIC_FFI_ERROR) {
    snprintf(msg, cap, "%s", e->msg);
    if (e->code) code = e->code;
    ffi_err_free(e);
  } else {
    snprintf(msg, cap, "FFI handler \"%s\" returned an error that was not created by XLA_FFI_Error_Create",
             p->ffi_name);
  }
  return code;
}

static int32_t compute(exec_job *j, char *msg, size_t cap) {
  program *p = j->prog;
  switch (p->op) {
    case OP_ADD:
      compute_add(p->in[0].type, j->args[0]->data, j->args[1]->data, j->outs[0]->data,
                  num_elements(p->out[0].dims, p->out[0].ndims));
      return 0;
    case OP_IDENTITY:
      for (int i = 0; i < p->nin; i++)
        if (p->in[i].nbytes) memcpy(j->outs[i]->data, j->args[i]->data, p->in[i].nbytes);
      return 0;
    case OP_FAIL:
      snprintf(msg, cap, "conformance: requested failure");
      return PJRT_Error_Code_INTERNAL;
    case OP_FFI:
      return compute_ffi(j, msg, cap);
  }
  snprintf(msg, cap, "conformance: unknown op");
  return PJRT_Error_Code_INTERNAL;
}

static void exec_job_free(exec_job *j) {
  for (int i = 0; i < j->nin; i++) {
    storage_unref(j->args[i]);
    event_unref(j->arg_ready[i]);
  }
  for (int i = 0; i < j->nout; i++) {
    storage_unref(j->outs[i]);
    event_unref(j->out_ready[i]);
  }
  event_unref(j->complete);
  ctx_unref(j->ctx);
  program_unref(j->prog);
  client_unref(j->client);
  free(j);
}

static void exec_run(void *arg, int32_t code, const char *dep_msg) {
  exec_job *j = arg;
  count(C_execute_jobs);
  char msg[1024];
  msg[0] = 0;
  int32_t poison = pending_take(j, msg, sizeof(msg));
  if (poison != 0)
    code = poison;
  else if (code != 0)
    snprintf(msg, sizeof(msg), "%s", dep_msg ? dep_msg : "");
  else
    code = compute(j, msg, sizeof(msg));
  if (code) count(C_execute_failures);
  for (int i = 0; i < j->nout; i++) event_complete(j->out_ready[i], code, msg);
  if (j->complete) event_complete(j->complete, code, msg);
  exec_job_free(j);
}

static PJRT_Error *impl_PJRT_LoadedExecutable_Execute(PJRT_LoadedExecutable_Execute_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_Execute_Args);
  count(C_execute_calls);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->executable, &l);
  if (err) return err;
  CHECK_NESTED(PJRT_ExecuteOptions, args->options, "options");
  const PJRT_ExecuteOptions *o = args->options;
  const int64_t *nd = (const int64_t *)o->non_donatable_input_indices;

  /* Record what arrived, before any semantic validation. */
  sbuf rec = {0};
  sb_printf(&rec, "devices=%zu;args=%zu;launch_id=%d;non_donatable=", args->num_devices, args->num_args,
            (int)o->launch_id);
  for (size_t i = 0; nd && i < o->num_non_donatable_input_indices; i++)
    sb_printf(&rec, "%s%" PRId64, i ? "," : "", nd[i]);
  sb_printf(&rec, ";context=%d;complete_events=%d", o->context != NULL, args->device_complete_events != NULL);
  set_record(&g_last_execute, sb_take(&rec));
  conf_device *xdev = NULL;
  conf_device *probe = args->execute_device;
  if (probe && probe->magic == MAGIC_DEVICE)
    sb_printf(&rec, "execute_device=%d", probe->index);
  else
    sb_printf(&rec, "execute_device=%s", probe ? "invalid" : "none");
  sb_printf(&rec, ";call_location=%s;send_ops=%zu;recv_ops=%zu;options_size=%zu",
            o->call_location ? (const char *)o->call_location : "", o->num_send_ops, o->num_recv_ops, o->struct_size);
  set_record(&g_last_execute_extra, sb_take(&rec));

  program *p = l->prog;
  if (atomic_load(&l->deleted))
    return err_new(PJRT_Error_Code_FAILED_PRECONDITION, "%s: the executable (%s) has been deleted", FN, p->name);
  if (args->execute_device) {
    if ((err = get_device(FN, args->execute_device, &xdev))) return err;
    if (xdev->client != l->client)
      return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: execute_device belongs to another PJRT_Client", FN);
    if (args->num_devices != 1)
      return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: with execute_device set, num_devices must be 1, got %zu",
                     FN, args->num_devices);
  } else if (args->num_devices != (size_t)l->ndev) {
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: expected %d devices, got %zu", FN, l->ndev,
                   args->num_devices);
  }
  if (args->num_args != (size_t)p->nin)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: expected %d arguments, got %zu", FN, p->nin, args->num_args);
  if (p->nin && !args->argument_lists)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument_lists is NULL", FN);
  if (!args->output_lists) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: output_lists is NULL", FN);
  for (size_t i = 0; nd && i < o->num_non_donatable_input_indices; i++)
    if (nd[i] < 0 || nd[i] >= p->nin)
      return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: non_donatable_input_indices[%zu] = %" PRId64
                     " is out of range for %d arguments", FN, i, nd[i], p->nin);
  exec_ctx *ctx = NULL;
  if (o->context && (err = get_ctx(FN, o->context, &ctx))) return err;

  void *const *const *arg_lists = (void *const *const *)args->argument_lists;
  void **const *out_lists = (void **const *)args->output_lists;
  void **complete_events = (void **)args->device_complete_events;
  size_t ndev = args->num_devices;
  exec_job **jobs = xcalloc(ndev, sizeof(exec_job *));
  for (size_t d = 0; d < ndev && !err; d++) {
    exec_job *j = jobs[d] = xcalloc(1, sizeof(exec_job));
    conf_device *dev = xdev ? xdev : (conf_device *)l->dev_ptrs[d];
    j->prog = program_ref(p);
    j->client = client_ref(l->client);
    j->device_ordinal = dev->index;
    j->launch_id = o->launch_id;
    j->ctx = ctx ? ctx_ref(ctx) : NULL;
    if (p->nin && !arg_lists[d]) {
      err = err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument_lists[%zu] is NULL", FN, d);
      break;
    }
    if (p->nout && !out_lists[d]) {
      err = err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: output_lists[%zu] is NULL", FN, d);
      break;
    }
    for (int i = 0; i < p->nin; i++) {
      conf_buffer *b = arg_lists[d][i];
      char want[160];
      if (!b) {
        err = err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument %d for device %zu is NULL", FN, i, d);
        break;
      }
      if (b->magic != MAGIC_BUFFER) {
        count(C_invalid_handles);
        err = err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument %d for device %zu is not a valid PJRT_Buffer", FN,
                      i, d);
        break;
      }
      const tyspec *t = &p->in[i];
      bool ok = b->type == t->type && b->ndims == t->ndims;
      for (size_t k = 0; ok && k < t->ndims; k++) ok = b->dims[k] == t->dims[k];
      if (!ok) {
        shape_str(want, sizeof(want), t->type, t->dims, t->ndims);
        err = err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: argument %d for device %zu has shape %s but the program expects %s", FN, i, d, b->shape,
                      want);
        break;
      }
      pthread_mutex_lock(&b->mu);
      if (b->deleted) {
        pthread_mutex_unlock(&b->mu);
        err = err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: argument %d for device %zu: buffer #%" PRIu64 " (%s) has been deleted", FN, i, d, b->id,
                      b->shape);
        break;
      }
      j->args[i] = storage_ref(b->st);
      j->arg_ready[i] = event_ref(b->ready);
      j->nin = i + 1;
      pthread_mutex_unlock(&b->mu);
    }
  }
  if (err) {
    for (size_t d = 0; d < ndev; d++)
      if (jobs[d]) exec_job_free(jobs[d]);
    free(jobs);
    return err;
  }
  for (size_t d = 0; d < ndev; d++) {
    exec_job *j = jobs[d];
    conf_device *dev = xdev ? xdev : (conf_device *)l->dev_ptrs[d];
    conf_memory *mem = &dev->mem[MEM_DEVICE];
    for (int i = 0; i < p->nout; i++) {
      const tyspec *t = &p->out[i];
      storage *st = storage_new(l->client, dev, t->nbytes);
      conf_event *ready = event_new(false);
      j->outs[i] = storage_ref(st);
      j->out_ready[i] = event_ref(ready);
      j->nout = i + 1;
      out_lists[d][i] = buffer_new(l->client, mem, t->type, t->dims, t->ndims, st, ready);
    }
    if (complete_events) {
      conf_event *ev = event_new(true);
      j->complete = event_ref(ev);
      complete_events[d] = ev;
    }
    pending_add(j);
    run_after(j->arg_ready, (size_t)j->nin, exec_run, j);
  }
  free(jobs);
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Less common entry points: async host-to-device transfers, DMA mappings,   */
/* process info, alias buffers, device assignments, raw copies with a later  */
/* destination, poisoning, tracking events, donation, bitcast, canonical     */
/* shapes.                                                                   */
/* ------------------------------------------------------------------------- */

/* Frees a buffer handle (PJRT_Buffer_Destroy without the argument checks). */
static void buffer_free(conf_buffer *b) {
  buffer_delete(b);
  b->magic = MAGIC_DEAD;
  event_unref(b->ready);
  client_unref(b->client);
  pthread_mutex_destroy(&b->mu);
  free(b);
  live_add(LK_buffer, -1);
}

/* One buffer of a transfer manager: refcounted because copy jobs outlive it. */
typedef struct tm_slot {
  _Atomic int refs;
  pthread_mutex_t mu;
  int pending;   /* copy jobs not yet run */
  bool last;     /* the last transfer was submitted */
  bool finished; /* ready was (or is being) completed */
  storage *st;
  conf_event *ready;
  int32_t type;
  size_t ndims;
  int64_t dims[MAX_RANK];
  size_t size;
} tm_slot;

static void tm_slot_unref(tm_slot *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
  storage_unref(s->st);
  event_unref(s->ready);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

#define MAGIC_TM 0x43544d47u /* CTMG */
typedef struct conf_tm {
  uint32_t magic;
  conf_client *client; /* reference */
  conf_memory *mem;
  int n;
  tm_slot **slots;
  conf_buffer **bufs; /* NULL once retrieved */
} conf_tm;

static PJRT_Error *get_tm(const char *fn, void *p, conf_tm **out) {
  conf_tm *t = p;
  if (!t || t->magic != MAGIC_TM) return bad_handle(fn, "PJRT_AsyncHostToDeviceTransferManager", p);
  *out = t;
  return NULL;
}

static PJRT_Error *tm_index(const char *fn, conf_tm *t, int i) {
  if (i < 0 || i >= t->n)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: buffer_index %d is out of range (the transfer manager has %d)",
                   fn, i, t->n);
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_CreateBuffersForAsyncHostToDevice(
    PJRT_Client_CreateBuffersForAsyncHostToDevice_Args *args) {
  CHECK_ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  conf_memory *mem = NULL;
  if ((err = resolve_target(FN, c, NULL, args->memory, &mem))) return err;
  if (!args->num_shape_specs || !args->shape_specs)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: no shape specs", FN);
  if (args->num_device_layouts && args->num_device_layouts != args->num_shape_specs)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %zu device layouts for %zu shape specs", FN,
                   args->num_device_layouts, args->num_shape_specs);
  const PJRT_ShapeSpec *specs = args->shape_specs;
  PJRT_Buffer_MemoryLayout **layouts = (PJRT_Buffer_MemoryLayout **)args->device_layouts;
  for (size_t i = 0; i < args->num_shape_specs; i++) {
    CHECK_NESTED(PJRT_ShapeSpec, &specs[i], "shape spec");
    size_t nbytes;
    if ((err = check_shape(FN, specs[i].element_type, specs[i].dims, specs[i].num_dims, &nbytes))) return err;
    if (layouts && args->num_device_layouts &&
        !layout_is_default(layouts[i], specs[i].element_type, specs[i].dims, specs[i].num_dims))
      return err_new(PJRT_Error_Code_UNIMPLEMENTED, "%s: only the default layout is supported", FN);
  }
  conf_tm *t = xcalloc(1, sizeof(*t));
  t->magic = MAGIC_TM;
  t->client = client_ref(c);
  t->mem = mem;
  t->n = (int)args->num_shape_specs;
  t->slots = xcalloc((size_t)t->n, sizeof(tm_slot *));
  t->bufs = xcalloc((size_t)t->n, sizeof(conf_buffer *));
  for (int i = 0; i < t->n; i++) {
    const PJRT_ShapeSpec *sp = &specs[i];
    size_t nbytes = 0;
    check_shape(FN, sp->element_type, sp->dims, sp->num_dims, &nbytes);
    tm_slot *s = xcalloc(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->mu, NULL);
    storage *st = storage_new(c, mem->dev, nbytes);
    conf_event *ready = event_new(false);
    s->st = storage_ref(st);
    s->ready = event_ref(ready);
    s->type = sp->element_type;
    s->ndims = sp->num_dims;
    for (size_t k = 0; k < sp->num_dims; k++) s->dims[k] = ((const int64_t *)sp->dims)[k];
    s->size = nbytes;
    t->slots[i] = s;
    t->bufs[i] = buffer_new(c, mem, sp->element_type, sp->dims, sp->num_dims, st, ready);
  }
  live_add(LK_transfer_manager, 1);
  args->transfer_manager = (void *)t;
  return NULL;
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_Destroy(
    PJRT_AsyncHostToDeviceTransferManager_Destroy_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  t->magic = MAGIC_DEAD;
  for (int i = 0; i < t->n; i++) {
    tm_slot *s = t->slots[i];
    pthread_mutex_lock(&s->mu);
    bool cancel = !s->finished && !s->last;
    if (cancel) s->finished = true;
    pthread_mutex_unlock(&s->mu);
    if (cancel)
      event_complete(s->ready, PJRT_Error_Code_CANCELLED,
                     "the transfer manager was destroyed before the buffer's last transfer");
    tm_slot_unref(s);
    if (t->bufs[i]) buffer_free(t->bufs[i]);
  }
  client_unref(t->client);
  free(t->slots);
  free(t->bufs);
  free(t);
  live_add(LK_transfer_manager, -1);
  return NULL;
}

typedef struct tm_job {
  tm_slot *slot;
  const char *src;
  size_t offset, size;
  conf_event *done;
} tm_job;

static void tm_job_run(void *p) {
  tm_job *j = p;
  tm_slot *s = j->slot;
  if (j->size) memcpy((char *)s->st->data + j->offset, j->src, j->size);
  event_complete(j->done, 0, NULL);
  event_unref(j->done);
  pthread_mutex_lock(&s->mu);
  s->pending--;
  bool complete = s->last && s->pending == 0 && !s->finished;
  if (complete) s->finished = true;
  pthread_mutex_unlock(&s->mu);
  if (complete) event_complete(s->ready, 0, NULL);
  tm_slot_unref(s);
  free(j);
}

/* Queues a copy of src into slot i at offset; returns the done event. */
static PJRT_Error *tm_transfer(const char *fn, conf_tm *t, int i, const void *src, int64_t offset, int64_t size,
                               bool last, void **done) {
  PJRT_Error *err = tm_index(fn, t, i);
  if (err) return err;
  tm_slot *s = t->slots[i];
  if (offset < 0 || size < 0 || (uint64_t)offset + (uint64_t)size > s->size)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: range [%" PRId64 ", %" PRId64 ") is outside the %zu bytes of buffer %d", fn, offset,
                   offset + size, s->size, i);
  if (size && !src) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: data is NULL", fn);
  pthread_mutex_lock(&s->mu);
  if (s->finished || s->last) {
    pthread_mutex_unlock(&s->mu);
    return err_new(PJRT_Error_Code_FAILED_PRECONDITION, "%s: buffer %d already had its last transfer (or an error)", fn,
                   i);
  }
  s->pending++;
  if (last) s->last = true;
  atomic_fetch_add(&s->refs, 1);
  pthread_mutex_unlock(&s->mu);
  tm_job *j = xcalloc(1, sizeof(*j));
  j->slot = s;
  j->src = src;
  j->offset = (size_t)offset;
  j->size = (size_t)size;
  conf_event *ev = event_new(true);
  j->done = event_ref(ev);
  enqueue(tm_job_run, j);
  *done = (void *)ev;
  return NULL;
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_TransferData(
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferData_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  return tm_transfer(FN, t, args->buffer_index, args->data, args->offset, args->transfer_size, args->is_last_transfer,
                     &args->done_with_h2d_transfer);
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(
    PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  if ((err = tm_index(FN, t, args->buffer_index))) return err;
  tm_slot *s = t->slots[args->buffer_index];
  const int64_t *dims = args->shape_dims;
  bool same = args->shape_element_type == s->type && args->shape_num_dims == s->ndims;
  for (size_t k = 0; same && k < s->ndims; k++) same = dims && dims[k] == s->dims[k];
  if (!same) {
    char want[160];
    shape_str(want, sizeof(want), s->type, s->dims, s->ndims);
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: the literal's shape differs from buffer %d's %s", FN,
                   args->buffer_index, want);
  }
  if (!layout_is_default(args->shape_layout, s->type, s->dims, s->ndims))
    return err_new(PJRT_Error_Code_UNIMPLEMENTED, "%s: only the default layout is supported", FN);
  return tm_transfer(FN, t, args->buffer_index, args->data, 0, (int64_t)s->size, true, &args->done_with_h2d_transfer);
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  if ((err = tm_index(FN, t, args->buffer_index))) return err;
  if (!t->bufs[args->buffer_index])
    return err_new(PJRT_Error_Code_FAILED_PRECONDITION, "%s: buffer %d was already retrieved", FN, args->buffer_index);
  args->buffer_out = (void *)t->bufs[args->buffer_index];
  t->bufs[args->buffer_index] = NULL;
  return NULL;
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_Device(
    PJRT_AsyncHostToDeviceTransferManager_Device_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_Device_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  args->device_out = (void *)t->mem->dev;
  return NULL;
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_BufferCount(
    PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  args->buffer_count = (size_t)t->n;
  return NULL;
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_BufferSize(
    PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  if ((err = tm_index(FN, t, args->buffer_index))) return err;
  args->buffer_size = t->slots[args->buffer_index]->size;
  return NULL;
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_SetBufferError(
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  if ((err = tm_index(FN, t, args->buffer_index))) return err;
  if (args->error_code == 0) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: error_code must not be OK", FN);
  tm_slot *s = t->slots[args->buffer_index];
  pthread_mutex_lock(&s->mu);
  bool set = !s->finished;
  s->finished = true;
  s->last = true;
  pthread_mutex_unlock(&s->mu);
  if (!set)
    return err_new(PJRT_Error_Code_FAILED_PRECONDITION, "%s: buffer %d is already complete", FN, args->buffer_index);
  char *msg = xstrndup(args->error_message ? (const char *)args->error_message : "",
                       args->error_message ? args->error_message_size : 0);
  event_complete(s->ready, args->error_code, msg);
  free(msg);
  return NULL;
}

static PJRT_Error *impl_PJRT_AsyncHostToDeviceTransferManager_AddMetadata(
    PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args *args) {
  CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args);
  conf_tm *t = NULL;
  PJRT_Error *err = get_tm(FN, args->transfer_manager, &t);
  if (err) return err;
  const PJRT_NamedValue *md = args->transfer_metadata;
  if (args->num_metadata && !md) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: transfer_metadata is NULL", FN);
  for (size_t i = 0; i < args->num_metadata; i++)
    if (md[i].struct_size < (size_t)PJRT_NamedValue_STRUCT_SIZE)
      return size_error("PJRT_NamedValue", PJRT_NamedValue_STRUCT_SIZE, md[i].struct_size);
  for (size_t i = 0; i < args->num_metadata; i++) {
    sbuf b = {0};
    nv_dump(&b, &md[i]);
    record_append(R_async_metadata, b.p ? b.p : "");
    free(b.p);
  }
  return NULL;
}

/* DMA mappings */

typedef struct dma_entry {
  struct dma_entry *next;
  void *data;
  size_t size;
} dma_entry;

static dma_entry *g_dma;
static pthread_mutex_t g_dma_mu = PTHREAD_MUTEX_INITIALIZER;

static PJRT_Error *impl_PJRT_Client_DmaMap(PJRT_Client_DmaMap_Args *args) {
  CHECK_ARGS(PJRT_Client_DmaMap_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  if (!args->data || !args->size)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: data is NULL or size is 0", FN);
  pthread_mutex_lock(&g_dma_mu);
  for (dma_entry *e = g_dma; e; e = e->next) {
    if ((char *)args->data < (char *)e->data + e->size && (char *)e->data < (char *)args->data + args->size) {
      pthread_mutex_unlock(&g_dma_mu);
      return err_new(PJRT_Error_Code_ALREADY_EXISTS, "%s: [%p, +%zu) overlaps a mapped range", FN, args->data,
                     args->size);
    }
  }
  dma_entry *e = xcalloc(1, sizeof(*e));
  e->data = args->data;
  e->size = args->size;
  e->next = g_dma;
  g_dma = e;
  pthread_mutex_unlock(&g_dma_mu);
  live_add(LK_dma_mapping, 1);
  char rec[64];
  snprintf(rec, sizeof(rec), "map:%zu", args->size);
  record_append(R_dma, rec);
  return NULL;
}

static PJRT_Error *impl_PJRT_Client_DmaUnmap(PJRT_Client_DmaUnmap_Args *args) {
  CHECK_ARGS(PJRT_Client_DmaUnmap_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  pthread_mutex_lock(&g_dma_mu);
  for (dma_entry **pe = &g_dma; *pe; pe = &(*pe)->next) {
    if ((*pe)->data == args->data) {
      dma_entry *e = *pe;
      *pe = e->next;
      pthread_mutex_unlock(&g_dma_mu);
      char rec[64];
      snprintf(rec, sizeof(rec), "unmap:%zu", e->size);
      record_append(R_dma, rec);
      free(e);
      live_add(LK_dma_mapping, -1);
      return NULL;
    }
  }
  pthread_mutex_unlock(&g_dma_mu);
  return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %p is not the start of a mapped range", FN, args->data);
}

/* Process info */

static PJRT_Error *impl_PJRT_Client_UpdateGlobalProcessInfo(PJRT_Client_UpdateGlobalProcessInfo_Args *args) {
  CHECK_ARGS(PJRT_Client_UpdateGlobalProcessInfo_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  const PJRT_ProcessInfo *pi = args->process_infos;
  if (args->num_process_infos && !pi) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: process_infos is NULL", FN);
  for (size_t i = 0; i < args->num_process_infos; i++) CHECK_NESTED(PJRT_ProcessInfo, &pi[i], "process info");
  for (size_t i = 0; i < args->num_process_infos; i++) {
    sbuf b = {0};
    sb_printf(&b, "task=%d:incarnation=%" PRIu64 ":state=%d:error=%d:", pi[i].task_id, (uint64_t)pi[i].incarnation_id,
              (int)pi[i].state, pi[i].error_code);
    if (pi[i].error_message) sb_putn(&b, (const char *)pi[i].error_message, pi[i].error_message_size);
    record_append(R_process_info, b.p);
    free(b.p);
  }
  return NULL;
}

/* Alias buffers */

#define MAGIC_ALIAS 0x43414c53u /* CALS */
typedef struct conf_alias {
  uint32_t magic;
  storage *st;       /* the alias buffer's storage */
  conf_event *ready; /* the alias buffer's readiness */
  int32_t type;
  size_t ndims;
  int64_t dims[MAX_RANK];
  size_t nbytes;
} conf_alias;

static PJRT_Error *impl_PJRT_Client_CreateAliasBuffer(PJRT_Client_CreateAliasBuffer_Args *args) {
  CHECK_ARGS(PJRT_Client_CreateAliasBuffer_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  conf_memory *mem = NULL;
  if ((err = resolve_target(FN, c, NULL, args->memory, &mem))) return err;
  const int64_t *dims = args->shape_dims;
  size_t nbytes;
  if ((err = check_shape(FN, args->shape_element_type, dims, args->shape_num_dims, &nbytes))) return err;
  /* XLA's GPU client refuses an alias buffer without a layout ("Buffer's
   * on-device shape has no layout"). */
  if (!args->shape_layout)
    return err_new(PJRT_Error_Code_FAILED_PRECONDITION, "%s: shape_layout is NULL: Buffer's on-device shape has no layout", FN);
  if (!layout_is_default(args->shape_layout, args->shape_element_type, dims, args->shape_num_dims))
    return err_new(PJRT_Error_Code_UNIMPLEMENTED, "%s: only the default layout is supported", FN);
  storage *st = storage_new(c, mem->dev, nbytes);
  conf_event *ready = event_new(false);
  conf_alias *a = xcalloc(1, sizeof(*a));
  a->magic = MAGIC_ALIAS;
  a->st = storage_ref(st);
  a->ready = event_ref(ready);
  a->type = args->shape_element_type;
  a->ndims = args->shape_num_dims;
  for (size_t k = 0; k < a->ndims; k++) a->dims[k] = dims[k];
  a->nbytes = nbytes;
  live_add(LK_alias_callback, 1);
  args->alias_buffer = (void *)buffer_new(c, mem, args->shape_element_type, dims, args->shape_num_dims, st, ready);
  args->fulfill_alias_buffer_cb = (void *)a;
  return NULL;
}

static void alias_free(conf_alias *a) {
  a->magic = MAGIC_DEAD;
  storage_unref(a->st);
  event_unref(a->ready);
  free(a);
  live_add(LK_alias_callback, -1);
}

static PJRT_Error *impl_PJRT_Client_FulfillAliasBuffer(PJRT_Client_FulfillAliasBuffer_Args *args) {
  CHECK_ARGS(PJRT_Client_FulfillAliasBuffer_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  conf_alias *a = args->fulfill_alias_buffer_cb;
  if (!a || a->magic != MAGIC_ALIAS) return bad_handle(FN, "PJRT_FulfillAliasBufferCallback", a);
  if (args->status_code != 0) {
    /* XLA's plugin logs such a fulfilment as an error. */
    count(C_alias_buffers_failed);
    char *msg = xstrndup(args->error_message ? (const char *)args->error_message : "",
                         args->error_message ? args->error_message_size : 0);
    event_complete(a->ready, args->status_code, msg);
    free(msg);
    alias_free(a);
    return NULL;
  }
  conf_buffer *b = NULL;
  if ((err = get_buffer(FN, args->buffer, &b))) return err;
  bool same = b->type == a->type && b->ndims == a->ndims;
  for (size_t k = 0; same && k < a->ndims; k++) same = b->dims[k] == a->dims[k];
  if (!same) {
    char want[160];
    shape_str(want, sizeof(want), a->type, a->dims, a->ndims);
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: buffer #%" PRIu64 " (%s) does not have the alias's shape %s",
                   FN, b->id, b->shape, want);
  }
  storage *st = NULL;
  conf_event *ready = NULL;
  if ((err = buffer_use(FN, b, &st, &ready))) return err;
  copy_job *j = xcalloc(1, sizeof(*j));
  j->src = st;
  j->dst_st = storage_ref(a->st);
  j->size = a->nbytes;
  j->done = event_ref(a->ready);
  run_after(&ready, 1, copy_run, j);
  event_unref(ready);
  alias_free(a);
  return NULL;
}

/* Device assignments, as a serialized xla.DeviceAssignmentProto. */

static void pb_varint(sbuf *b, uint64_t v) {
  char c;
  while (v >= 0x80) {
    c = (char)(v | 0x80);
    sb_putn(b, &c, 1);
    v >>= 7;
  }
  c = (char)v;
  sb_putn(b, &c, 1);
}

static PJRT_Error *impl_PJRT_LoadedExecutable_GetDeviceAssignment(
    PJRT_LoadedExecutable_GetDeviceAssignment_Args *args) {
  CHECK_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment_Args);
  conf_loaded *l = NULL;
  PJRT_Error *err = get_loaded(FN, args->executable, &l);
  if (err) return err;
  if (l->prog->portable) {
    /* As XLA for a portable executable: no assignment, 0 bytes. */
    conf_serialized *s = serialized_new(LK_serialized_device_assignment, "", 0);
    args->serialized_bytes = s->bytes;
    args->serialized_bytes_size = 0;
    args->serialized_device_assignment = (void *)s;
    args->serialized_device_assignment_deleter = (void *)serialized_deleter;
    return NULL;
  }
  int R = l->prog->replicas, P = l->prog->partitions;
  sbuf b = {0};
  pb_varint(&b, (1 << 3) | 0); /* replica_count */
  pb_varint(&b, (uint64_t)R);
  pb_varint(&b, (2 << 3) | 0); /* computation_count */
  pb_varint(&b, (uint64_t)P);
  for (int c = 0; c < P; c++) {
    sbuf ids = {0};
    for (int r = 0; r < R; r++) pb_varint(&ids, (uint64_t)((conf_device *)l->dev_ptrs[r * P + c])->index);
    sbuf cd = {0};
    pb_varint(&cd, (1 << 3) | 2); /* replica_device_ids, packed */
    pb_varint(&cd, ids.len);
    sb_putn(&cd, ids.p, ids.len);
    pb_varint(&b, (3 << 3) | 2); /* computation_devices */
    pb_varint(&b, cd.len);
    sb_putn(&b, cd.p, cd.len);
    free(ids.p);
    free(cd.p);
  }
  conf_serialized *s = serialized_new(LK_serialized_device_assignment, b.p, b.len);
  free(b.p);
  args->serialized_bytes = s->bytes;
  args->serialized_bytes_size = s->len;
  args->serialized_device_assignment = (void *)s;
  args->serialized_device_assignment_deleter = (void *)serialized_deleter;
  return NULL;
}

/* Raw copies whose destination comes later */

#define MAGIC_FUTURE 0x43524657u /* CRFW */
typedef struct conf_raw_future {
  uint32_t magic;
  storage *src;
  conf_event *ready; /* the buffer's readiness */
  conf_event *done;  /* the event handed out */
  size_t offset, size;
} conf_raw_future;

static void raw_future_ready(PJRT_Buffer_CopyRawToHostFuture_Callback_Args *args) {
  if (!args || args->struct_size < (size_t)PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE) {
    count(C_struct_size_failures);
    return;
  }
  conf_raw_future *f = args->callback_data;
  if (!f || f->magic != MAGIC_FUTURE) {
    count(C_invalid_handles);
    return;
  }
  f->magic = MAGIC_DEAD;
  if (args->error_code != 0 || (!args->dst && f->size)) {
    char *msg = args->error_code ? xstrndup(args->error_message ? (const char *)args->error_message : "",
                                            args->error_message ? args->error_message_size : 0)
                                 : xstrndup("PJRT_Buffer_CopyRawToHostFuture: dst is NULL", 44);
    event_complete(f->done, args->error_code ? args->error_code : PJRT_Error_Code_INVALID_ARGUMENT, msg);
    free(msg);
    event_unref(f->done);
    storage_unref(f->src);
  } else {
    copy_job *j = xcalloc(1, sizeof(*j));
    j->src = f->src;
    j->dst = args->dst;
    j->offset = f->offset;
    j->size = f->size;
    j->done = f->done;
    run_after(&f->ready, 1, copy_run, j);
  }
  event_unref(f->ready);
  free(f);
  live_add(LK_raw_future, -1);
}

static PJRT_Error *impl_PJRT_Buffer_CopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args *args) {
  CHECK_ARGS(PJRT_Buffer_CopyRawToHostFuture_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  if (args->offset < 0 || args->transfer_size < 0 || (uint64_t)args->offset + (uint64_t)args->transfer_size > b->nbytes)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: range [%" PRId64 ", %" PRId64 ") is outside the %zu bytes of buffer #%" PRIu64, FN,
                   args->offset, args->offset + args->transfer_size, b->nbytes, b->id);
  storage *st = NULL;
  conf_event *ready = NULL;
  if ((err = buffer_use(FN, b, &st, &ready))) return err;
  conf_raw_future *f = xcalloc(1, sizeof(*f));
  f->magic = MAGIC_FUTURE;
  f->src = st;
  f->ready = ready;
  conf_event *ev = event_new(true);
  f->done = event_ref(ev);
  f->offset = (size_t)args->offset;
  f->size = (size_t)args->transfer_size;
  live_add(LK_raw_future, 1);
  args->event = (void *)ev;
  args->callback_data = (void *)f;
  args->future_ready_callback = (void *)raw_future_ready;
  return NULL;
}

/* Poisoning */

static PJRT_Error *impl_PJRT_Device_PoisonExecution(PJRT_Device_PoisonExecution_Args *args) {
  CHECK_ARGS(PJRT_Device_PoisonExecution_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  if (args->error_code == 0) return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: error_code must not be OK", FN);
  bool poisoned = false;
  pthread_mutex_lock(&g_pending_mu);
  exec_job *found = NULL;
  for (exec_job *j = g_pending_jobs; j; j = j->pnext)
    if (j->device_ordinal == d->index && j->launch_id == args->launch_id && !j->poison_code) found = j;
  if (found) { /* the list is newest first: found is the earliest */
    found->poison_code = args->error_code;
    size_t ml = args->error_message ? args->error_message_size : 0;
    snprintf(found->poison_msg, sizeof(found->poison_msg), "%.*s", (int)(ml < 500 ? ml : 500),
             args->error_message ? (const char *)args->error_message : "");
    poisoned = true;
  }
  pthread_mutex_unlock(&g_pending_mu);
  if (poisoned) count(C_poisoned_executions);
  args->poisoned = poisoned;
  sbuf b = {0};
  sb_printf(&b, "device=%d:launch_id=%d:code=%d:poisoned=%d:payload=", d->index, (int)args->launch_id,
            (int)args->error_code, poisoned);
  const PJRT_NamedValue *pl = args->payload;
  for (size_t i = 0; pl && args->struct_size > offsetof(PJRT_Device_PoisonExecution_Args, num_payload) &&
                     i < args->num_payload;
       i++) {
    if (i) sb_puts(&b, ",");
    nv_dump(&b, &pl[i]);
  }
  record_append(R_poison, b.p);
  free(b.p);
  return NULL;
}

/* Async tracking events */

#define MAGIC_TRACKING 0x43415445u /* CATE */
typedef struct conf_tracking {
  uint32_t magic;
} conf_tracking;

static PJRT_Error *impl_PJRT_Device_CreateAsyncTrackingEvent(PJRT_Device_CreateAsyncTrackingEvent_Args *args) {
  CHECK_ARGS(PJRT_Device_CreateAsyncTrackingEvent_Args);
  conf_device *d = NULL;
  PJRT_Error *err = get_device(FN, args->device, &d);
  if (err) return err;
  conf_tracking *t = xcalloc(1, sizeof(*t));
  t->magic = MAGIC_TRACKING;
  live_add(LK_async_tracking_event, 1);
  sbuf b = {0};
  sb_printf(&b, "device=%d:", d->index);
  if (args->description) sb_putn(&b, (const char *)args->description, args->description_size);
  record_append(R_async_tracking, b.p);
  free(b.p);
  args->event = (void *)t;
  return NULL;
}

static PJRT_Error *impl_PJRT_AsyncTrackingEvent_Destroy(PJRT_AsyncTrackingEvent_Destroy_Args *args) {
  CHECK_ARGS(PJRT_AsyncTrackingEvent_Destroy_Args);
  conf_tracking *t = args->event;
  if (!t || t->magic != MAGIC_TRACKING) return bad_handle(FN, "PJRT_AsyncTrackingEvent", t);
  t->magic = MAGIC_DEAD;
  free(t);
  live_add(LK_async_tracking_event, -1);
  return NULL;
}

/* Donation with a control dependency */

#define MAGIC_DONATION 0x43444f4eu /* CDON */
typedef struct conf_donation {
  uint32_t magic;
  conf_event *dep; /* completed by the dependency callback */
} conf_donation;

static void donation_ready(PJRT_Buffer_DonateWithControlDependency_Callback_Args *args) {
  if (!args || args->struct_size < (size_t)PJRT_Buffer_DonateWithControlDependency_Callback_Args_STRUCT_SIZE) {
    count(C_struct_size_failures);
    return;
  }
  conf_donation *d = args->callback_data;
  if (!d || d->magic != MAGIC_DONATION) {
    count(C_invalid_handles);
    return;
  }
  d->magic = MAGIC_DEAD;
  char *msg = xstrndup(args->error_message ? (const char *)args->error_message : "",
                       args->error_message ? args->error_message_size : 0);
  event_complete(d->dep, args->error_code, msg);
  free(msg);
  event_unref(d->dep);
  free(d);
  live_add(LK_donation, -1);
}

static PJRT_Error *impl_PJRT_Buffer_DonateWithControlDependency(PJRT_Buffer_DonateWithControlDependency_Args *args) {
  CHECK_ARGS(PJRT_Buffer_DonateWithControlDependency_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  storage *st = NULL;
  conf_event *ready = NULL;
  if ((err = buffer_use(FN, b, &st, &ready))) return err;
  /* The new buffer is ready when both the data and the dependency are. */
  conf_event *dep = event_new(false);
  conf_event *out_ready = event_new(false);
  conf_event *both[2] = {ready, dep};
  run_after(both, 2, chain_complete_cb, event_ref(out_ready));
  event_unref(ready);
  conf_donation *d = xcalloc(1, sizeof(*d));
  d->magic = MAGIC_DONATION;
  d->dep = dep;
  live_add(LK_donation, 1);
  args->out_buffer = (void *)buffer_new(b->client, b->mem, b->type, b->dims, b->ndims, st, out_ready);
  buffer_delete(b); /* donated */
  args->callback_data = (void *)d;
  args->dependency_ready_callback = (void *)donation_ready;
  return NULL;
}

/* Bitcast */

static PJRT_Error *impl_PJRT_Buffer_Bitcast(PJRT_Buffer_Bitcast_Args *args) {
  CHECK_ARGS(PJRT_Buffer_Bitcast_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  const int64_t *dims = args->dims;
  size_t nbytes;
  if ((err = check_shape(FN, args->element_type, dims, args->num_dims, &nbytes))) return err;
  if (!layout_is_default(args->device_layout, args->element_type, dims, args->num_dims))
    return err_new(PJRT_Error_Code_UNIMPLEMENTED, "%s: only the default layout is supported", FN);
  if (nbytes != b->nbytes) {
    char want[160];
    shape_str(want, sizeof(want), args->element_type, dims, args->num_dims);
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: %s has %zu bytes but buffer #%" PRIu64 " (%s) has %zu", FN, want, nbytes, b->id, b->shape,
                   b->nbytes);
  }
  storage *st = NULL;
  conf_event *ready = NULL;
  if ((err = buffer_use(FN, b, &st, &ready))) return err;
  args->out_buffer = (void *)buffer_new(b->client, b->mem, args->element_type, dims, args->num_dims, st, ready);
  return NULL;
}

/* The serialized shape is handed out without a separate handle: its deleter
 * gets the bytes, which sit at the end of this header. */
#define MAGIC_SHAPE 0x43534850u /* CSHP */
typedef struct shape_blob {
  uint32_t magic;
  char bytes[];
} shape_blob;

static void serialized_shape_deleter(const char *p) {
  shape_blob *s = p ? (shape_blob *)(void *)(p - offsetof(shape_blob, bytes)) : NULL;
  if (!s || s->magic != MAGIC_SHAPE) {
    count(C_invalid_handles);
    return;
  }
  s->magic = MAGIC_DEAD;
  free(s);
  live_add(LK_serialized_shape, -1);
}

/* Canonical shapes: a serialized xla.ShapeProto {element_type = 2 (the
 * PrimitiveType, = the XLA FFI data type number), dimensions = 3 (packed),
 * layout = 5 {minor_to_major = 1 (packed), memory_space = 8}}. */

static PJRT_Error *impl_PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(
    PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args *args) {
  CHECK_ARGS(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, (void *)args->topology, &t);
  if (err) return err;
  if (args->memory_space_kind_id != 0 && args->memory_space_kind_id != 1)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT, "%s: unknown memory space kind id %d (the kinds are 0 and 1)", FN,
                   args->memory_space_kind_id);
  const int64_t *dims = args->dims;
  size_t nbytes;
  if ((err = check_shape(FN, args->element_type, dims, args->num_dims, &nbytes))) return err;
  sbuf b = {0}, packed = {0}, layout = {0};
  pb_varint(&b, (2 << 3) | 0);
  pb_varint(&b, (uint64_t)type_lookup(args->element_type)->ffi);
  for (size_t i = 0; i < args->num_dims; i++) pb_varint(&packed, (uint64_t)dims[i]);
  if (args->num_dims) {
    pb_varint(&b, (3 << 3) | 2);
    pb_varint(&b, packed.len);
    sb_putn(&b, packed.p, packed.len);
  }
  free(packed.p);
  packed = (sbuf){0};
  for (size_t i = 0; i < args->num_dims; i++) pb_varint(&packed, (uint64_t)(args->num_dims - 1 - i));
  if (args->num_dims) {
    pb_varint(&layout, (1 << 3) | 2);
    pb_varint(&layout, packed.len);
    sb_putn(&layout, packed.p, packed.len);
  }
  pb_varint(&layout, (8 << 3) | 0);
  pb_varint(&layout, (uint64_t)args->memory_space_kind_id);
  pb_varint(&b, (5 << 3) | 2);
  pb_varint(&b, layout.len);
  sb_putn(&b, layout.p, layout.len);
  free(packed.p);
  free(layout.p);
  shape_blob *s = xmalloc(sizeof(shape_blob) + b.len + 1);
  s->magic = MAGIC_SHAPE;
  memcpy(s->bytes, b.p, b.len);
  s->bytes[b.len] = 0;
  live_add(LK_serialized_shape, 1);
  args->serialized_shape = s->bytes;
  args->serialized_shape_size = b.len;
  args->serialized_shape_deleter = (void *)serialized_shape_deleter;
  free(b.p);
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Layouts extension                                                         */
/* ------------------------------------------------------------------------- */

static conf_layout *layout_new(size_t n) {
  conf_layout *l = xcalloc(1, sizeof(*l));
  l->magic = MAGIC_LAYOUT;
  l->n = n;
  for (size_t i = 0; i < n; i++) l->m2m[i] = (int64_t)(n - 1 - i);
  live_add(LK_layout, 1);
  return l;
}

static PJRT_Error *get_layout(const char *fn, void *p, conf_layout **out) {
  conf_layout *l = p;
  if (!l || l->magic != MAGIC_LAYOUT) return bad_handle(fn, "PJRT_Layouts_MemoryLayout", p);
  *out = l;
  return NULL;
}

static PJRT_Error *impl_PJRT_Layouts_MemoryLayout_Destroy(PJRT_Layouts_MemoryLayout_Destroy_Args *args) {
  CHECK_ARGS(PJRT_Layouts_MemoryLayout_Destroy_Args);
  conf_layout *l = NULL;
  PJRT_Error *err = get_layout(FN, args->layout, &l);
  if (err) return err;
  if (l->owned_by_executable)
    return err_new(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: this layout is owned by its PJRT_Executable and must not be destroyed", FN);
  l->magic = MAGIC_DEAD;
  free(l);
  live_add(LK_layout, -1);
  return NULL;
}

static PJRT_Error *impl_PJRT_Layouts_MemoryLayout_Serialize(PJRT_Layouts_MemoryLayout_Serialize_Args *args) {
  CHECK_ARGS(PJRT_Layouts_MemoryLayout_Serialize_Args);
  conf_layout *l = NULL;
  PJRT_Error *err = get_layout(FN, args->layout, &l);
  if (err) return err;
  sbuf b = {0};
  sb_puts(&b, "{");
  for (size_t i = 0; i < l->n; i++) sb_printf(&b, "%s%" PRId64, i ? "," : "", l->m2m[i]);
  sb_puts(&b, "}");
  conf_serialized *s = serialized_new(LK_serialized_layout, b.p, b.len);
  free(b.p);
  args->serialized_bytes = s->bytes;
  args->serialized_bytes_size = s->len;
  args->serialized_layout = (void *)s;
  args->serialized_layout_deleter = (void *)serialized_deleter;
  return NULL;
}

static PJRT_Error *impl_PJRT_Layouts_PJRT_Client_GetDefaultLayout(PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args *args) {
  CHECK_ARGS(PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args);
  conf_client *c = NULL;
  PJRT_Error *err = get_client(FN, args->client, &c);
  if (err) return err;
  size_t nbytes;
  if ((err = check_shape(FN, args->type, (const int64_t *)args->dims, args->num_dims, &nbytes))) return err;
  args->layout = (void *)layout_new(args->num_dims);
  return NULL;
}

static PJRT_Error *impl_PJRT_Layouts_PJRT_Topology_GetDefaultLayout(
    PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args *args) {
  CHECK_ARGS(PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args);
  conf_topology *t = NULL;
  PJRT_Error *err = get_topology(FN, args->topology_description, &t);
  if (err) return err;
  size_t nbytes;
  if ((err = check_shape(FN, args->type, (const int64_t *)args->dims, args->num_dims, &nbytes))) return err;
  args->layout = (void *)layout_new(args->num_dims);
  return NULL;
}

static PJRT_Error *impl_PJRT_Layouts_PJRT_Buffer_MemoryLayout(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args *args) {
  CHECK_ARGS(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args);
  conf_buffer *b = NULL;
  PJRT_Error *err = get_buffer(FN, args->buffer, &b);
  if (err) return err;
  args->layout = (void *)layout_new(b->ndims);
  return NULL;
}

static void exec_layouts(conf_exec *e) {
  pthread_mutex_lock(&e->mu);
  if (!e->out_layouts) {
    program *p = e->prog;
    e->out_layouts = xcalloc((size_t)p->nout, sizeof(conf_layout));
    e->out_layout_ptrs = xcalloc((size_t)p->nout, sizeof(void *));
    e->in_layouts = xcalloc((size_t)p->nin, sizeof(conf_layout));
    e->in_layout_ptrs = xcalloc((size_t)p->nin, sizeof(void *));
    for (int i = 0; i < p->nout; i++) {
      conf_layout *l = &e->out_layouts[i];
      l->magic = MAGIC_LAYOUT;
      l->owned_by_executable = true;
      l->n = p->out[i].ndims;
      for (size_t k = 0; k < l->n; k++) l->m2m[k] = (int64_t)(l->n - 1 - k);
      e->out_layout_ptrs[i] = l;
    }
    for (int i = 0; i < p->nin; i++) {
      conf_layout *l = &e->in_layouts[i];
      l->magic = MAGIC_LAYOUT;
      l->owned_by_executable = true;
      l->n = p->in[i].ndims;
      for (size_t k = 0; k < l->n; k++) l->m2m[k] = (int64_t)(l->n - 1 - k);
      e->in_layout_ptrs[i] = l;
    }
    live_add(LK_layout, p->nout + p->nin);
  }
  pthread_mutex_unlock(&e->mu);
}

static PJRT_Error *impl_PJRT_Layouts_PJRT_Executable_GetOutputLayouts(
    PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args *args) {
  CHECK_ARGS(PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  exec_layouts(e);
  args->num_outputs = (size_t)e->prog->nout;
  args->layouts = (void *)e->out_layout_ptrs;
  return NULL;
}

static PJRT_Error *impl_PJRT_Layouts_PJRT_Executable_GetParameterLayouts(
    PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args *args) {
  CHECK_ARGS(PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args);
  conf_exec *e = NULL;
  PJRT_Error *err = get_exec(FN, args->executable, &e);
  if (err) return err;
  exec_layouts(e);
  args->num_parameters = (size_t)e->prog->nin;
  args->layouts = (void *)e->in_layout_ptrs;
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* Memory descriptions extension                                             */
/* ------------------------------------------------------------------------- */

static PJRT_Error *impl_PJRT_DeviceDescription_MemoryDescriptions(PJRT_DeviceDescription_MemoryDescriptions_Args *args) {
  CHECK_ARGS(PJRT_DeviceDescription_MemoryDescriptions_Args);
  conf_devdesc *d = NULL;
  PJRT_Error *err = get_devdesc(FN, args->device_description, &d);
  if (err) return err;
  args->memory_descriptions = (void *)d->md_ptrs;
  args->num_memory_descriptions = 2;
  args->default_memory_index = MEM_DEVICE;
  return NULL;
}

static PJRT_Error *impl_PJRT_MemoryDescription_Kind(PJRT_MemoryDescription_Kind_Args *args) {
  CHECK_ARGS(PJRT_MemoryDescription_Kind_Args);
  const conf_memdesc *m = args->memory_description;
  if (!m || m->magic != MAGIC_MEMDESC) return bad_handle(FN, "PJRT_MemoryDescription", m);
  args->kind = (void *)m->kind;
  args->kind_size = strlen(m->kind);
  args->kind_id = m->kind_id;
  return NULL;
}

/* ------------------------------------------------------------------------- */
/* GetPjrtApi                                                                */
/* ------------------------------------------------------------------------- */

/* Slots implemented above (all others return UNIMPLEMENTED). */
#define IMPLEMENTED_SLOTS(IMPL) \
  IMPL(PJRT_Error_Destroy) \
  IMPL(PJRT_Error_Message) \
  IMPL(PJRT_Error_GetCode) \
  IMPL(PJRT_Plugin_Initialize) \
  IMPL(PJRT_Plugin_Attributes) \
  IMPL(PJRT_Event_Destroy) \
  IMPL(PJRT_Event_IsReady) \
  IMPL(PJRT_Event_Error) \
  IMPL(PJRT_Event_Await) \
  IMPL(PJRT_Event_OnReady) \
  IMPL(PJRT_Client_Create) \
  IMPL(PJRT_Client_Destroy) \
  IMPL(PJRT_Client_PlatformName) \
  IMPL(PJRT_Client_ProcessIndex) \
  IMPL(PJRT_Client_PlatformVersion) \
  IMPL(PJRT_Client_Devices) \
  IMPL(PJRT_Client_AddressableDevices) \
  IMPL(PJRT_Client_LookupDevice) \
  IMPL(PJRT_Client_LookupAddressableDevice) \
  IMPL(PJRT_Client_AddressableMemories) \
  IMPL(PJRT_Client_Compile) \
  IMPL(PJRT_Client_DefaultDeviceAssignment) \
  IMPL(PJRT_Client_BufferFromHostBuffer) \
  IMPL(PJRT_DeviceDescription_Id) \
  IMPL(PJRT_DeviceDescription_ProcessIndex) \
  IMPL(PJRT_DeviceDescription_Attributes) \
  IMPL(PJRT_DeviceDescription_Kind) \
  IMPL(PJRT_DeviceDescription_DebugString) \
  IMPL(PJRT_DeviceDescription_ToString) \
  IMPL(PJRT_Device_GetDescription) \
  IMPL(PJRT_Device_IsAddressable) \
  IMPL(PJRT_Device_LocalHardwareId) \
  IMPL(PJRT_Device_AddressableMemories) \
  IMPL(PJRT_Device_DefaultMemory) \
  IMPL(PJRT_Device_MemoryStats) \
  IMPL(PJRT_Memory_Id) \
  IMPL(PJRT_Memory_Kind) \
  IMPL(PJRT_Memory_DebugString) \
  IMPL(PJRT_Memory_ToString) \
  IMPL(PJRT_Memory_AddressableByDevices) \
  IMPL(PJRT_Executable_Destroy) \
  IMPL(PJRT_Executable_Name) \
  IMPL(PJRT_Executable_NumReplicas) \
  IMPL(PJRT_Executable_NumPartitions) \
  IMPL(PJRT_Executable_NumOutputs) \
  IMPL(PJRT_Executable_SizeOfGeneratedCodeInBytes) \
  IMPL(PJRT_Executable_GetCostAnalysis) \
  IMPL(PJRT_Executable_OutputMemoryKinds) \
  IMPL(PJRT_Executable_OptimizedProgram) \
  IMPL(PJRT_Executable_Serialize) \
  IMPL(PJRT_LoadedExecutable_Destroy) \
  IMPL(PJRT_LoadedExecutable_GetExecutable) \
  IMPL(PJRT_LoadedExecutable_AddressableDevices) \
  IMPL(PJRT_LoadedExecutable_Delete) \
  IMPL(PJRT_LoadedExecutable_IsDeleted) \
  IMPL(PJRT_LoadedExecutable_Execute) \
  IMPL(PJRT_Executable_DeserializeAndLoad) \
  IMPL(PJRT_LoadedExecutable_Fingerprint) \
  IMPL(PJRT_Buffer_Destroy) \
  IMPL(PJRT_Buffer_ElementType) \
  IMPL(PJRT_Buffer_Dimensions) \
  IMPL(PJRT_Buffer_UnpaddedDimensions) \
  IMPL(PJRT_Buffer_DynamicDimensionIndices) \
  IMPL(PJRT_Buffer_GetMemoryLayout) \
  IMPL(PJRT_Buffer_OnDeviceSizeInBytes) \
  IMPL(PJRT_Buffer_Device) \
  IMPL(PJRT_Buffer_Memory) \
  IMPL(PJRT_Buffer_Delete) \
  IMPL(PJRT_Buffer_IsDeleted) \
  IMPL(PJRT_Buffer_CopyToDevice) \
  IMPL(PJRT_Buffer_ToHostBuffer) \
  IMPL(PJRT_Buffer_IsOnCpu) \
  IMPL(PJRT_Buffer_ReadyEvent) \
  IMPL(PJRT_Buffer_UnsafePointer) \
  IMPL(PJRT_Buffer_IncreaseExternalReferenceCount) \
  IMPL(PJRT_Buffer_DecreaseExternalReferenceCount) \
  IMPL(PJRT_Buffer_OpaqueDeviceMemoryDataPointer) \
  IMPL(PJRT_TopologyDescription_Create) \
  IMPL(PJRT_TopologyDescription_Destroy) \
  IMPL(PJRT_TopologyDescription_PlatformName) \
  IMPL(PJRT_TopologyDescription_PlatformVersion) \
  IMPL(PJRT_TopologyDescription_GetDeviceDescriptions) \
  IMPL(PJRT_TopologyDescription_Serialize) \
  IMPL(PJRT_TopologyDescription_Attributes) \
  IMPL(PJRT_Compile) \
  IMPL(PJRT_Executable_OutputElementTypes) \
  IMPL(PJRT_Executable_OutputDimensions) \
  IMPL(PJRT_Buffer_CopyToMemory) \
  IMPL(PJRT_Client_CreateViewOfDeviceBuffer) \
  IMPL(PJRT_Executable_Fingerprint) \
  IMPL(PJRT_Client_TopologyDescription) \
  IMPL(PJRT_Executable_GetCompiledMemoryStats) \
  IMPL(PJRT_Memory_Kind_Id) \
  IMPL(PJRT_ExecuteContext_Create) \
  IMPL(PJRT_ExecuteContext_Destroy) \
  IMPL(PJRT_Buffer_CopyRawToHost) \
  IMPL(PJRT_Client_CreateUninitializedBuffer) \
  IMPL(PJRT_TopologyDescription_Deserialize) \
  IMPL(PJRT_Client_CreateErrorBuffer) \
  IMPL(PJRT_Executable_GetCompileOptions) \
  IMPL(PJRT_Event_Create) \
  IMPL(PJRT_Event_Set) \
  IMPL(PJRT_Device_GetAttributes) \
  IMPL(PJRT_Client_Load) \
  IMPL(PJRT_LoadedExecutable_AddressableDeviceLogicalIds) \
  IMPL(PJRT_Error_ForEachPayload) \
  IMPL(PJRT_TopologyDescription_Fingerprint) \
  IMPL(PJRT_Executable_ParameterMemoryKinds) \
  IMPL(PJRT_Device_ClearMemoryStats) \
  IMPL(PJRT_TopologyDescription_GetMemorySpaceKindIds) \
  IMPL(PJRT_Client_CreateBuffersForAsyncHostToDevice) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_Destroy) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_TransferData) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_Device) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_BufferCount) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_BufferSize) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_SetBufferError) \
  IMPL(PJRT_AsyncHostToDeviceTransferManager_AddMetadata) \
  IMPL(PJRT_Client_DmaMap) \
  IMPL(PJRT_Client_DmaUnmap) \
  IMPL(PJRT_Client_UpdateGlobalProcessInfo) \
  IMPL(PJRT_Client_CreateAliasBuffer) \
  IMPL(PJRT_Client_FulfillAliasBuffer) \
  IMPL(PJRT_LoadedExecutable_GetDeviceAssignment) \
  IMPL(PJRT_Buffer_CopyRawToHostFuture) \
  IMPL(PJRT_Device_PoisonExecution) \
  IMPL(PJRT_Device_CreateAsyncTrackingEvent) \
  IMPL(PJRT_AsyncTrackingEvent_Destroy) \
  IMPL(PJRT_Buffer_DonateWithControlDependency) \
  IMPL(PJRT_Buffer_Bitcast) \
  IMPL(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace)

static PJRT_Api g_api;
static PJRT_FFI g_ext_ffi;
static PJRT_Gpu_Custom_Call g_ext_gpu;
static PJRT_Layouts_Extension g_ext_layouts;
static PJRT_MemoryDescriptions_Extension g_ext_memdesc;
static pthread_mutex_t g_api_mu = PTHREAD_MUTEX_INITIALIZER;

static bool env_int(const char *name, long *out) {
  const char *s = getenv(name);
  if (!s || !*s) return false;
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (end == s || *end) return false;
  *out = v;
  return true;
}

static void init_extensions(void) {
  memset(&g_ext_memdesc, 0, sizeof(g_ext_memdesc));
  g_ext_memdesc.base.struct_size = PJRT_MemoryDescriptions_Extension_STRUCT_SIZE;
  g_ext_memdesc.base.type = PJRT_Extension_Type_MemoryDescriptions;
  g_ext_memdesc.base.next = NULL;
  g_ext_memdesc.PJRT_DeviceDescription_MemoryDescriptions = (void *)impl_PJRT_DeviceDescription_MemoryDescriptions;
  g_ext_memdesc.PJRT_MemoryDescription_Kind = (void *)impl_PJRT_MemoryDescription_Kind;

  memset(&g_ext_layouts, 0, sizeof(g_ext_layouts));
  g_ext_layouts.base.struct_size = PJRT_Layouts_Extension_STRUCT_SIZE;
  g_ext_layouts.base.type = PJRT_Extension_Type_Layouts;
  g_ext_layouts.base.next = &g_ext_memdesc.base;
  g_ext_layouts.PJRT_Layouts_MemoryLayout_Destroy = (void *)impl_PJRT_Layouts_MemoryLayout_Destroy;
  g_ext_layouts.PJRT_Layouts_MemoryLayout_Serialize = (void *)impl_PJRT_Layouts_MemoryLayout_Serialize;
  g_ext_layouts.PJRT_Layouts_PJRT_Client_GetDefaultLayout = (void *)impl_PJRT_Layouts_PJRT_Client_GetDefaultLayout;
  g_ext_layouts.PJRT_Layouts_PJRT_Buffer_MemoryLayout = (void *)impl_PJRT_Layouts_PJRT_Buffer_MemoryLayout;
  g_ext_layouts.PJRT_Layouts_PJRT_Topology_GetDefaultLayout = (void *)impl_PJRT_Layouts_PJRT_Topology_GetDefaultLayout;
  g_ext_layouts.PJRT_Layouts_PJRT_Executable_GetOutputLayouts =
      (void *)impl_PJRT_Layouts_PJRT_Executable_GetOutputLayouts;
  g_ext_layouts.PJRT_Layouts_PJRT_Executable_GetParameterLayouts =
      (void *)impl_PJRT_Layouts_PJRT_Executable_GetParameterLayouts;

  memset(&g_ext_gpu, 0, sizeof(g_ext_gpu));
  g_ext_gpu.base.struct_size = PJRT_Gpu_Custom_Call_STRUCT_SIZE;
  g_ext_gpu.base.type = PJRT_Extension_Type_Gpu_Custom_Call;
  g_ext_gpu.base.next = &g_ext_layouts.base;
  g_ext_gpu.custom_call = (void *)ext_gpu_register_custom_call;

  memset(&g_ext_ffi, 0, sizeof(g_ext_ffi));
  g_ext_ffi.base.struct_size = sizeof(PJRT_FFI); /* the FFI extension header has no STRUCT_SIZE macro */
  g_ext_ffi.base.type = PJRT_Extension_Type_FFI;
  g_ext_ffi.base.next = &g_ext_gpu.base;
  g_ext_ffi.type_register = (void *)ext_ffi_type_register;
  g_ext_ffi.user_data_add = (void *)ext_ffi_user_data_add;
  g_ext_ffi.register_handler = (void *)ext_ffi_register_handler;
  if (atomic_load(&g_minor) < OLD_FFI_EXTENSION_BEFORE_MINOR) {
    g_ext_ffi.base.struct_size = offsetof(PJRT_FFI, register_handler);
    g_ext_ffi.register_handler = NULL;
  }
}

EXPORT const PJRT_Api *GetPjrtApi(void) {
  count(C_get_pjrt_api);
  PJRT_Api a;
  memset(&a, 0, sizeof(a));
  a.struct_size = PJRT_Api_STRUCT_SIZE;
  a.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  a.pjrt_api_version.extension_start = NULL;
  a.pjrt_api_version.major_version = PJRT_API_MAJOR;
  a.pjrt_api_version.minor_version = PJRT_API_MINOR;
#define X(i, n, p, r) a.n = (void *)unimpl_##n;
  CONF_SLOTS(X)
#undef X
#define IMPL(n) a.n = (void *)impl_##n;
  IMPLEMENTED_SLOTS(IMPL)
#undef IMPL
  long v;
  if (env_int("CONFORMANCE_PJRT_MAJOR", &v)) a.pjrt_api_version.major_version = (int)v;
  if (env_int("CONFORMANCE_PJRT_MINOR", &v)) {
    a.pjrt_api_version.minor_version = (int)v;
    size_t reported = 0;
#define X(i, n, p, r)         \
  if ((p) > v) a.n = NULL;    \
  if ((r) <= v) reported++;
    CONF_SLOTS(X)
#undef X
    a.struct_size = 40 + 8 * reported;
  }
  atomic_store(&g_no_output_dims, env_int("CONFORMANCE_NO_OUTPUT_DIMS", &v) && v != 0);
  atomic_store(&g_token_outputs, env_int("CONFORMANCE_TOKEN_OUTPUTS", &v) && v != 0);
  const char *larger = getenv("CONFORMANCE_REQUIRE_LARGER");
  pthread_mutex_lock(&g_api_mu);
  snprintf(g_require_larger, sizeof(g_require_larger), "%s", larger ? larger : "");
  atomic_store(&g_minor, a.pjrt_api_version.minor_version);
  init_extensions();
  a.extension_start = &g_ext_ffi.base;
  g_api = a;
  pthread_mutex_unlock(&g_api_mu);
  return &g_api;
}
