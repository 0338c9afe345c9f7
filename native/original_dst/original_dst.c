// originalDestination(fd): the destination a connection had before a nat
// REDIRECT rule sent it to this host's listener, as Envoy's original_dst
// listener filter asks the kernel for it: getsockopt SO_ORIGINAL_DST (IPv4,
// also for IPv4-mapped connections on an IPv6 socket) or
// IP6T_SO_ORIGINAL_DST (IPv6). Returns { address, port }, or undefined when
// the kernel knows of no translation (no connection tracking entry).
// Anything else (a bad descriptor, not a socket) throws with errno's text.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <node_api.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80 /* linux/netfilter_ipv4.h */
#endif
#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80 /* linux/netfilter_ipv6/ip6_tables.h */
#endif

static napi_value fail(napi_env env, const char *what, int error) {
  char message[160];
  snprintf(message, sizeof message, "%s: %s", what, strerror(error));
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value result(napi_env env, const char *address, unsigned port) {
  napi_value object, text, number;
  if (napi_create_object(env, &object) != napi_ok) return NULL;
  if (napi_create_string_utf8(env, address, NAPI_AUTO_LENGTH, &text) != napi_ok) return NULL;
  if (napi_create_uint32(env, port, &number) != napi_ok) return NULL;
  napi_set_named_property(env, object, "address", text);
  napi_set_named_property(env, object, "port", number);
  return object;
}

/* No translation known for this connection: not redirected. */
static int untranslated(int error) { return error == ENOENT || error == ENOPROTOOPT || error == EOPNOTSUPP; }

static napi_value original_destination(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], undefined;
  int32_t fd;
  napi_get_undefined(env, &undefined);
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "originalDestination(fd): fd must be a non-negative integer");
    return NULL;
  }

  struct sockaddr_storage local;
  socklen_t length = sizeof local;
  if (getsockname(fd, (struct sockaddr *)&local, &length) != 0) return fail(env, "getsockname", errno);

  char text[INET6_ADDRSTRLEN];
  if (local.ss_family == AF_INET6) {
    struct sockaddr_in6 original;
    length = sizeof original;
    memset(&original, 0, sizeof original);
    if (getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &original, &length) == 0) {
      inet_ntop(AF_INET6, &original.sin6_addr, text, sizeof text);
      return result(env, text, ntohs(original.sin6_port));
    }
    if (!untranslated(errno)) return fail(env, "getsockopt IP6T_SO_ORIGINAL_DST", errno);
    /* An IPv4 connection on an IPv6 socket: its translation is IPv4's. */
    if (!IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&local)->sin6_addr)) return undefined;
  } else if (local.ss_family != AF_INET) {
    return undefined;
  }
  struct sockaddr_in original;
  length = sizeof original;
  memset(&original, 0, sizeof original);
  if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &original, &length) != 0) {
    if (untranslated(errno)) return undefined;
    return fail(env, "getsockopt SO_ORIGINAL_DST", errno);
  }
  inet_ntop(AF_INET, &original.sin_addr, text, sizeof text);
  return result(env, text, ntohs(original.sin_port));
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_value fn;
  if (napi_create_function(env, "originalDestination", NAPI_AUTO_LENGTH, original_destination, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "originalDestination", fn) != napi_ok) return NULL;
  return exports;
}
