#ifndef SECTIOND_CCURL_H
#define SECTIOND_CCURL_H
// libcurl for the Etcd module, loaded with dlopen on first use: libcurl and the thirty
// libraries it brings map 6-9 MB, which a sectiond without --etcd must not pay for. So
// nothing links against libcurl; its headers give the types and constants, and every call
// goes through a table of the functions used, filled by ccurl_load. The setters and getters
// curl declares variadic (curl_easy_setopt, curl_multi_setopt, curl_easy_getinfo) have one
// typed wrapper per kind of argument, since Swift cannot call variadic C.
#include <curl/curl.h>

/// Loads libcurl.so.4 and looks up the functions used, once per process (thread-safe).
/// Returns 0, or -1 when it cannot: ccurl_load_error() then says why and what to install.
int ccurl_load(void);
/// Why ccurl_load failed (the library or the symbol, and the package that provides it).
const char *ccurl_load_error(void);

// The wrappers below call through the table: call them only after ccurl_load returned 0.
const char *ccurl_version(void);
CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *easy);
const char *ccurl_easy_strerror(CURLcode code);
CURLcode ccurl_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode ccurl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value);
CURLcode ccurl_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
CURLcode ccurl_easy_setopt_write(CURL *easy, CURLoption option, curl_write_callback value);
CURLcode ccurl_easy_setopt_closesocket(CURL *easy, CURLoption option, curl_closesocket_callback value);
CURLcode ccurl_easy_setopt_sockopt(CURL *easy, CURLoption option, curl_sockopt_callback value);
CURLcode ccurl_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value);
CURLcode ccurl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode ccurl_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value);
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string);
void ccurl_slist_free_all(struct curl_slist *list);
CURLM *ccurl_multi_init(void);
CURLMcode ccurl_multi_cleanup(CURLM *multi);
const char *ccurl_multi_strerror(CURLMcode code);
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode ccurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
CURLMcode ccurl_multi_setopt_socket(CURLM *multi, CURLMoption option, curl_socket_callback value);
CURLMcode ccurl_multi_setopt_timer(CURLM *multi, CURLMoption option, curl_multi_timer_callback value);
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *easy);
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *easy);
CURLMcode ccurl_multi_socket_action(CURLM *multi, curl_socket_t socket, int events, int *running);
CURLMsg *ccurl_multi_info_read(CURLM *multi, int *queued);

/// The result of a finished transfer in a CURLMSG_DONE message (a member of a C union).
static inline CURLcode ccurl_message_result(const CURLMsg *message) { return message->data.result; }

#endif
