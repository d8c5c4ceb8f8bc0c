/* The floor for sectiond's D-Bus figures (bench/dbus_bench.py, docs/PERFORMANCE.md): the
 * least an sd-bus service can do, on the same bus, driven by the same client.
 *
 *   dbus_floor                      # serves org.sectiond.Floor1 on $DBUS_SESSION_BUS_ADDRESS
 *   dbus_floor --socket PATH        # ... and answers lines on a Unix socket
 *   dbus_floor --socket PATH --no-bus
 *
 * /org/sectiond/Floor1, interface org.sectiond.Floor1, shaped like sectiond's Toggle so that
 * the messages are the same size:
 *   Trivial(s ref) -> (b, t)   returns at once
 *   Fire(s ref) -> (b, t)      emits Fired(t rev, u index, s id), then returns
 * With --socket it is also the floor under sectiond's socket TOGGLE with the bus attached:
 * every line a client sends is a change, answered `OK <rev>` after one Fired signal for it
 * (none with --no-bus), as each socket change of sectiond's is one signal. That floor's ratio
 * with and without the bus is what one signal per change costs on this machine, whoever
 * sends it.
 * It is an idiomatic sd-bus service: sd_bus_attach_event on an sd-event loop. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

static uint64_t revision;
static sd_bus *bus;

static int trivial(sd_bus_message *m, void *userdata, sd_bus_error *error) {
  (void)userdata, (void)error;
  return sd_bus_reply_method_return(m, "bt", 1, ++revision);
}

static int fire(sd_bus_message *m, void *userdata, sd_bus_error *error) {
  (void)userdata, (void)error;
  const char *ref;
  int r = sd_bus_message_read(m, "s", &ref);
  if (r < 0) return r;
  ++revision;
  r = sd_bus_emit_signal(sd_bus_message_get_bus(m), "/org/sectiond/Floor1", "org.sectiond.Floor1", "Fired", "tus",
                         revision, 0, ref);
  if (r < 0) return r;
  return sd_bus_reply_method_return(m, "bt", 1, revision);
}

static const sd_bus_vtable vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Trivial", "s", "bt", trivial, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Fire", "s", "bt", fire, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Fired", "tus", 0),
    SD_BUS_VTABLE_END,
};

/* The socket face, as lean as bench/floor.c: every client in one epoll set that sd-event
 * watches as one source (as sectiond does), 16 KiB reads, replies formatted by hand. */
static int clients = -1;

static size_t append_reply(char *out, uint64_t value) {
  char digits[20];
  size_t n = 0, used = 0;
  do digits[n++] = (char)('0' + value % 10); while ((value /= 10) > 0);
  out[used++] = 'O', out[used++] = 'K', out[used++] = ' ';
  while (n > 0) out[used++] = digits[--n];
  out[used++] = '\n';
  return used;
}

/* Answers every line a client has sent; partial lines are not kept (the load client sends
 * whole lines). */
static void serve_client(int fd) {
  static char in[16384], out[16384 * 24]; /* room for "OK <rev>\n" for every byte a line */
  ssize_t n = read(fd, in, sizeof in);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    close(fd); /* leaves the epoll set with it */
    return;
  }
  size_t used = 0;
  for (char *line = in, *end = in + n; (line = memchr(line, '\n', (size_t)(end - line))) != NULL; line++) {
    ++revision;
    if (bus) {
      int r = sd_bus_emit_signal(bus, "/org/sectiond/Floor1", "org.sectiond.Floor1", "Fired", "tus", revision, 0, "S0");
      if (r < 0) fprintf(stderr, "dbus_floor: signal: %s\n", strerror(-r));
    }
    used += append_reply(out + used, revision);
  }
  for (size_t sent = 0; sent < used;) {
    ssize_t w = send(fd, out + sent, used - sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break; /* a client that does not read is the bench's bug; drop what is left */
    sent += (size_t)w;
  }
}

static int clients_ready(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
  (void)source, (void)revents, (void)userdata;
  struct epoll_event ready[256];
  int count = epoll_wait(fd, ready, 256, 0);
  for (int i = 0; i < count; i++) serve_client(ready[i].data.fd);
  return 0;
}

static int accepting(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
  (void)source, (void)revents, (void)userdata;
  int client;
  while ((client = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
    struct epoll_event interest = {.events = EPOLLIN, .data.fd = client};
    if (epoll_ctl(clients, EPOLL_CTL_ADD, client, &interest) < 0) close(client);
  }
  return 0;
}

static int listen_on(sd_event *event, const char *path) {
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof address.sun_path) return -ENAMETOOLONG;
  strcpy(address.sun_path, path);
  unlink(path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) < 0 || listen(fd, 4096) < 0) return -errno;
  clients = epoll_create1(EPOLL_CLOEXEC);
  if (clients < 0) return -errno;
  int r = sd_event_add_io(event, NULL, clients, EPOLLIN, clients_ready, NULL);
  return r < 0 ? r : sd_event_add_io(event, NULL, fd, EPOLLIN, accepting, NULL);
}

int main(int argc, char **argv) {
  const char *socket_path = NULL;
  int with_bus = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--socket") && i + 1 < argc) socket_path = argv[++i];
    else if (!strcmp(argv[i], "--no-bus")) with_bus = 0;
    else {
      fprintf(stderr, "usage: dbus_floor [--socket PATH [--no-bus]]\n");
      return 2;
    }
  }
  sd_event *event = NULL;
  int r = sd_event_default(&event);
  if (r >= 0 && socket_path) r = listen_on(event, socket_path);
  if (r >= 0 && with_bus) {
    r = sd_bus_open_user(&bus);
    if (r >= 0) r = sd_bus_add_object_vtable(bus, NULL, "/org/sectiond/Floor1", "org.sectiond.Floor1", vtable, NULL);
    if (r >= 0) r = sd_bus_request_name(bus, "org.sectiond.Floor1", 0);
    if (r >= 0) r = sd_bus_attach_event(bus, event, 0);
  }
  if (r < 0) {
    fprintf(stderr, "dbus_floor: %s\n", strerror(-r));
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  r = sd_event_loop(event);
  return r < 0 ? 1 : 0;
}
