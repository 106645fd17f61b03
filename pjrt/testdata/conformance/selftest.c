/*
 * selftest.c - a C driver that loads the conformance plugin with dlopen and
 * exercises it through the PJRT C API, independently of the Go binding.
 * internal/testplugin's tests build and run it (also handy under valgrind or
 * with -fsanitize=address). Usage: selftest /path/to/conformance.so
 * Exits 0 on success; prints "FAIL: ..." lines otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pjrt_abi.h"

typedef PJRT_Error *(*api_fn)(void *);
static const PJRT_Api *api;
static int64_t (*c_live)(const char *);
static int64_t (*c_counter)(const char *);
static const char *(*c_last_client_options)(void);
static const char *(*c_last_execute)(void);
static const uint8_t *(*c_last_compile_options)(size_t *);
static const char *(*c_gpu_custom_calls)(void);
static const char *(*c_ffi_handlers)(void);
static int failures;

#define FAIL(...)                                  \
  do {                                             \
    fprintf(stderr, "FAIL (line %d): ", __LINE__); \
    fprintf(stderr, __VA_ARGS__);                  \
    fprintf(stderr, "\n");                         \
    if (++failures > 50) abort();                  \
  } while (0)
#define CHECK(cond, ...) \
  do {                   \
    if (!(cond)) FAIL(__VA_ARGS__); \
  } while (0)

#define CALL(fn, a) ((api_fn)api->fn)(&(a))
#define ARGS(T, v) \
  T v;             \
  memset(&v, 0, sizeof(v)); \
  v.struct_size = T##_STRUCT_SIZE

/* Returns the error's code and copies its message into msg; destroys it. */
static int take_error(PJRT_Error *e, char *msg, size_t cap) {
  if (!e) {
    if (msg) msg[0] = 0;
    return 0;
  }
  ARGS(PJRT_Error_Message_Args, m);
  m.error = e;
  ((void (*)(void *))api->PJRT_Error_Message)(&m);
  if (msg) snprintf(msg, cap, "%.*s", (int)m.message_size, (const char *)m.message);
  ARGS(PJRT_Error_GetCode_Args, g);
  g.error = e;
  PJRT_Error *ge = CALL(PJRT_Error_GetCode, g);
  if (ge) FAIL("PJRT_Error_GetCode failed");
  ARGS(PJRT_Error_Destroy_Args, d);
  d.error = e;
  ((void (*)(void *))api->PJRT_Error_Destroy)(&d);
  return g.code;
}

#define OK(expr)                                           \
  do {                                                     \
    char _m[2048];                                         \
    int _c = take_error((expr), _m, sizeof(_m));           \
    if (_c) FAIL("%s: error %d: %s", #expr, _c, _m);        \
  } while (0)

#define EXPECT_ERR(expr, code, substr)                                                          \
  do {                                                                                          \
    char _m[2048];                                                                              \
    int _c = take_error((expr), _m, sizeof(_m));                                                \
    if (_c != (code) || !strstr(_m, (substr)))                                                  \
      FAIL("%s: got error %d \"%s\", want %d containing \"%s\"", #expr, _c, _m, (code), (substr)); \
  } while (0)

static void await_event(PJRT_Event *ev, int want_code, const char *substr) {
  ARGS(PJRT_Event_Await_Args, a);
  a.event = ev;
  char m[2048];
  int c = take_error(CALL(PJRT_Event_Await, a), m, sizeof(m));
  if (c != want_code || (substr && !strstr(m, substr)))
    FAIL("await: got %d \"%s\", want %d \"%s\"", c, m, want_code, substr ? substr : "");
  ARGS(PJRT_Event_Destroy_Args, d);
  d.event = ev;
  OK(CALL(PJRT_Event_Destroy, d));
}

static PJRT_Buffer *from_host(PJRT_Client *c, PJRT_Device *dev, int32_t type, const void *data, const int64_t *dims,
                              size_t nd, int sem) {
  ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
  a.client = c;
  a.data = (void *)data;
  a.type = type;
  a.dims = (void *)dims;
  a.num_dims = nd;
  a.host_buffer_semantics = sem;
  a.device = dev;
  OK(CALL(PJRT_Client_BufferFromHostBuffer, a));
  if (sem < 2) {
    await_event(a.done_with_host_buffer, 0, NULL);
  } else { /* zero copy: done only when the buffer is released */
    ARGS(PJRT_Event_Destroy_Args, d);
    d.event = a.done_with_host_buffer;
    OK(CALL(PJRT_Event_Destroy, d));
  }
  return a.buffer;
}

static void to_host(PJRT_Buffer *b, void *dst, size_t n) {
  ARGS(PJRT_Buffer_ToHostBuffer_Args, a);
  a.src = b;
  a.dst = dst;
  a.dst_size = n;
  OK(CALL(PJRT_Buffer_ToHostBuffer, a));
  if (a.event) await_event(a.event, 0, NULL);
}

static void destroy_buffer(PJRT_Buffer *b) {
  ARGS(PJRT_Buffer_Destroy_Args, a);
  a.buffer = b;
  OK(CALL(PJRT_Buffer_Destroy, a));
}

static PJRT_LoadedExecutable *compile(PJRT_Client *c, const char *text) {
  ARGS(PJRT_Program, p);
  p.code = (void *)text;
  p.code_size = strlen(text);
  p.format = "mlir";
  p.format_size = 4;
  ARGS(PJRT_Client_Compile_Args, a);
  a.client = c;
  a.program = &p;
  a.compile_options = "opts";
  a.compile_options_size = 4;
  OK(CALL(PJRT_Client_Compile, a));
  return a.executable;
}

static void destroy_loaded(PJRT_LoadedExecutable *e) {
  ARGS(PJRT_LoadedExecutable_Destroy_Args, a);
  a.executable = e;
  OK(CALL(PJRT_LoadedExecutable_Destroy, a));
}

/* Executes on one device with n args; returns the error of Execute. */
static PJRT_Error *execute1(PJRT_LoadedExecutable *e, PJRT_Buffer **in, size_t n, PJRT_Buffer **out,
                            PJRT_Event **done, PJRT_ExecuteContext *ctx) {
  ARGS(PJRT_ExecuteOptions, o);
  o.launch_id = 3;
  o.context = ctx;
  PJRT_Buffer *const *lists[1] = {in};
  PJRT_Buffer **outs[1] = {out};
  ARGS(PJRT_LoadedExecutable_Execute_Args, a);
  a.executable = e;
  a.options = &o;
  a.argument_lists = (void *)lists;
  a.num_devices = 1;
  a.num_args = n;
  a.output_lists = (void *)outs;
  a.device_complete_events = done ? (void *)done : NULL;
  return CALL(PJRT_LoadedExecutable_Execute, a);
}

/* OnReady callback bookkeeping */
static _Atomic int cb_calls, cb_errors;
static void on_ready(PJRT_Error *err, void *arg) {
  (void)arg;
  if (err) {
    cb_errors++;
    take_error(err, NULL, 0);
  }
  cb_calls++;
}

/* FFI handlers (XLA FFI C API 0.3 call frames, raw layout per ffi_layout.tsv). */
typedef struct {
  size_t struct_size;
  void *extension_start;
  int32_t dtype;
  void *data;
  int64_t rank;
  int64_t *dims;
} ffi_buffer;

static void *ffi_frame_ext(void *frame) { return *(void **)((char *)frame + 8); }
static void *ffi_frame_api(void *frame) { return *(void **)((char *)frame + 16); }
static void *ffi_frame_ctx(void *frame) { return *(void **)((char *)frame + 24); }
static int64_t ffi_nargs(void *frame) { return *(int64_t *)((char *)frame + 40 + 16); }
static ffi_buffer *ffi_arg(void *frame, int i) { return (*(ffi_buffer ***)((char *)frame + 40 + 32))[i]; }
static ffi_buffer *ffi_ret(void *frame, int i) { return (*(ffi_buffer ***)((char *)frame + 80 + 32))[i]; }
static int64_t g_ud_type_id;
static _Atomic int deleter_calls;
static int64_t g_user_value = 1000;
static void ud_deleter(void *p) {
  if (p == &g_user_value) deleter_calls++;
}

static void fill_metadata(void *ext, int minor) {
  /* XLA_FFI_Metadata_Extension: base(24) + metadata* at 24 */
  char *md = *(char **)((char *)ext + 24);
  *(int *)(md + 8 + 16) = 0;      /* api_version.major_version */
  *(int *)(md + 8 + 20) = minor;  /* api_version.minor_version */
  *(uint32_t *)(md + 32) = 1;     /* traits */
}

/* out[i] = in0[i] + user_data (from the execute context) */
static void *ffi_add_ud(void *frame) {
  void *ext = ffi_frame_ext(frame);
  if (ext) {
    fill_metadata(ext, 3);
    return NULL;
  }
  char *fapi = ffi_frame_api(frame);
  struct {
    size_t struct_size;
    void *ext;
    void *ctx;
    int64_t *type_id;
    void *data;
  } get = {40, NULL, ffi_frame_ctx(frame), &g_ud_type_id, NULL};
  void *err = ((void *(*)(void *))(*(void **)(fapi + 96)))(&get);
  if (err) return err;
  int64_t add = *(int64_t *)get.data;
  if (ffi_nargs(frame) != 1) {
    struct {
      size_t s;
      void *e;
      const char *msg;
      int32_t code;
    } ca = {28, NULL, "bad nargs", 3};
    return ((void *(*)(void *))(*(void **)(fapi + 48)))(&ca);
  }
  ffi_buffer *in = ffi_arg(frame, 0), *out = ffi_ret(frame, 0);
  for (int64_t i = 0; i < in->dims[0]; i++) ((float *)out->data)[i] = ((float *)in->data)[i] + (float)add;
  return NULL;
}

static void *ffi_fails(void *frame) {
  void *ext = ffi_frame_ext(frame);
  if (ext) {
    fill_metadata(ext, 3);
    return NULL;
  }
  char *fapi = ffi_frame_api(frame);
  struct {
    size_t s;
    void *e;
    const char *msg;
    int32_t code;
  } ca = {28, NULL, "handler says no", 9};
  return ((void *(*)(void *))(*(void **)(fapi + 48)))(&ca);
}

static void *ffi_no_metadata(void *frame) {
  (void)frame;
  return NULL;
}

/* Concurrency */
typedef struct {
  PJRT_Client *c;
  PJRT_Device *d;
  PJRT_LoadedExecutable *e;
  int iters;
  int bad;
} worker_arg;

static void *worker(void *p) {
  worker_arg *w = p;
  for (int k = 0; k < w->iters; k++) {
    float x[4] = {(float)k, 1, 2, 3}, y[4] = {1, 1, 1, 1}, z[4];
    int64_t dims[1] = {4};
    PJRT_Buffer *a = from_host(w->c, w->d, PJRT_Buffer_Type_F32, x, dims, 1, k % 2);
    PJRT_Buffer *b = from_host(w->c, w->d, PJRT_Buffer_Type_F32, y, dims, 1, 0);
    PJRT_Buffer *in[2] = {a, b}, *out[1] = {NULL};
    OK(execute1(w->e, in, 2, out, NULL, NULL));
    ARGS(PJRT_Event_OnReady_Args, r);
    ARGS(PJRT_Buffer_ReadyEvent_Args, re);
    re.buffer = out[0];
    OK(CALL(PJRT_Buffer_ReadyEvent, re));
    r.event = re.event;
    r.callback = (void *)on_ready;
    OK(CALL(PJRT_Event_OnReady, r));
    ARGS(PJRT_Event_Destroy_Args, d);
    d.event = re.event;
    OK(CALL(PJRT_Event_Destroy, d)); /* callbacks still run */
    destroy_buffer(a);               /* while the computation may be pending */
    destroy_buffer(b);
    to_host(out[0], z, sizeof(z));
    if (z[0] != (float)k + 1 || z[3] != 4) w->bad++;
    destroy_buffer(out[0]);
  }
  return NULL;
}

static PJRT_Extension_Base *find_ext(int type) {
  for (PJRT_Extension_Base *e = api->extension_start; e; e = e->next)
    if (e->type == type) return e;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s plugin.so\n", argv[0]);
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  const PJRT_Api *(*get)(void) = (const PJRT_Api *(*)(void))dlsym(h, "GetPjrtApi");
  c_live = (int64_t(*)(const char *))dlsym(h, "conformance_live");
  c_counter = (int64_t(*)(const char *))dlsym(h, "conformance_counter");
  c_last_client_options = (const char *(*)(void))dlsym(h, "conformance_last_client_options");
  c_last_execute = (const char *(*)(void))dlsym(h, "conformance_last_execute");
  c_last_compile_options = (const uint8_t *(*)(size_t *))dlsym(h, "conformance_last_compile_options");
  c_gpu_custom_calls = (const char *(*)(void))dlsym(h, "conformance_gpu_custom_calls");
  c_ffi_handlers = (const char *(*)(void))dlsym(h, "conformance_ffi_handlers");
  if (!get || !c_live || !c_counter || !c_last_client_options || !c_last_execute || !c_last_compile_options ||
      !c_gpu_custom_calls || !c_ffi_handlers) {
    fprintf(stderr, "missing symbols\n");
    return 2;
  }

  /* Version and minor-version emulation. */
  setenv("CONFORMANCE_PJRT_MINOR", "45", 1);
  api = get();
  CHECK(api->pjrt_api_version.minor_version == 45, "minor override");
  CHECK(api->PJRT_ExecuteContext_Create == NULL, "slot present from 52 must be NULL at 45");
  CHECK(api->PJRT_Executable_GetCompiledMemoryStats != NULL, "slot present from 40");
  CHECK(api->struct_size == 40 + 8 * 96, "struct_size at minor 45: %zu", api->struct_size);
  unsetenv("CONFORMANCE_PJRT_MINOR");
  api = get();
  CHECK(api->pjrt_api_version.major_version == 0 && api->pjrt_api_version.minor_version == 114, "version");
  CHECK(api->struct_size == PJRT_Api_STRUCT_SIZE, "struct_size");
  CHECK(((const unsigned char *)api)[32] == 0 && *(const int *)((const char *)api + 36) == 114, "byte offsets");
  CHECK(c_counter("plugin_initialize") == 0, "no initialize yet");
  CHECK(c_counter("no_such_counter") == -1 && c_live("no_such_kind") == -1, "unknown names");
  CHECK(find_ext(PJRT_Extension_Type_FFI) && find_ext(PJRT_Extension_Type_Gpu_Custom_Call) &&
            find_ext(PJRT_Extension_Type_Layouts) && find_ext(PJRT_Extension_Type_MemoryDescriptions),
        "extensions");

  {
    ARGS(PJRT_Plugin_Initialize_Args, a);
    OK(CALL(PJRT_Plugin_Initialize, a));
    CHECK(c_counter("plugin_initialize") == 1, "initialize counted");
    ARGS(PJRT_Plugin_Attributes_Args, at);
    OK(CALL(PJRT_Plugin_Attributes, at));
    const PJRT_NamedValue *nv = at.attributes;
    int found = 0;
    for (size_t i = 0; i < at.num_attributes; i++) {
      if (nv[i].name_size == 11 && !memcmp(nv[i].name, "xla_version", 11) && nv[i].int64_value == 2) found++;
      if (nv[i].name_size == 25 && !memcmp(nv[i].name, "stablehlo_current_version", 25) && nv[i].value_size == 3 &&
          ((const int64_t *)nv[i].int64_array_value)[1] == 13)
        found++;
      if (nv[i].name_size == 17 && !memcmp(nv[i].name, "conformance_float", 17) && nv[i].float_value == 0.5f) found++;
    }
    CHECK(found == 3, "attributes (%d)", found);
  }

  /* struct_size checks */
  {
    ARGS(PJRT_Client_Create_Args, a);
    a.struct_size = 72;
    EXPECT_ERR(CALL(PJRT_Client_Create, a), PJRT_Error_Code_INVALID_ARGUMENT,
               "Unexpected PJRT_Client_Create_Args size: expected at least 88, got 72. Check installed software "
               "versions.");
    CHECK(c_counter("struct_size_failures") == 1, "struct_size_failures");
  }
  /* Unimplemented slots */
  {
    ARGS(PJRT_CopyToDeviceStream_TotalBytes_Args, a);
    EXPECT_ERR(CALL(PJRT_CopyToDeviceStream_TotalBytes, a), PJRT_Error_Code_UNIMPLEMENTED,
               "PJRT_CopyToDeviceStream_TotalBytes is not implemented by the conformance plugin");
  }

  /* Client */
  PJRT_NamedValue opts[5];
  memset(opts, 0, sizeof(opts));
  int64_t vis[2] = {0, 1};
  for (int i = 0; i < 5; i++) opts[i].struct_size = PJRT_NamedValue_STRUCT_SIZE;
  opts[0].name = "device_count", opts[0].name_size = 12, opts[0].type = PJRT_NamedValue_kInt64, opts[0].int64_value = 2;
  opts[1].name = "memory_fraction", opts[1].name_size = 15, opts[1].type = PJRT_NamedValue_kFloat, opts[1].float_value = 0.5f;
  opts[2].name = "visible_devices", opts[2].name_size = 15, opts[2].type = PJRT_NamedValue_kInt64List,
  opts[2].int64_array_value = vis, opts[2].value_size = 2;
  opts[3].name = "preallocate", opts[3].name_size = 11, opts[3].type = PJRT_NamedValue_kBool, opts[3].bool_value = false;
  opts[4].name = "name", opts[4].name_size = 4, opts[4].type = PJRT_NamedValue_kString, opts[4].string_value = "xy",
  opts[4].value_size = 1;
  ARGS(PJRT_Client_Create_Args, cc);
  cc.create_options = opts;
  cc.num_options = 5;
  OK(CALL(PJRT_Client_Create, cc));
  PJRT_Client *client = cc.client;
  CHECK(!strcmp(c_last_client_options(),
                "device_count=int64:2;memory_fraction=float:0.5;visible_devices=int64list:0,1;preallocate=bool:false;"
                "name=string:x"),
        "options record: %s", c_last_client_options());
  {
    PJRT_NamedValue f = opts[4];
    f.name = "fail_create", f.name_size = 11, f.string_value = "boom!", f.value_size = 5;
    ARGS(PJRT_Client_Create_Args, a);
    a.create_options = &f;
    a.num_options = 1;
    EXPECT_ERR(CALL(PJRT_Client_Create, a), PJRT_Error_Code_INTERNAL, "boom!");
  }
  PJRT_Device *dev0, *dev1;
  {
    ARGS(PJRT_Client_AddressableDevices_Args, a);
    a.client = client;
    OK(CALL(PJRT_Client_AddressableDevices, a));
    CHECK(a.num_addressable_devices == 2, "2 devices");
    PJRT_Device *const *ds = a.addressable_devices;
    dev0 = ds[0];
    dev1 = ds[1];
    ARGS(PJRT_Device_GetDescription_Args, g);
    g.device = dev1;
    OK(CALL(PJRT_Device_GetDescription, g));
    ARGS(PJRT_DeviceDescription_Id_Args, id);
    id.device_description = g.device_description;
    OK(CALL(PJRT_DeviceDescription_Id, id));
    CHECK(id.id == 1, "device id");
    ARGS(PJRT_Client_LookupAddressableDevice_Args, l);
    l.client = client;
    l.local_hardware_id = 101;
    OK(CALL(PJRT_Client_LookupAddressableDevice, l));
    CHECK(l.addressable_device == dev1, "lookup by hardware id");
    ARGS(PJRT_Client_DefaultDeviceAssignment_Args, da);
    int assign[4];
    da.client = client;
    da.num_replicas = 2;
    da.num_partitions = 2;
    da.default_assignment = assign;
    da.default_assignment_size = 4;
    OK(CALL(PJRT_Client_DefaultDeviceAssignment, da));
    CHECK(assign[0] == 0 && assign[1] == 1 && assign[2] == 0 && assign[3] == 1, "assignment");
    ARGS(PJRT_Device_AddressableMemories_Args, am);
    am.device = dev1;
    OK(CALL(PJRT_Device_AddressableMemories, am));
    PJRT_Memory *const *ms = am.memories;
    ARGS(PJRT_Memory_Id_Args, mi);
    mi.memory = ms[1];
    OK(CALL(PJRT_Memory_Id, mi));
    CHECK(am.num_memories == 2 && mi.id == 3, "memory id");
  }

  /* Buffers */
  {
    float data[6] = {1, 2, 3, 4, 5, 6}, back[6];
    int64_t dims[2] = {2, 3};
    for (int sem = 0; sem < 4; sem++) {
      PJRT_Buffer *b = from_host(client, dev1, PJRT_Buffer_Type_F32, data, dims, 2, sem);
      if (sem < 2) { /* zero-copy buffers still use data */
      }
      memset(back, 0, sizeof(back));
      to_host(b, back, sizeof(back));
      CHECK(!memcmp(back, data, sizeof(data)), "round trip sem %d", sem);
      destroy_buffer(b);
    }
    /* strides: column-major 2x2 int32 */
    int32_t cm[4] = {1, 3, 2, 4}, out[4];
    int64_t d2[2] = {2, 2}, strides[2] = {4, 8};
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
    a.client = client;
    a.data = cm;
    a.type = PJRT_Buffer_Type_S32;
    a.dims = d2;
    a.num_dims = 2;
    a.byte_strides = strides;
    a.num_byte_strides = 2;
    a.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
    a.device = dev0;
    OK(CALL(PJRT_Client_BufferFromHostBuffer, a));
    await_event(a.done_with_host_buffer, 0, NULL);
    to_host(a.buffer, out, sizeof(out));
    CHECK(out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4, "strided copy");
    /* size query, too-small dst */
    ARGS(PJRT_Buffer_ToHostBuffer_Args, q);
    q.src = a.buffer;
    OK(CALL(PJRT_Buffer_ToHostBuffer, q));
    CHECK(q.dst_size == 16 && q.event == NULL, "size query");
    q.dst = out;
    q.dst_size = 8;
    EXPECT_ERR(CALL(PJRT_Buffer_ToHostBuffer, q), PJRT_Error_Code_INVALID_ARGUMENT, "smaller");
    /* OnReady on an already-complete event: immediate, same thread */
    int before = cb_calls;
    ARGS(PJRT_Buffer_ReadyEvent_Args, re);
    re.buffer = a.buffer;
    OK(CALL(PJRT_Buffer_ReadyEvent, re));
    ARGS(PJRT_Event_Await_Args, aw);
    aw.event = re.event;
    OK(CALL(PJRT_Event_Await, aw));
    ARGS(PJRT_Event_OnReady_Args, r);
    r.event = re.event;
    r.callback = (void *)on_ready;
    OK(CALL(PJRT_Event_OnReady, r));
    CHECK(cb_calls == before + 1, "immediate callback");
    ARGS(PJRT_Event_Destroy_Args, ed);
    ed.event = re.event;
    OK(CALL(PJRT_Event_Destroy, ed));
    /* Deleted buffers */
    ARGS(PJRT_Buffer_Delete_Args, del);
    del.buffer = a.buffer;
    OK(CALL(PJRT_Buffer_Delete, del));
    q.dst = NULL;
    EXPECT_ERR(CALL(PJRT_Buffer_ToHostBuffer, q), PJRT_Error_Code_FAILED_PRECONDITION, "has been deleted");
    destroy_buffer(a.buffer);
    /* Event_Error on a pending event */
    ARGS(PJRT_Event_Create_Args, ec);
    OK(CALL(PJRT_Event_Create, ec));
    ARGS(PJRT_Event_Error_Args, ee);
    ee.event = ec.event;
    EXPECT_ERR(CALL(PJRT_Event_Error, ee), PJRT_Error_Code_FAILED_PRECONDITION, "not ready");
    ARGS(PJRT_Event_Set_Args, es);
    es.event = ec.event;
    es.error_code = PJRT_Error_Code_ABORTED;
    es.error_message = "set by test";
    es.error_message_size = 11;
    OK(CALL(PJRT_Event_Set, es));
    EXPECT_ERR(CALL(PJRT_Event_Error, ee), PJRT_Error_Code_ABORTED, "set by test");
    await_event(ec.event, PJRT_Error_Code_ABORTED, "set by test");
    /* zero-copy: done_with_host_buffer completes when the buffer goes away */
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, z);
    z.client = client;
    z.data = data;
    z.type = PJRT_Buffer_Type_F32;
    z.dims = dims;
    z.num_dims = 2;
    z.host_buffer_semantics = PJRT_HostBufferSemantics_kMutableZeroCopy;
    z.device = dev0;
    OK(CALL(PJRT_Client_BufferFromHostBuffer, z));
    ARGS(PJRT_Event_IsReady_Args, ir);
    ir.event = z.done_with_host_buffer;
    OK(CALL(PJRT_Event_IsReady, ir));
    CHECK(!ir.is_ready, "zero-copy done event pending while the buffer lives");
    ARGS(PJRT_Buffer_UnsafePointer_Args, up);
    up.buffer = z.buffer;
    OK(CALL(PJRT_Buffer_UnsafePointer, up));
    CHECK(up.buffer_pointer == (uintptr_t)data, "zero copy pointer");
    destroy_buffer(z.buffer);
    await_event(z.done_with_host_buffer, 0, NULL);
  }

  /* Compile and execute */
  {
    PJRT_LoadedExecutable *add = compile(client, "// conformance: add f32[4] f32[4] -> f32[4]\nmodule {}\n");
    size_t olen = 0;
    const uint8_t *ob = c_last_compile_options(&olen);
    CHECK(olen == 4 && !memcmp(ob, "opts", 4), "compile options recorded");
    float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, z[4];
    int64_t dims[1] = {4};
    PJRT_Buffer *a = from_host(client, dev0, PJRT_Buffer_Type_F32, x, dims, 1, 1);
    PJRT_Buffer *b = from_host(client, dev0, PJRT_Buffer_Type_F32, y, dims, 1, 0);
    PJRT_Buffer *in[2] = {a, b}, *out[1];
    PJRT_Event *done[1];
    OK(execute1(add, in, 2, out, done, NULL));
    CHECK(!strcmp(c_last_execute(), "devices=1;args=2;launch_id=3;non_donatable=;context=0;complete_events=1"),
          "execute record: %s", c_last_execute());
    await_event(done[0], 0, NULL);
    to_host(out[0], z, sizeof(z));
    CHECK(z[0] == 11 && z[3] == 44, "add result");
    destroy_buffer(out[0]);
    EXPECT_ERR(execute1(add, in, 1, out, NULL, NULL), PJRT_Error_Code_INVALID_ARGUMENT, "expected 2 arguments, got 1");
    int64_t d5[1] = {5};
    float x5[5] = {0};
    PJRT_Buffer *wrong = from_host(client, dev0, PJRT_Buffer_Type_F32, x5, d5, 1, 0);
    PJRT_Buffer *in2[2] = {a, wrong};
    EXPECT_ERR(execute1(add, in2, 2, out, NULL, NULL), PJRT_Error_Code_INVALID_ARGUMENT, "argument 1");
    destroy_buffer(wrong);

    /* executable metadata */
    ARGS(PJRT_LoadedExecutable_GetExecutable_Args, ge);
    ge.loaded_executable = add;
    OK(CALL(PJRT_LoadedExecutable_GetExecutable, ge));
    ARGS(PJRT_Executable_Name_Args, nm);
    nm.executable = ge.executable;
    OK(CALL(PJRT_Executable_Name, nm));
    CHECK(nm.executable_name_size == 15 && !memcmp(nm.executable_name, "conformance_add", 15), "name");
    ARGS(PJRT_Executable_OutputDimensions_Args, od);
    od.executable = ge.executable;
    OK(CALL(PJRT_Executable_OutputDimensions, od));
    CHECK(od.num_outputs == 1 && ((const size_t *)od.dim_sizes)[0] == 1 && ((const int64_t *)od.dims)[0] == 4,
          "output dims");
    ARGS(PJRT_Executable_Serialize_Args, se);
    se.executable = ge.executable;
    OK(CALL(PJRT_Executable_Serialize, se));
    ARGS(PJRT_Executable_DeserializeAndLoad_Args, dl);
    dl.client = client;
    dl.serialized_executable = se.serialized_bytes;
    dl.serialized_executable_size = se.serialized_bytes_size;
    OK(CALL(PJRT_Executable_DeserializeAndLoad, dl));
    ((void (*)(void *))se.serialized_executable_deleter)(se.serialized_executable);
    destroy_loaded(dl.loaded_executable);
    dl.serialized_executable = "garbage";
    dl.serialized_executable_size = 7;
    EXPECT_ERR(CALL(PJRT_Executable_DeserializeAndLoad, dl), PJRT_Error_Code_INVALID_ARGUMENT, "CONFEXEC");
    ARGS(PJRT_Executable_Destroy_Args, xd);
    xd.executable = ge.executable;
    OK(CALL(PJRT_Executable_Destroy, xd));

    /* fail op: the error arrives on events */
    PJRT_LoadedExecutable *fail = compile(client, "// conformance: fail f32[4] -> f32[4]\n");
    OK(execute1(fail, in, 1, out, done, NULL));
    await_event(done[0], PJRT_Error_Code_INTERNAL, "conformance: requested failure");
    ARGS(PJRT_Buffer_ReadyEvent_Args, re);
    re.buffer = out[0];
    OK(CALL(PJRT_Buffer_ReadyEvent, re));
    await_event(re.event, PJRT_Error_Code_INTERNAL, "requested failure");
    /* a failed output as input propagates the failure */
    PJRT_LoadedExecutable *id = compile(client, "// conformance: identity f32[4] -> f32[4]\n");
    PJRT_Buffer *chained[1];
    OK(execute1(id, out, 1, chained, done, NULL));
    await_event(done[0], PJRT_Error_Code_INTERNAL, "requested failure");
    destroy_buffer(chained[0]);
    destroy_buffer(out[0]);
    destroy_loaded(fail);
    destroy_loaded(id);

    /* malformed programs */
    ARGS(PJRT_Program, p);
    p.code = "module {}";
    p.code_size = 9;
    p.format = "mlir";
    p.format_size = 4;
    ARGS(PJRT_Client_Compile_Args, ca);
    ca.client = client;
    ca.program = &p;
    EXPECT_ERR(CALL(PJRT_Client_Compile, ca), PJRT_Error_Code_INVALID_ARGUMENT, "conformance directive");
    p.code = "// conformance: mul f32[] -> f32[]";
    p.code_size = strlen(p.code);
    EXPECT_ERR(CALL(PJRT_Client_Compile, ca), PJRT_Error_Code_INVALID_ARGUMENT, "conformance directive");
    p.format = "onnx";
    EXPECT_ERR(CALL(PJRT_Client_Compile, ca), PJRT_Error_Code_INVALID_ARGUMENT, "\"onnx\"");
    char bc[64] = "ML\xefR\x01\x02junk conformance: identity s32[] -> s32[]";
    p.code = bc;
    p.code_size = strlen(bc) + 1;
    p.format = "mlir";
    ca.program = &p;
    OK(CALL(PJRT_Client_Compile, ca));
    destroy_loaded(ca.executable);

    /* FFI */
    PJRT_FFI *ffi = (PJRT_FFI *)find_ext(PJRT_Extension_Type_FFI);
    ARGS(PJRT_FFI_Type_Register_Args, tr);
    PJRT_FFI_Type_Info ti = {(void *)ud_deleter, NULL, NULL};
    tr.type_name = "my_type";
    tr.type_name_size = 7;
    tr.type_info = &ti;
    OK(((api_fn)ffi->type_register)(&tr));
    g_ud_type_id = tr.type_id;
    CHECK(g_ud_type_id > 0, "type id");
    ARGS(PJRT_FFI_Register_Handler_Args, rh);
    rh.target_name = "add_ud";
    rh.target_name_size = 6;
    rh.handler = (void *)ffi_add_ud;
    rh.platform_name = "conformance";
    rh.platform_name_size = 11;
    OK(((api_fn)ffi->register_handler)(&rh));
    rh.target_name = "fails";
    rh.target_name_size = 5;
    rh.handler = (void *)ffi_fails;
    OK(((api_fn)ffi->register_handler)(&rh));
    rh.target_name = "nometa";
    rh.target_name_size = 6;
    rh.handler = (void *)ffi_no_metadata;
    EXPECT_ERR(((api_fn)ffi->register_handler)(&rh), PJRT_Error_Code_INVALID_ARGUMENT, "API version");
    CHECK(!strcmp(c_ffi_handlers(), "add_ud@conformance:api=0.3:traits=0:meta_traits=1;"
                                    "fails@conformance:api=0.3:traits=0:meta_traits=1"),
          "handlers: %s", c_ffi_handlers());
    ARGS(PJRT_ExecuteContext_Create_Args, xc);
    OK(CALL(PJRT_ExecuteContext_Create, xc));
    ARGS(PJRT_FFI_UserData_Add_Args, ua);
    ua.context = xc.context;
    ua.user_data.type_id = g_ud_type_id;
    ua.user_data.data = &g_user_value;
    OK(((api_fn)ffi->user_data_add)(&ua));
    PJRT_LoadedExecutable *fe = compile(client, "// conformance: ffi:add_ud f32[4] -> f32[4]\n");
    OK(execute1(fe, in, 1, out, done, xc.context));
    await_event(done[0], 0, NULL);
    to_host(out[0], z, sizeof(z));
    CHECK(z[0] == 1001 && z[3] == 1004, "ffi result %g", (double)z[0]);
    destroy_buffer(out[0]);
    OK(execute1(fe, in, 1, out, done, NULL)); /* no context: the handler's Get fails */
    await_event(done[0], PJRT_Error_Code_NOT_FOUND, "no user data");
    destroy_buffer(out[0]);
    destroy_loaded(fe);
    fe = compile(client, "// conformance: ffi:fails f32[4] -> f32[4]\n");
    OK(execute1(fe, in, 1, out, done, NULL));
    await_event(done[0], PJRT_Error_Code_FAILED_PRECONDITION, "handler says no");
    destroy_buffer(out[0]);
    destroy_loaded(fe);
    CHECK(c_counter("ffi_handler_calls") == 3, "ffi_handler_calls %" PRId64, c_counter("ffi_handler_calls"));
    ARGS(PJRT_ExecuteContext_Destroy_Args, xd2);
    xd2.context = xc.context;
    OK(CALL(PJRT_ExecuteContext_Destroy, xd2));
    CHECK(deleter_calls == 1, "user data deleter");

    /* GPU custom call extension */
    PJRT_Gpu_Custom_Call *gpu = (PJRT_Gpu_Custom_Call *)find_ext(PJRT_Extension_Type_Gpu_Custom_Call);
    ARGS(PJRT_Gpu_Register_Custom_Call_Args, gc);
    gc.function_name = "my_gpu_call";
    gc.function_name_size = 11;
    gc.api_version = 1;
    gc.handler_execute = (void *)ffi_fails;
    OK(((api_fn)gpu->custom_call)(&gc));
    CHECK(!strcmp(c_gpu_custom_calls(), "my_gpu_call:1"), "gpu calls: %s", c_gpu_custom_calls());

    /* Concurrency */
    enum { NT = 8 };
    pthread_t th[NT];
    worker_arg wa[NT];
    int cb_before = cb_calls;
    for (int i = 0; i < NT; i++) {
      wa[i] = (worker_arg){client, i % 2 ? dev1 : dev0, add, 100, 0};
      pthread_create(&th[i], NULL, worker, &wa[i]);
    }
    for (int i = 0; i < NT; i++) {
      pthread_join(th[i], NULL);
      CHECK(wa[i].bad == 0, "worker %d wrong results", i);
    }
    for (int i = 0; i < 2000 && cb_calls < cb_before + NT * 100; i++) usleep(1000);
    CHECK(cb_calls == cb_before + NT * 100, "callbacks: %d", cb_calls - cb_before);
    CHECK(c_counter("onready_foreign_thread") > 0, "foreign-thread callbacks");

    destroy_buffer(a);
    destroy_buffer(b);
    destroy_loaded(add);
  }


  /* Extensions and less common entry points */
  {
    float x[4] = {1, 2, 3, 4}, z[4];
    int64_t dims[1] = {4};
    PJRT_Buffer *a = from_host(client, dev0, PJRT_Buffer_Type_F32, x, dims, 1, 0);
    /* Layouts extension */
    PJRT_Layouts_Extension *lay = (PJRT_Layouts_Extension *)find_ext(PJRT_Extension_Type_Layouts);
    ARGS(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args, bl);
    bl.buffer = a;
    OK(((api_fn)lay->PJRT_Layouts_PJRT_Buffer_MemoryLayout)(&bl));
    ARGS(PJRT_Layouts_MemoryLayout_Serialize_Args, ls);
    ls.layout = bl.layout;
    OK(((api_fn)lay->PJRT_Layouts_MemoryLayout_Serialize)(&ls));
    CHECK(ls.serialized_bytes_size == 3 && !memcmp(ls.serialized_bytes, "{0}", 3), "serialized layout");
    ((void (*)(void *))ls.serialized_layout_deleter)(ls.serialized_layout);
    ARGS(PJRT_Layouts_MemoryLayout_Destroy_Args, ld);
    ld.layout = bl.layout;
    OK(((api_fn)lay->PJRT_Layouts_MemoryLayout_Destroy)(&ld));
    /* Memory descriptions extension */
    PJRT_MemoryDescriptions_Extension *mdx =
        (PJRT_MemoryDescriptions_Extension *)find_ext(PJRT_Extension_Type_MemoryDescriptions);
    ARGS(PJRT_Device_GetDescription_Args, g);
    g.device = dev0;
    OK(CALL(PJRT_Device_GetDescription, g));
    ARGS(PJRT_DeviceDescription_MemoryDescriptions_Args, md);
    md.device_description = g.device_description;
    OK(((api_fn)mdx->PJRT_DeviceDescription_MemoryDescriptions)(&md));
    CHECK(md.num_memory_descriptions == 2 && md.default_memory_index == 0, "memory descriptions");
    ARGS(PJRT_MemoryDescription_Kind_Args, mk);
    mk.memory_description = ((void *const *)md.memory_descriptions)[1];
    OK(((api_fn)mdx->PJRT_MemoryDescription_Kind)(&mk));
    CHECK(mk.kind_size == 11 && !memcmp(mk.kind, "pinned_host", 11) && mk.kind_id == 1, "memory description kind");
    /* Topology */
    ARGS(PJRT_Client_TopologyDescription_Args, td);
    td.client = client;
    OK(CALL(PJRT_Client_TopologyDescription, td));
    ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args, tdd);
    tdd.topology = td.topology;
    OK(CALL(PJRT_TopologyDescription_GetDeviceDescriptions, tdd));
    CHECK(tdd.num_descriptions == 2, "topology devices");
    ARGS(PJRT_TopologyDescription_Destroy_Args, tdx);
    tdx.topology = td.topology;
    EXPECT_ERR(CALL(PJRT_TopologyDescription_Destroy, tdx), PJRT_Error_Code_INVALID_ARGUMENT, "owned by its PJRT_Client");
    /* Copies */
    ARGS(PJRT_Device_AddressableMemories_Args, am);
    am.device = dev1;
    OK(CALL(PJRT_Device_AddressableMemories, am));
    ARGS(PJRT_Buffer_CopyToMemory_Args, cm);
    cm.buffer = a;
    cm.dst_memory = ((PJRT_Memory *const *)am.memories)[1];
    OK(CALL(PJRT_Buffer_CopyToMemory, cm));
    ARGS(PJRT_Buffer_Device_Args, bd);
    bd.buffer = cm.dst_buffer;
    OK(CALL(PJRT_Buffer_Device, bd));
    CHECK(bd.device == dev1, "copy to memory: device");
    ARGS(PJRT_Buffer_CopyRawToHost_Args, raw);
    raw.buffer = cm.dst_buffer;
    raw.dst = z;
    raw.offset = 4;
    raw.transfer_size = 8;
    memset(z, 0, sizeof(z));
    OK(CALL(PJRT_Buffer_CopyRawToHost, raw));
    await_event(raw.event, 0, NULL);
    CHECK(z[0] == 2 && z[1] == 3, "raw copy");
    destroy_buffer(cm.dst_buffer);
    /* Memory stats */
    ARGS(PJRT_Device_MemoryStats_Args, ms);
    ms.device = dev0;
    OK(CALL(PJRT_Device_MemoryStats, ms));
    CHECK(ms.bytes_in_use >= 16 && ms.peak_bytes_in_use_is_set, "memory stats");
    /* execute_device */
    PJRT_LoadedExecutable *id = compile(client, "// conformance: identity f32[4] -> f32[4]\n");
    ARGS(PJRT_ExecuteOptions, o);
    PJRT_Buffer *in[1] = {a}, *out[1] = {NULL};
    PJRT_Buffer *const *lists[1] = {in};
    PJRT_Buffer **outs[1] = {out};
    ARGS(PJRT_LoadedExecutable_Execute_Args, ex);
    ex.executable = id;
    ex.options = &o;
    ex.argument_lists = (void *)lists;
    ex.num_devices = 1;
    ex.num_args = 1;
    ex.output_lists = (void *)outs;
    ex.execute_device = dev1;
    OK(CALL(PJRT_LoadedExecutable_Execute, ex));
    bd.buffer = out[0];
    OK(CALL(PJRT_Buffer_Device, bd));
    CHECK(bd.device == dev1, "execute_device output placement");
    to_host(out[0], z, sizeof(z));
    CHECK(z[3] == 4, "identity result");
    destroy_buffer(out[0]);
    o.struct_size = 80;
    EXPECT_ERR(CALL(PJRT_LoadedExecutable_Execute, ex), PJRT_Error_Code_INVALID_ARGUMENT,
               "Unexpected PJRT_ExecuteOptions size: expected at least 144, got 80.");
    /* compile options round trip through the executable */
    ARGS(PJRT_LoadedExecutable_GetExecutable_Args, ge);
    ge.loaded_executable = id;
    OK(CALL(PJRT_LoadedExecutable_GetExecutable, ge));
    ARGS(PJRT_Executable_GetCompileOptions_Args, gco);
    gco.executable = ge.executable;
    OK(CALL(PJRT_Executable_GetCompileOptions, gco));
    CHECK(gco.serialized_bytes_size == 4 && !memcmp(gco.serialized_bytes, "opts", 4), "GetCompileOptions");
    ((void (*)(void *))gco.serialized_compile_options_deleter)(gco.serialized_compile_options);
    ARGS(PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args, ol);
    ol.executable = ge.executable;
    OK(((api_fn)lay->PJRT_Layouts_PJRT_Executable_GetOutputLayouts)(&ol));
    CHECK(ol.num_outputs == 1, "output layouts");
    ARGS(PJRT_Executable_Destroy_Args, xd);
    xd.executable = ge.executable;
    OK(CALL(PJRT_Executable_Destroy, xd));
    destroy_loaded(id);
    destroy_buffer(a);
  }

  ARGS(PJRT_Client_Destroy_Args, cd);
  cd.client = client;
  OK(CALL(PJRT_Client_Destroy, cd));
  for (int i = 0; i < 2000 && c_live("event_object") != 0; i++) usleep(1000);
  const char *kinds[] = {"error", "client", "device", "memory", "buffer", "storage", "event", "event_object",
                         "executable", "loaded_executable", "program", "execute_context", "ffi_error",
                         "serialized_executable", "serialized_layout", "serialized_compile_options", "layout",
                         "job"};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    CHECK(c_live(kinds[i]) == 0, "live %s = %" PRId64, kinds[i], c_live(kinds[i]));
  CHECK(cb_errors == 0, "callback errors: %d", (int)cb_errors);
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("selftest: ok\n");
  return 0;
}
