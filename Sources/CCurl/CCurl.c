#include "CCurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// The soname of libcurl 7.16 and later, and the Debian package that has it with OpenSSL.
#define LIBRARY "libcurl.so.4"
#define PACKAGE "libcurl4"

static struct {
  char *(*version)(void);
  CURLcode (*global_init)(long flags);
  CURL *(*easy_init)(void);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_cleanup)(CURLM *);
  const char *(*multi_strerror)(CURLMcode);
  CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
  CURLMcode (*multi_add_handle)(CURLM *, CURL *);
  CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
  CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
  CURLMsg *(*multi_info_read)(CURLM *, int *);
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int status = -1;
static char error[512] = "ccurl_load was not called";

static int lookup(void *library, const char *name, void **slot) {
  *slot = dlsym(library, name);
  if (*slot) return 0;
  snprintf(error, sizeof error, "%s has no %s: install a libcurl 7.88 or later (Debian package %s)", LIBRARY,
           name, PACKAGE);
  return -1;
}

static void load(void) {
  void *library = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(error, sizeof error, "cannot load %s (%s): install the Debian package %s", LIBRARY, dlerror(),
             PACKAGE);
    return;
  }
  struct {
    const char *name;
    void **slot;
  } symbols[] = {
      {"curl_version", (void **)&curl.version},
      {"curl_global_init", (void **)&curl.global_init},
      {"curl_easy_init", (void **)&curl.easy_init},
      {"curl_easy_cleanup", (void **)&curl.easy_cleanup},
      {"curl_easy_strerror", (void **)&curl.easy_strerror},
      {"curl_easy_setopt", (void **)&curl.easy_setopt},
      {"curl_easy_getinfo", (void **)&curl.easy_getinfo},
      {"curl_slist_append", (void **)&curl.slist_append},
      {"curl_slist_free_all", (void **)&curl.slist_free_all},
      {"curl_multi_init", (void **)&curl.multi_init},
      {"curl_multi_cleanup", (void **)&curl.multi_cleanup},
      {"curl_multi_strerror", (void **)&curl.multi_strerror},
      {"curl_multi_setopt", (void **)&curl.multi_setopt},
      {"curl_multi_add_handle", (void **)&curl.multi_add_handle},
      {"curl_multi_remove_handle", (void **)&curl.multi_remove_handle},
      {"curl_multi_socket_action", (void **)&curl.multi_socket_action},
      {"curl_multi_info_read", (void **)&curl.multi_info_read},
  };
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    if (lookup(library, symbols[i].name, symbols[i].slot) != 0) return;
  }
  CURLcode code = curl.global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    snprintf(error, sizeof error, "curl_global_init failed: %s", curl.easy_strerror(code));
    return;
  }
  status = 0;
}

int ccurl_load(void) {
  pthread_once(&once, load);
  return status;
}

const char *ccurl_load_error(void) { return status == 0 ? "" : error; }

const char *ccurl_version(void) { return curl.version(); }
CURL *ccurl_easy_init(void) { return curl.easy_init(); }
void ccurl_easy_cleanup(CURL *easy) { curl.easy_cleanup(easy); }
const char *ccurl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }

CURLcode ccurl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
  return curl.easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
  return curl.easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
  return curl.easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_write(CURL *easy, CURLoption option, curl_write_callback value) {
  return curl.easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_closesocket(CURL *easy, CURLoption option, curl_closesocket_callback value) {
  return curl.easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_sockopt(CURL *easy, CURLoption option, curl_sockopt_callback value) {
  return curl.easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
  return curl.easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
  return curl.easy_getinfo(easy, info, value);
}
CURLcode ccurl_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
  return curl.easy_getinfo(easy, info, value);
}

struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string) {
  return curl.slist_append(list, string);
}
void ccurl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLM *ccurl_multi_init(void) { return curl.multi_init(); }
CURLMcode ccurl_multi_cleanup(CURLM *multi) { return curl.multi_cleanup(multi); }
const char *ccurl_multi_strerror(CURLMcode code) { return curl.multi_strerror(code); }
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
  return curl.multi_setopt(multi, option, value);
}
CURLMcode ccurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
  return curl.multi_setopt(multi, option, value);
}
CURLMcode ccurl_multi_setopt_socket(CURLM *multi, CURLMoption option, curl_socket_callback value) {
  return curl.multi_setopt(multi, option, value);
}
CURLMcode ccurl_multi_setopt_timer(CURLM *multi, CURLMoption option, curl_multi_timer_callback value) {
  return curl.multi_setopt(multi, option, value);
}
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *easy) { return curl.multi_add_handle(multi, easy); }
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *easy) { return curl.multi_remove_handle(multi, easy); }
CURLMcode ccurl_multi_socket_action(CURLM *multi, curl_socket_t socket, int events, int *running) {
  return curl.multi_socket_action(multi, socket, events, running);
}
CURLMsg *ccurl_multi_info_read(CURLM *multi, int *queued) { return curl.multi_info_read(multi, queued); }
