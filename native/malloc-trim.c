/*
 * malloc_trim(3) for Node: hands the glibc heap's free pages back to the
 * system. Node allocates Buffers, TLS state and socket reads with malloc;
 * glibc returns only the top of its heap on free(), so the RSS a burst of
 * garbage Buffers raised stays raised after the garbage is collected
 * (docs/operations.md, "Memory"). malloc_trim(0) releases every free page,
 * wherever it lies. Outside glibc (musl, macOS) trim() does nothing and
 * says so.
 */
#include <node_api.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

/* trim(): true if glibc released memory, false if it had none to release or this is not glibc. */
static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#ifdef __GLIBC__
  released = malloc_trim(0);
#endif
  napi_value result;
  napi_get_boolean(env, released != 0, &result);
  return result;
}

/* supported(): whether trim() can release anything here. */
static napi_value Supported(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
#ifdef __GLIBC__
  napi_get_boolean(env, 1, &result);
#else
  napi_get_boolean(env, 0, &result);
#endif
  return result;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
    {"trim", NULL, Trim, NULL, NULL, NULL, napi_enumerable, NULL},
    {"supported", NULL, Supported, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
