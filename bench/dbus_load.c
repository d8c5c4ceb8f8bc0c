/* The load client of bench/dbus_bench.py: sd-bus, one thread, calls pipelined
 * asynchronously. Its own poll loop takes every message a connection has each time it is
 * woken (sd_bus_attach_event takes one per loop turn, which made the client, not the
 * services, the limit with 100 subscribers). The same client drives sectiond and the
 * floor (bench/dbus_floor.c).
 *
 *   dbus_load calls DEST PATH IFACE METHOD ARG DEPTH SECONDS
 *       keeps DEPTH calls METHOD(s ARG) in flight on one connection for SECONDS (after a
 *       tenth of that as warm-up); prints {"calls":N,"seconds":S,"rate":R,...}, all_calls
 *       counting the warm-up's too
 *   dbus_load signals DEST PATH IFACE METHOD ARG SIGNAL SUBSCRIBERS COUNT DEPTH
 *       SUBSCRIBERS connections each match SIGNAL of IFACE from DEST (SIGNAL "-": every
 *       signal of IFACE); then COUNT calls METHOD(s ARG),
 *       DEPTH in flight, each causing one SIGNAL; the time runs from the first call until
 *       every subscriber has COUNT signals; prints {"signals":COUNT,"subscribers":S,
 *       "seconds":T,"rate":COUNT/T}
 * The bus is $DBUS_SESSION_BUS_ADDRESS. Exit status 1 on a failed call or a timeout. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-bus.h>

static const char *dest, *path, *iface, *method, *arg;
enum { most_buses = 1024 };
static sd_bus *buses[most_buses];
static unsigned nbuses;
static int running = 1;
static sd_bus *caller;
static uint64_t sent, done, limit, measured_from;
static double started, warm_until, stop_at;
static unsigned long failures;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what, int r) {
  fprintf(stderr, "dbus_load: %s: %s\n", what, strerror(-r));
  exit(1);
}

static int returned(sd_bus_message *m, void *userdata, sd_bus_error *error);

static void send_one(void) {
  int r = sd_bus_call_method_async(caller, NULL, dest, path, iface, method, returned, NULL, "s", arg);
  if (r < 0) die("sd_bus_call_method_async", r);
  sent++;
}

static int returned(sd_bus_message *m, void *userdata, sd_bus_error *error) {
  (void)userdata, (void)error;
  if (sd_bus_message_is_method_error(m, NULL)) {
    if (failures++ == 0) fprintf(stderr, "dbus_load: %s\n", sd_bus_message_get_error(m)->message);
  }
  done++;
  double t = now();
  if (warm_until > 0 && t >= warm_until && measured_from == 0) {
    measured_from = done;
    started = t;
  }
  if (stop_at > 0 && t >= stop_at) {
    running = 0;
    return 0;
  }
  if (limit == 0 || sent < limit) send_one();
  return 0;
}

static sd_bus *connect_bus(void) {
  sd_bus *bus;
  int r = sd_bus_open_user(&bus);
  if (r < 0) die("sd_bus_open_user", r);
  if (nbuses == most_buses) die("too many connections", -EINVAL);
  buses[nbuses++] = bus;
  return bus;
}

/* Until `running` is cleared: every message of every connection, then poll. */
static void run(double deadline) {
  struct pollfd fds[most_buses];
  while (running) {
    for (unsigned i = 0; i < nbuses && running; i++) {
      int r;
      while (running && (r = sd_bus_process(buses[i], NULL)) > 0) {
      }
      if (r < 0) die("sd_bus_process", r);
    }
    if (!running) break;
    if (now() > deadline) {
      fprintf(stderr, "dbus_load: timed out (%llu of %llu calls returned)\n", (unsigned long long)done,
              (unsigned long long)sent);
      exit(1);
    }
    for (unsigned i = 0; i < nbuses; i++) {
      fds[i].fd = sd_bus_get_fd(buses[i]);
      fds[i].events = (short)sd_bus_get_events(buses[i]);
    }
    poll(fds, nbuses, 100);
  }
}

static unsigned subscribers, complete;
static uint64_t *received;

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error) {
  (void)m, (void)error;
  uint64_t *count = userdata;
  if (++*count == limit && ++complete == subscribers) running = 0;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: see the comment at the top of dbus_load.c\n");
    return 2;
  }
  dest = argv[2], path = argv[3], iface = argv[4], method = argv[5], arg = argv[6];
  int r;
  caller = connect_bus();
  if (strcmp(argv[1], "calls") == 0 && argc == 9) {
    int depth = atoi(argv[7]);
    double seconds = atof(argv[8]);
    warm_until = now() + seconds / 10;
    stop_at = warm_until + seconds;
    for (int i = 0; i < depth; i++) send_one();
    run(stop_at + 30);
    double elapsed = now() - started;
    uint64_t calls = done - measured_from;
    printf("{\"calls\":%llu,\"seconds\":%.4f,\"rate\":%.1f,\"failures\":%lu,\"all_calls\":%llu}\n",
           (unsigned long long)calls, elapsed, calls / elapsed, failures, (unsigned long long)done);
  } else if (strcmp(argv[1], "signals") == 0 && argc == 11) {
    const char *member = argv[7];
    subscribers = (unsigned)atoi(argv[8]);
    limit = strtoull(argv[9], NULL, 10);
    int depth = atoi(argv[10]);
    received = calloc(subscribers, sizeof *received);
    char match[512];
    int n = snprintf(match, sizeof match, "type='signal',sender='%s',path='%s',interface='%s'", dest, path, iface);
    if (strcmp(member, "-") != 0) snprintf(match + n, sizeof match - n, ",member='%s'", member);
    for (unsigned i = 0; i < subscribers; i++) {
      sd_bus *bus = connect_bus();
      r = sd_bus_add_match(bus, NULL, match, on_signal, &received[i]);
      if (r < 0) die("sd_bus_add_match", r);
    }
    started = now();
    for (int i = 0; i < depth && sent < limit; i++) send_one();
    run(started + 120);
    double elapsed = now() - started;
    printf("{\"signals\":%llu,\"subscribers\":%u,\"seconds\":%.4f,\"rate\":%.1f,\"failures\":%lu}\n",
           (unsigned long long)limit, subscribers, elapsed, limit / elapsed, failures);
  } else {
    fprintf(stderr, "usage: see the comment at the top of dbus_load.c\n");
    return 2;
  }
  return failures ? 1 : 0;
}
