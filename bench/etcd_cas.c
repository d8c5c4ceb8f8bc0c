/* The plain client of bench/fleet_bench.py: the compare-and-swap a sectiond host makes
 * for a group commit, done by a client that does nothing else, on the same etcd member through
 * the same JSON gateway with the same HTTP library (libcurl, one kept-alive connection).
 *
 *     etcd_cas URL PREFIX SECONDS WARMUP [--read] [--value-bytes N] [--head-bytes M]
 *
 * Each operation is one txn: compare PREFIX"head"'s mod revision with the one it knows (and that
 * PREFIX"log/<n>" does not exist yet, as a host's commit does), put
 * PREFIX"log/<n>" (N bytes, 150 by default: about a TOGGLE's fleet entry) and PREFIX"head" (M
 * bytes, N by default), as a host's commit is (Sources/SectionFleet/Fleet.swift);
 * bench/fleet_bench.py passes the sizes of the fleet's own last entry and head. The revision it knows is the
 * previous txn's header revision, as a host knows it from its last commit; with --read it first
 * reads the head's mod revision (a range), the read-then-swap of a client that keeps no state:
 * two round trips an operation. One operation in flight, back to back. Prints one JSON line:
 * {"ops":N,"seconds":S,"rate":R,"p50_ms":..,"failed":F} (failed: compares that failed, which
 * nothing else writing the prefix makes 0).
 *
 * C rather than Python: http.client costs about 100-200 µs of interpreter time a request, on the
 * same two CPUs as the three members, which would slow the peer, not the host.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct buffer {
    char data[65536];
    size_t length;
};

static size_t collect(char *pointer, size_t size, size_t count, void *user) {
    struct buffer *b = user;
    size_t n = size * count;
    if (b->length + n >= sizeof b->data) return 0; /* too long: libcurl reports the error */
    memcpy(b->data + b->length, pointer, n);
    b->length += n;
    b->data[b->length] = 0;
    return n;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void base64(const char *in, size_t length, char *out) {
    static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;
    for (i = 0; i + 2 < length; i += 3) {
        unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
        *out++ = table[v >> 18];
        *out++ = table[v >> 12 & 63];
        *out++ = table[v >> 6 & 63];
        *out++ = table[v & 63];
    }
    if (i < length) {
        unsigned v = (unsigned char)in[i] << 16 | (i + 1 < length ? (unsigned char)in[i + 1] << 8 : 0);
        *out++ = table[v >> 18];
        *out++ = table[v >> 12 & 63];
        *out++ = i + 1 < length ? table[v >> 6 & 63] : '=';
        *out++ = '=';
    }
    *out = 0;
}

/* The int64 after "name":" in the reply (the gateway writes int64 fields as strings), or -1. */
static long long field(const char *json, const char *name) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", name);
    const char *at = strstr(json, pattern);
    return at ? atoll(at + strlen(pattern)) : -1;
}

static CURL *curl;
static struct buffer reply;
static char url_base[512];

static const char *post(const char *path, const char *body) {
    char url[600];
    snprintf(url, sizeof url, "%s%s", url_base, path);
    reply.length = 0;
    reply.data[0] = 0;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    CURLcode code = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK || status != 200) {
        fprintf(stderr, "etcd_cas: POST %s: %s, HTTP %ld: %s\n", url, curl_easy_strerror(code), status, reply.data);
        exit(1);
    }
    return reply.data;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: etcd_cas URL PREFIX SECONDS WARMUP [--read] [--value-bytes N] [--head-bytes M]\n");
        return 2;
    }
    snprintf(url_base, sizeof url_base, "%s", argv[1]);
    const char *prefix = argv[2];
    double seconds = atof(argv[3]), warmup = atof(argv[4]);
    int read_first = 0;
    size_t value_bytes = 150, head_bytes = 0; /* 0: value_bytes */
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--read")) read_first = 1;
        else if (!strcmp(argv[i], "--value-bytes") && i + 1 < argc) value_bytes = strtoul(argv[++i], 0, 10);
        else if (!strcmp(argv[i], "--head-bytes") && i + 1 < argc) head_bytes = strtoul(argv[++i], 0, 10);
        else {
            fprintf(stderr, "etcd_cas: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (value_bytes > 4096) value_bytes = 4096;
    if (head_bytes == 0 || head_bytes > 4096) head_bytes = value_bytes;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    curl = curl_easy_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
    curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);

    char key[300], head64[420], value[4097], value64[5500], headvalue64[5500], body[16384];
    snprintf(key, sizeof key, "%shead", prefix);
    base64(key, strlen(key), head64);
    memset(value, 'x', value_bytes);
    base64(value, value_bytes, value64);
    base64(value, head_bytes, headvalue64);
    /* The head, made: its mod revision is what the first compare names. */
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}", head64, headvalue64);
    long long known = field(post("/v3/kv/put", body), "revision");

    size_t capacity = 1 << 16, ops = 0, failed = 0;
    double *latency = malloc(capacity * sizeof *latency);
    double start = now(), measured = start + warmup, end = measured + seconds;
    for (long long n = 0;; n++) {
        double t0 = now();
        if (t0 >= end) break;
        if (read_first) {
            snprintf(body, sizeof body, "{\"key\":\"%s\"}", head64);
            known = field(post("/v3/kv/range", body), "mod_revision");
        }
        char log_key[320], log64[440];
        snprintf(log_key, sizeof log_key, "%slog/%020lld", prefix, n);
        base64(log_key, strlen(log_key), log64);
        snprintf(body, sizeof body,
                 "{\"compare\":[{\"key\":\"%s\",\"target\":\"MOD\",\"mod_revision\":\"%lld\"},"
                 "{\"key\":\"%s\",\"target\":\"CREATE\",\"create_revision\":\"0\"}],"
                 "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}},"
                 "{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}}]}",
                 head64, known, log64, log64, value64, head64, headvalue64);
        const char *answer = post("/v3/kv/txn", body);
        int succeeded = strstr(answer, "\"succeeded\":true") != NULL;
        if (succeeded) known = field(answer, "revision");
        double t1 = now();
        if (t0 < measured) continue;
        if (!succeeded) failed++;
        if (ops == capacity) latency = realloc(latency, (capacity *= 2) * sizeof *latency);
        latency[ops++] = t1 - t0;
    }
    double took = now() - measured;
    qsort(latency, ops, sizeof *latency, compare_doubles);
    printf("{\"ops\":%zu,\"seconds\":%.6f,\"rate\":%.3f,\"p50_ms\":%.4f,\"failed\":%zu}\n", ops, took, ops / took,
           ops ? latency[ops / 2] * 1e3 : 0.0, failed);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    free(latency);
    return failed && !read_first ? 1 : 0;
}
