/*
 * loadgen: the load generator of the sectiond benchmark.
 *
 * One thread, epoll, non-blocking sockets, Unix-domain stream sockets only.
 * It speaks just enough of two protocols to know when a reply is complete:
 *
 *   sectiond (protocol 1): a reply is done when its status line arrives, i.e.
 *     a line starting with "OK" or "ERR".  Data lines (lower-case keyword)
 *     are skipped; event lines ("!...") are counted as events, not replies.
 *   redis (RESP2): a reply is done when a whole top-level RESP value arrived
 *     (simple strings, errors, integers, bulk strings, nested arrays).
 *
 * Modes (the result is one JSON object on stdout; diagnostics go to stderr):
 *
 *   rps     C connections, D requests in flight on each, for T seconds
 *           (after a warm-up) or until N requests are done.
 *             loadgen --proto P --socket PATH rps -c 50 -d 1 -t 5 --cmd 'PING\n'
 *           "%d" in --cmd is replaced by the connection's index (0..C-1),
 *           e.g. --cmd 'TOGGLE %d\n' or --cmd 'INCR k%d\r\n'.  Up to 4
 *           --cmd: each connection sends them in turn, one request at a time
 *           (--cmd 'INSERT 0 n%d x\n' --cmd 'DELETE n%d\n' keeps the list's
 *           length).  --replies K: a request is answered by K replies (a
 *           redis MULTI ... EXEC of two commands gets 4); requests are counted.
 *
 *   fanout  S subscriber connections subscribe (sectiond: "SUBSCRIBE", wait
 *           for its OK; redis: "SUBSCRIBE ch", wait for the confirmation);
 *           then, R times, one more connection sends one change (sectiond
 *           "TOGGLE 0", redis "PUBLISH ch x") and the time from just before
 *           that write until the last subscriber has read its event is
 *           recorded.  Reports the median (and min/p90/max/mean).
 *             loadgen --proto P --socket PATH fanout -s 1000 -r 200
 *
 *   idle    open K connections, send one PING on each and wait for every
 *           reply (so the server has accepted and served all of them), print
 *           "ready K" on stdout, then hold them, without traffic, until a line
 *           (or EOF) arrives on stdin, or SIGTERM/SIGINT/SIGUSR1, or
 *           --hold-max seconds pass.  The driver reads the server's RSS
 *           meanwhile.
 *             loadgen --proto P --socket PATH idle -k 9000
 *
 * Every wait is bounded (--timeout, default 30 s per phase).  Exit status 0
 * on success, 1 on a protocol/connection failure or timeout, 2 on bad usage.
 *
 * Build: cc -O2 -o loadgen loadgen.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum proto { P_SECTIOND, P_REDIS };

#define MAX_REQS 4

/* Per-connection reply parser state; no per-connection buffers, so 10,000
 * connections cost a few hundred KiB in the load generator. */
struct conn {
    int fd;
    int idx;
    /* output: the connection sends its requests in turn, over and over */
    const char *req;     /* rendered request bytes for this connection, all of them */
    int req_len;
    int nreq;            /* how many requests req holds */
    int lens[MAX_REQS];  /* the length of each */
    int next_req;        /* the one to queue next */
    uint64_t reply_part; /* replies of a request not yet completely answered */
    uint64_t out_left;   /* bytes still to send (a multiple of req_len, minus progress) */
    int out_off;         /* offset inside req of the next byte to send */
    int want_out;        /* EPOLLOUT registered */
    /* accounting */
    uint64_t replies;    /* complete replies (status lines / RESP values) */
    uint64_t errors;     /* ERR lines / RESP error replies */
    uint64_t events;     /* sectiond: '!' lines; redis: replies after the first (fan-out) */
    uint64_t sent;       /* requests queued */
    /* sectiond line parser */
    uint8_t lpos;        /* bytes of the current line seen, saturating at 3 */
    uint8_t lkind;       /* 0 start, 1 event, 2 'O', 3 'E', 4 'ER', 5 OK, 6 ERR, 7 other */
    /* RESP parser */
    uint8_t rstate;      /* 0 type byte, 1 header body, 2 expect LF, 3 bulk payload */
    char rtype;
    uint8_t rneg;
    int64_t rnum;
    int64_t bulk_left;
    int64_t pend;        /* elements still needed to finish the current top-level value */
    uint8_t top_err;     /* the current top-level value is an error */
    uint8_t closed;
};

static enum proto proto = P_SECTIOND;
static const char *sock_path;
static int epfd = -1;
static struct conn *conns;
static int nconns;
static double phase_timeout = 30.0;
static volatile sig_atomic_t got_signal;
static char rbuf[1 << 16];
static int strict_replies; /* rps mode: every reply answers a request we sent */
static int replies_per_request = 1;

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "loadgen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* epoll_wait on the one epoll set; a wait cut short by a signal found nothing. */
static int wait_events(struct epoll_event *evs, int max, int ms) {
    int n = epoll_wait(epfd, evs, max, ms);
    if (n < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
    return n < 0 ? 0 : n;
}

static void raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Unescape \n \r \t \\ in a command given on the command line. */
static char *unescape(const char *s) {
    char *out = malloc(strlen(s) + 1), *o = out;
    if (!out) die("out of memory");
    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            switch (*s) {
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            default: *o++ = *s; break;
            }
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
    return out;
}

/* Render the per-connection request: "%d" becomes the connection index. */
static char *render(const char *tmpl, int idx) {
    size_t n = strlen(tmpl) + 32;
    char *out = malloc(n), *o = out;
    if (!out) die("out of memory");
    for (const char *s = tmpl; *s; s++) {
        if (s[0] == '%' && s[1] == 'd') {
            o += sprintf(o, "%d", idx);
            s++;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
    return out;
}

static int open_conn(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(sock_path) >= sizeof sa.sun_path) die("socket path too long: %s", sock_path);
    strcpy(sa.sun_path, sock_path);
    /* Blocking connect (a non-blocking one fails with EAGAIN when the listen
     * backlog is full), bounded by a send timeout. */
    struct timeval tv = {.tv_sec = (time_t)phase_timeout, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int tries = 0;
    while (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (errno == EINTR) continue;
        if ((errno == EAGAIN || errno == ECONNREFUSED) && tries++ < 200) {
            usleep(10000);
            continue;
        }
        die("connect %s: %s (after %d connections)", sock_path, strerror(errno), nconns);
    }
    struct timeval zero = {0, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &zero, sizeof zero);
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    return fd;
}

static void ep_mod(struct conn *c, int want_out) {
    if (c->want_out == want_out) return;
    struct epoll_event ev = {.events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl: %s", strerror(errno));
    c->want_out = want_out;
}

static void add_conns(int n) {
    struct conn *nc = realloc(conns, sizeof(struct conn) * (size_t)(nconns + n));
    if (!nc) die("out of memory");
    /* epoll data points into the array: only grow it before registering. */
    if (nc != conns && nconns > 0) die("internal: connection array moved");
    conns = nc;
    for (int i = 0; i < n; i++) {
        struct conn *c = &conns[nconns];
        memset(c, 0, sizeof *c);
        c->idx = nconns;
        c->fd = open_conn();
        nconns++;
    }
}

static void register_conns(int from, int to) {
    for (int i = from; i < to; i++) {
        struct conn *c = &conns[i];
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl add: %s", strerror(errno));
    }
}

/* Flush as much pending output as the socket takes. */
static void flush_out(struct conn *c) {
    while (c->out_left > 0) {
        /* Write from req+out_off up to the end of req, repeated: build a
         * small batch of whole requests in a stack buffer when several are
         * owed, so one write() carries them. */
        char batch[4096];
        size_t n = 0;
        int off = c->out_off;
        uint64_t left = c->out_left;
        while (left > 0 && n < sizeof batch) {
            size_t chunk = (size_t)(c->req_len - off);
            if (chunk > left) chunk = (size_t)left;
            if (chunk > sizeof batch - n) chunk = sizeof batch - n;
            memcpy(batch + n, c->req + off, chunk);
            n += chunk;
            left -= chunk;
            off += (int)chunk;
            if (off == c->req_len) off = 0;
        }
        ssize_t w = write(c->fd, batch, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                ep_mod(c, 1);
                return;
            }
            die("write (connection %d, after %llu replies): %s%s", c->idx,
                (unsigned long long)c->replies, strerror(errno),
                errno == EPIPE || errno == ECONNRESET ? " (server closed it; too many clients?)" : "");
        }
        c->out_left -= (uint64_t)w;
        c->out_off = (int)(((size_t)c->out_off + (size_t)w) % (size_t)c->req_len);
        if ((size_t)w < n) {
            ep_mod(c, 1);
            return;
        }
    }
    ep_mod(c, 0);
}

/* c sends one request, req, over and over. */
static void set_request(struct conn *c, const char *req) {
    c->req = req;
    c->req_len = (int)strlen(req);
    c->nreq = 1;
    c->lens[0] = c->req_len;
    c->next_req = 0;
}

static void queue_requests(struct conn *c, uint64_t k) {
    if (k == 0) return;
    for (uint64_t i = 0; i < k; i++) {
        c->out_left += (uint64_t)c->lens[c->next_req];
        c->next_req = (c->next_req + 1) % c->nreq;
    }
    c->sent += k;
    flush_out(c);
}

/* ---- reply parsers: return the number of complete replies in buf ---- */

static uint64_t parse_sectiond(struct conn *c, const char *buf, size_t n) {
    uint64_t done = 0;
    size_t i = 0;
    while (i < n) {
        if (c->lpos >= 3 || c->lkind == 1 || c->lkind == 7 || c->lkind == 5 || c->lkind == 6) {
            /* line classified: skip to its end */
            const char *nl = memchr(buf + i, '\n', n - i);
            if (!nl) return done;
            i = (size_t)(nl - buf) + 1;
            goto eol;
        }
        char ch = buf[i++];
        if (ch == '\n') goto eol;
        c->lpos++;
        switch (c->lkind) {
        case 0:
            c->lkind = ch == '!' ? 1 : ch == 'O' ? 2 : ch == 'E' ? 3 : 7;
            break;
        case 2: c->lkind = ch == 'K' ? 5 : 7; break;
        case 3: c->lkind = ch == 'R' ? 4 : 7; break;
        case 4: c->lkind = ch == 'R' ? 6 : 7; break;
        }
        continue;
    eol:
        switch (c->lkind) {
        case 1: c->events++; break;
        case 5: done++; break;
        case 6: done++; c->errors++; break;
        default: break; /* data line (or a bare "O"/"E"/"ER" line) */
        }
        c->lpos = 0;
        c->lkind = 0;
    }
    return done;
}

static int resp_element_done(struct conn *c) {
    if (c->pend == 0) return 1;
    c->pend--;
    return c->pend == 0;
}

static uint64_t parse_redis(struct conn *c, const char *buf, size_t n) {
    uint64_t done = 0;
    size_t i = 0;
    while (i < n) {
        switch (c->rstate) {
        case 0: /* type byte */
            c->rtype = buf[i++];
            c->rneg = 0;
            c->rnum = 0;
            if (c->pend == 0) c->top_err = c->rtype == '-';
            c->rstate = 1;
            break;
        case 1: { /* header body up to CR */
            if (c->rtype == '+' || c->rtype == '-' || c->rtype == ':') {
                const char *cr = memchr(buf + i, '\r', n - i);
                if (!cr) return done;
                i = (size_t)(cr - buf) + 1;
                c->rstate = 2;
                break;
            }
            char ch = buf[i++];
            if (ch == '\r') c->rstate = 2;
            else if (ch == '-') c->rneg = 1;
            else if (ch >= '0' && ch <= '9') c->rnum = c->rnum * 10 + (ch - '0');
            else die("RESP: unexpected byte 0x%02x in header (connection %d)", (unsigned char)ch, c->idx);
            break;
        }
        case 2: { /* LF after CR: the header line is complete */
            if (buf[i++] != '\n') die("RESP: CR without LF (connection %d)", c->idx);
            int64_t v = c->rneg ? -c->rnum : c->rnum;
            int complete = 0;
            c->rstate = 0;
            switch (c->rtype) {
            case '+': case '-': case ':':
                complete = resp_element_done(c);
                break;
            case '$':
                if (v < 0) complete = resp_element_done(c);
                else { c->bulk_left = v + 2; c->rstate = 3; }
                break;
            case '*':
                if (v <= 0) complete = resp_element_done(c);
                else if (c->pend == 0) c->pend = v;
                else c->pend += v - 1;
                break;
            default:
                die("RESP: unknown type byte 0x%02x (connection %d)", (unsigned char)c->rtype, c->idx);
            }
            if (complete) {
                done++;
                if (c->top_err) c->errors++;
            }
            break;
        }
        case 3: { /* bulk payload + CRLF */
            size_t take = n - i;
            if ((int64_t)take > c->bulk_left) take = (size_t)c->bulk_left;
            i += take;
            c->bulk_left -= (int64_t)take;
            if (c->bulk_left == 0) {
                c->rstate = 0;
                if (resp_element_done(c)) {
                    done++;
                    if (c->top_err) c->errors++;
                }
            }
            break;
        }
        }
    }
    return done;
}

/* Read everything available on c; returns the number of new complete replies.
 * A closed connection is fatal unless allow_close. */
static uint64_t read_conn(struct conn *c, int allow_close) {
    uint64_t done = 0;
    for (;;) {
        ssize_t r = read(c->fd, rbuf, sizeof rbuf);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) break;
            if (errno == ECONNRESET && allow_close) { c->closed = 1; break; }
            die("read (connection %d, after %llu replies): %s%s", c->idx,
                (unsigned long long)c->replies, strerror(errno),
                errno == ECONNRESET ? " (server closed it; too many clients?)" : "");
        }
        if (r == 0) {
            if (allow_close) { c->closed = 1; break; }
            die("server closed connection %d (after %llu replies)", c->idx,
                (unsigned long long)c->replies);
        }
        done += proto == P_SECTIOND ? parse_sectiond(c, rbuf, (size_t)r)
                                    : parse_redis(c, rbuf, (size_t)r);
        if ((size_t)r < sizeof rbuf) break;
    }
    c->replies += done;
    if (strict_replies && c->replies > c->sent * (uint64_t)replies_per_request)
        die("connection %d: %llu replies to %llu requests (protocol out of step)", c->idx,
            (unsigned long long)c->replies, (unsigned long long)c->sent);
    return done;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void on_signal(int sig) { got_signal = sig; }

/* CPU time (ns) the server's threads have run, from /proc/PID/task/TID/schedstat;
 * -1 when unknown.  Steadier than throughput on a noisy machine. */
static int server_pid;
static double server_cpu_ns(void) {
    if (server_pid <= 0) return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", server_pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    double total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char f[320];
        snprintf(f, sizeof f, "/proc/%d/task/%s/schedstat", server_pid, e->d_name);
        FILE *fp = fopen(f, "r");
        if (!fp) continue;
        unsigned long long ns = 0;
        if (fscanf(fp, "%llu", &ns) == 1) total += (double)ns;
        fclose(fp);
    }
    closedir(d);
    return total;
}

/* ---------------------------------------------------------------- rps */

static int run_rps(int C, int D, double T, uint64_t N, double warmup, char **tmpls, int ntmpl) {
    strict_replies = 1;
    add_conns(C);
    register_conns(0, C);
    for (int i = 0; i < C; i++) {
        struct conn *c = &conns[i];
        size_t total = 0;
        char *rendered[MAX_REQS];
        for (int j = 0; j < ntmpl; j++) {
            rendered[j] = render(tmpls[j], i);
            c->lens[j] = (int)strlen(rendered[j]);
            if (c->lens[j] == 0) die("empty --cmd");
            total += (size_t)c->lens[j];
        }
        char *req = malloc(total + 1);
        if (!req) die("out of memory");
        req[0] = 0;
        for (int j = 0; j < ntmpl; j++) {
            strcat(req, rendered[j]);
            free(rendered[j]);
        }
        c->req = req;
        c->req_len = (int)total;
        c->nreq = ntmpl;
        c->next_req = 0;
    }
    uint64_t issued = 0, done = 0, errors_at_start = 0, done_at_start = 0;
    int stop_issuing = 0;
    double t_start = now(), t_measure = t_start + (N ? 0 : warmup), t_end = t_measure + T;
    double hard_deadline = (N ? t_start + phase_timeout * 10 : t_end + phase_timeout);
    int measuring = N ? 1 : (warmup <= 0);
    if (measuring) t_measure = t_start;
    double cpu_start = server_cpu_ns(), cpu_stop = -1;
    for (int i = 0; i < C; i++) {
        uint64_t k = (uint64_t)D;
        if (N && issued + k > N) k = N - issued;
        issued += k;
        queue_requests(&conns[i], k);
    }
    struct epoll_event evs[1024];
    double t_stop = 0;
    for (;;) {
        double t = now();
        if (!measuring && t >= t_measure) {
            measuring = 1;
            cpu_start = server_cpu_ns();
            done_at_start = done;
            errors_at_start = 0;
            for (int i = 0; i < C; i++) errors_at_start += conns[i].errors;
            t_measure = t;
            t_end = t + T;
        }
        if (!N && measuring && t >= t_end && !stop_issuing) {
            stop_issuing = 1;
            t_stop = t;
            cpu_stop = server_cpu_ns();
            break; /* time mode: count what completed inside the window */
        }
        if (N && done >= N) { t_stop = t; cpu_stop = server_cpu_ns(); break; }
        if (t > hard_deadline) die("rps: timed out (%llu of %llu done)", (unsigned long long)done,
                                   (unsigned long long)issued);
        int n = wait_events(evs, 1024, 100);
        for (int e = 0; e < n; e++) {
            struct conn *c = evs[e].data.ptr;
            if (evs[e].events & EPOLLOUT) flush_out(c);
            if (evs[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                c->reply_part += read_conn(c, 0);
                uint64_t k = c->reply_part / (uint64_t)replies_per_request;
                c->reply_part %= (uint64_t)replies_per_request;
                done += k;
                if (N && issued + k > N) k = N - issued;
                issued += k;
                queue_requests(c, k);
            }
        }
    }
    uint64_t errors = 0;
    for (int i = 0; i < C; i++) errors += conns[i].errors;
    double elapsed = t_stop - t_measure;
    uint64_t counted = done - done_at_start;
    double cpu_us = cpu_start >= 0 && cpu_stop >= 0 && counted
                        ? (cpu_stop - cpu_start) / 1e3 / (double)counted : -1;
    printf("{\"mode\":\"rps\",\"connections\":%d,\"depth\":%d,\"requests\":%llu,\"seconds\":%.6f,"
           "\"rps\":%.1f,\"errors\":%llu,\"server_cpu_us_per_request\":%.4f}\n",
           C, D, (unsigned long long)counted, elapsed, elapsed > 0 ? (double)counted / elapsed : 0.0,
           (unsigned long long)(errors - errors_at_start), cpu_us);
    fflush(stdout);
    return errors - errors_at_start ? 1 : 0;
}

/* ------------------------------------------------------------- fanout */

/* Wait until every connection in [from,to) has at least `want` replies. */
static void wait_replies(int from, int to, uint64_t want, const char *what) {
    double deadline = now() + phase_timeout;
    int missing = 0;
    struct epoll_event evs[4096];
    for (;;) {
        missing = 0;
        for (int i = from; i < to; i++)
            if (conns[i].replies < want) missing++;
        if (!missing) return;
        if (now() > deadline) die("%s: timed out, %d connections still waiting", what, missing);
        int n = wait_events(evs, 4096, 100);
        for (int e = 0; e < n; e++) {
            struct conn *c = evs[e].data.ptr;
            if (evs[e].events & EPOLLOUT) flush_out(c);
            if (evs[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_conn(c, 0);
        }
    }
}

static int run_fanout(int S, int R, const char *sub_cmd, const char *pub_cmd, double gap_ms) {
    add_conns(S + 1); /* connections 0..S-1 subscribe, S publishes */
    register_conns(0, S + 1);
    for (int i = 0; i < S; i++) {
        set_request(&conns[i], sub_cmd);
        queue_requests(&conns[i], 1);
    }
    wait_replies(0, S, 1, "subscribe");
    struct conn *pub = &conns[S];
    set_request(pub, pub_cmd);

    /* event count of a subscriber: sectiond counts '!' lines; redis counts
     * replies after the subscribe confirmation */
    double *lat = calloc((size_t)R, sizeof(double)), *first = calloc((size_t)R, sizeof(double)),
           *busyv = calloc((size_t)R, sizeof(double));
    if (!lat || !first || !busyv) die("out of memory");
    struct epoll_event evs[4096];
    uint64_t base_events[1] = {0};
    (void)base_events;
    for (int r = 0; r < R; r++) {
        uint64_t want = (uint64_t)r + 1;
        int remaining = 0;
        for (int i = 0; i < S; i++) {
            uint64_t ev = proto == P_SECTIOND ? conns[i].events : conns[i].replies - 1;
            if (ev < want) remaining++;
            else if (ev > want) die("fanout: subscriber %d got %llu events, expected %llu", i,
                                    (unsigned long long)ev, (unsigned long long)want);
        }
        double t0 = now(), t_last = t0, deadline = t0 + phase_timeout, t_first = 0, busy = 0;
        queue_requests(pub, 1);
        while (remaining > 0 || pub->replies < want) {
            int n = wait_events(evs, 4096, 100);
            double tb = now();
            if (t_first == 0 && n > 0) t_first = tb;
            for (int e = 0; e < n; e++) {
                struct conn *c = evs[e].data.ptr;
                if (evs[e].events & EPOLLOUT) flush_out(c);
                if (!(evs[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
                if (c == pub) { read_conn(c, 0); continue; }
                uint64_t before = proto == P_SECTIOND ? c->events : c->replies - 1;
                read_conn(c, 0);
                uint64_t after = proto == P_SECTIOND ? c->events : c->replies - 1;
                if (before < want && after >= want) {
                    remaining--;
                    if (remaining == 0) t_last = now();
                }
            }
            double te = now();
            busy += te - tb;
            if (te > deadline)
                die("fanout: repetition %d timed out, %d subscribers without the event", r, remaining);
        }
        if (pub->errors) die("fanout: the change request got an error reply");
        lat[r] = t_last - t0;
        first[r] = t_first - t0;
        busyv[r] = busy;
        if (gap_ms > 0) usleep((useconds_t)(gap_ms * 1000));
    }
    double sum = 0;
    for (int r = 0; r < R; r++) sum += lat[r];
    qsort(lat, (size_t)R, sizeof(double), cmp_double);
    qsort(first, (size_t)R, sizeof(double), cmp_double);
    qsort(busyv, (size_t)R, sizeof(double), cmp_double);
#define MEDIAN(a) (R % 2 ? (a)[R / 2] : ((a)[R / 2 - 1] + (a)[R / 2]) / 2)
    /* first_ms: until the load generator saw the first ready socket;
     * loadgen_busy_ms: time it spent reading (not waiting) per repetition;
     * when busy is close to median, the load generator limits the figure. */
    printf("{\"mode\":\"fanout\",\"subscribers\":%d,\"repetitions\":%d,\"median_ms\":%.4f,"
           "\"min_ms\":%.4f,\"p90_ms\":%.4f,\"max_ms\":%.4f,\"mean_ms\":%.4f,"
           "\"first_ms\":%.4f,\"loadgen_busy_ms\":%.4f}\n",
           S, R, MEDIAN(lat) * 1e3, lat[0] * 1e3, lat[(int)((R - 1) * 0.9)] * 1e3, lat[R - 1] * 1e3,
           sum / R * 1e3, MEDIAN(first) * 1e3, MEDIAN(busyv) * 1e3);
    fflush(stdout);
    free(lat);
    free(first);
    free(busyv);
    return 0;
}

/* --------------------------------------------------------------- idle */

static int run_idle(int K, const char *ping, double hold_max) {
    add_conns(K);
    register_conns(0, K);
    for (int i = 0; i < K; i++) {
        set_request(&conns[i], ping);
        queue_requests(&conns[i], 1);
    }
    wait_replies(0, K, 1, "idle: ping");
    uint64_t errors = 0;
    for (int i = 0; i < K; i++) errors += conns[i].errors;
    if (errors) die("idle: %llu connections got an error reply (too many clients?)",
                    (unsigned long long)errors);
    printf("ready %d\n", K);
    fflush(stdout);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    double deadline = now() + hold_max;
    int stdin_open = 1, why = 0;
    while (!got_signal) {
        double left = deadline - now();
        if (left <= 0) { why = 1; break; }
        struct pollfd p = {.fd = 0, .events = POLLIN};
        int n = poll(&p, stdin_open ? 1 : 0, left > 0.2 ? 200 : (int)(left * 1000) + 1);
        if (n < 0 && errno != EINTR) die("poll: %s", strerror(errno));
        if (n > 0 && (p.revents & (POLLIN | POLLHUP))) {
            char b[256];
            ssize_t r = read(0, b, sizeof b);
            if (r <= 0 || memchr(b, '\n', (size_t)r)) break;
        }
    }
    /* count connections the server closed while we held them */
    int closed = 0;
    for (int i = 0; i < K; i++) {
        char b[256];
        ssize_t r = recv(conns[i].fd, b, sizeof b, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN)) closed++;
    }
    for (int i = 0; i < K; i++) close(conns[i].fd);
    printf("{\"mode\":\"idle\",\"connections\":%d,\"closed_by_server\":%d,\"released_by\":\"%s\"}\n", K,
           closed, got_signal ? "signal" : why ? "hold-max" : "stdin");
    fflush(stdout);
    return closed ? 1 : 0;
}

/* --------------------------------------------------------------- main */

static void usage(void) {
    fprintf(stderr,
            "usage: loadgen --proto sectiond|redis --socket PATH [--timeout SEC] [--server-pid PID]\n"
            "               MODE [options]\n"
            "  (--server-pid: rps also reports the server's CPU time per request)\n"
            "  rps    -c CONNS -d DEPTH (-t SECONDS [-w WARMUP] | -n REQUESTS) --cmd REQUEST...\n"
            "         [--replies K]\n"
            "         (REQUEST may use \\n \\r \\t escapes and %%d for the connection index;\n"
            "         up to 4 --cmd are sent in turn; K replies answer one request)\n"
            "  fanout -s SUBSCRIBERS -r REPETITIONS [--sub CMD] [--pub CMD] [--gap-ms MS]\n"
            "  idle   -k CONNS [--ping CMD] [--hold-max SECONDS]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *mode = NULL, *sub = NULL, *pub = NULL, *ping = NULL;
    char *cmds[MAX_REQS];
    int ncmd = 0;
    int C = 50, D = 1, S = 1000, R = 200, K = 1000;
    double T = 5, warmup = 0.5, hold_max = 600, gap_ms = 0;
    uint64_t N = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (usage(), ""))
        if (!strcmp(a, "--proto")) {
            const char *p = NEXT();
            if (!strcmp(p, "sectiond")) proto = P_SECTIOND;
            else if (!strcmp(p, "redis")) proto = P_REDIS;
            else usage();
        } else if (!strcmp(a, "--socket")) sock_path = NEXT();
        else if (!strcmp(a, "--timeout")) phase_timeout = atof(NEXT());
        else if (!strcmp(a, "--server-pid")) server_pid = atoi(NEXT());
        else if (!strcmp(a, "-c")) C = atoi(NEXT());
        else if (!strcmp(a, "-d")) D = atoi(NEXT());
        else if (!strcmp(a, "-t")) T = atof(NEXT());
        else if (!strcmp(a, "-w")) warmup = atof(NEXT());
        else if (!strcmp(a, "-n")) N = strtoull(NEXT(), NULL, 10);
        else if (!strcmp(a, "--cmd")) {
            if (ncmd == MAX_REQS) usage();
            cmds[ncmd++] = unescape(NEXT());
        } else if (!strcmp(a, "--replies")) replies_per_request = atoi(NEXT());
        else if (!strcmp(a, "-s")) S = atoi(NEXT());
        else if (!strcmp(a, "-r")) R = atoi(NEXT());
        else if (!strcmp(a, "--sub")) sub = NEXT();
        else if (!strcmp(a, "--pub")) pub = NEXT();
        else if (!strcmp(a, "--gap-ms")) gap_ms = atof(NEXT());
        else if (!strcmp(a, "-k")) K = atoi(NEXT());
        else if (!strcmp(a, "--ping")) ping = NEXT();
        else if (!strcmp(a, "--hold-max")) hold_max = atof(NEXT());
        else if (a[0] != '-' && !mode) mode = a;
        else usage();
    }
    if (!mode || !sock_path) usage();
    if (phase_timeout <= 0) phase_timeout = 30;
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) die("epoll_create1: %s", strerror(errno));
    int is_redis = proto == P_REDIS;
    if (!strcmp(mode, "rps")) {
        if (C < 1 || D < 1 || (!N && T <= 0) || replies_per_request < 1) usage();
        if (!ncmd) cmds[ncmd++] = unescape(is_redis ? "PING\\r\\n" : "PING\\n");
        conns = malloc(sizeof(struct conn) * (size_t)C);
        return run_rps(C, D, T, N, warmup, cmds, ncmd);
    } else if (!strcmp(mode, "fanout")) {
        if (S < 1 || R < 1) usage();
        if (!sub) sub = is_redis ? "SUBSCRIBE ch\\r\\n" : "SUBSCRIBE\\n";
        if (!pub) pub = is_redis ? "PUBLISH ch x\\r\\n" : "TOGGLE 0\\n";
        conns = malloc(sizeof(struct conn) * (size_t)(S + 1));
        return run_fanout(S, R, unescape(sub), unescape(pub), gap_ms);
    } else if (!strcmp(mode, "idle")) {
        if (K < 1) usage();
        if (!ping) ping = is_redis ? "PING\\r\\n" : "PING\\n";
        conns = malloc(sizeof(struct conn) * (size_t)K);
        return run_idle(K, unescape(ping), hold_max);
    }
    usage();
    return 2;
}
