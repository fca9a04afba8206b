// libcurl for Swift: curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call, so each kind of argument gets a fixed wrapper. libcurl comes from Debian's
// libcurl4-openssl-dev (TLS through OpenSSL, certificates verified by default).
#ifndef COVE_CURL_SHIM_H
#define COVE_CURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*cove_curl_write_fn)(char *data, size_t size, size_t count, void *userdata);
typedef int (*cove_curl_progress_fn)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                     curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode cove_curl_set_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode cove_curl_set_string(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode cove_curl_set_pointer(CURL *c, CURLoption o, void *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode cove_curl_set_size(CURL *c, CURLoption o, curl_off_t v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode cove_curl_set_write(CURL *c, cove_curl_write_fn f) { return curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode cove_curl_set_progress(CURL *c, cove_curl_progress_fn f) { return curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, f); }
static inline CURLcode cove_curl_set_headers(CURL *c, struct curl_slist *h) { return curl_easy_setopt(c, CURLOPT_HTTPHEADER, h); }
static inline CURLcode cove_curl_response_code(CURL *c, long *out) { return curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, out); }

#endif
