/* floor: the least a line server can do, as the floor under sectiond's PING.
 *
 *   floor --socket PATH
 *
 * One thread, one epoll set, non-blocking Unix stream sockets, level-triggered: for each
 * line a client sends it answers `OK\n`, nothing else (no parsing, no state, no saving).
 * Reads up to 16 KiB per readable client per epoll_wait, as sectiond does, and writes the
 * replies of one read with one write(2); replies the socket does not take wait as a count
 * and stop reading that client until they are written (so a client that ends its input is
 * closed once its replies are written). SIGTERM or SIGINT end it.
 *
 * bench.py measures sectiond's PING against this server with the same load generator: the
 * ratio says how close the request path is to what the kernel costs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define READ_SIZE (16 << 10)
#define MAX_FDS 65536

/* Replies owed to each client (by descriptor), not yet taken by its socket. */
static size_t owed[MAX_FDS];
static unsigned char part[MAX_FDS];
static char replies[READ_SIZE * 3];
static volatile sig_atomic_t stopping;

static void on_signal(int sig) { (void)sig; stopping = 1; }

static void watch(int ep, int op, int fd, unsigned events) {
    struct epoll_event ev = {.events = events, .data.fd = fd};
    if (epoll_ctl(ep, op, fd, &ev) < 0 && op != EPOLL_CTL_DEL) {
        perror("floor: epoll_ctl");
        exit(1);
    }
}

static void drop(int ep, int fd) {
    watch(ep, EPOLL_CTL_DEL, fd, 0);
    close(fd);
    owed[fd] = 0;
    part[fd] = 0;
}

/* Writes what `fd` is owed; 1 when all of it went, 0 when the socket is full, -1 on error.
   `part[fd]` bytes of the first owed reply went out already (a write cut it). */
static int pay(int fd) {
    while (owed[fd] > 0) {
        size_t lines = owed[fd] < READ_SIZE ? owed[fd] : READ_SIZE;
        ssize_t n = write(fd, replies + part[fd], lines * 3 - part[fd]);
        if (n < 0) return errno == EAGAIN ? 0 : -1;
        size_t total = part[fd] + (size_t)n;
        owed[fd] -= total / 3;
        part[fd] = total % 3;
    }
    return 1;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--socket") && i + 1 < argc) path = argv[++i];
    if (!path || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        fprintf(stderr, "usage: floor --socket PATH\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof replies; i += 3) memcpy(replies + i, "OK\n", 3);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, path);
    unlink(path);
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0 ||
        listen(listener, 4096) < 0) {
        perror("floor: listen");
        return 1;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    watch(ep, EPOLL_CTL_ADD, listener, EPOLLIN);
    static char input[READ_SIZE];
    struct epoll_event events[256];
    while (!stopping) {
        int n = epoll_wait(ep, events, 256, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("floor: epoll_wait");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    if (client >= MAX_FDS) { close(client); continue; }
                    watch(ep, EPOLL_CTL_ADD, client, EPOLLIN);
                }
                continue;
            }
            if (owed[fd] > 0) { /* writable again */
                int paid = pay(fd);
                if (paid < 0) { drop(ep, fd); continue; }
                if (paid == 0) continue;
                watch(ep, EPOLL_CTL_MOD, fd, EPOLLIN);
                continue;
            }
            ssize_t got = read(fd, input, sizeof input);
            if (got < 0 && errno == EAGAIN) continue;
            if (got <= 0) { drop(ep, fd); continue; }
            const char *p = input, *end = input + got;
            while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) { owed[fd]++; p++; }
            int paid = pay(fd);
            if (paid < 0) { drop(ep, fd); continue; }
            if (paid == 0) watch(ep, EPOLL_CTL_MOD, fd, EPOLLOUT);
        }
    }
    unlink(path);
    return 0;
}
