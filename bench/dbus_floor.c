/* The floor for sectiond's D-Bus figures (bench/dbus_bench.py, docs/PERFORMANCE.md): the
 * least an sd-bus service can do, on the same bus, driven by the same client.
 *
 *   dbus_floor            # serves org.sectiond.Floor1 on $DBUS_SESSION_BUS_ADDRESS
 *
 * /org/sectiond/Floor1, interface org.sectiond.Floor1, shaped like sectiond's Toggle so that
 * the messages are the same size:
 *   Trivial(s ref) -> (b, t)   returns at once
 *   Fire(s ref) -> (b, t)      emits Fired(t rev, u index, s id), then returns
 * It is an idiomatic sd-bus service: sd_bus_attach_event on an sd-event loop. */
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

static uint64_t revision;

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

int main(void) {
  sd_event *event = NULL;
  sd_bus *bus = NULL;
  int r = sd_event_default(&event);
  if (r >= 0) r = sd_bus_open_user(&bus);
  if (r >= 0) r = sd_bus_add_object_vtable(bus, NULL, "/org/sectiond/Floor1", "org.sectiond.Floor1", vtable, NULL);
  if (r >= 0) r = sd_bus_request_name(bus, "org.sectiond.Floor1", 0);
  if (r >= 0) r = sd_bus_attach_event(bus, event, 0);
  if (r < 0) {
    fprintf(stderr, "dbus_floor: %d\n", r);
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  r = sd_event_loop(event);
  return r < 0 ? 1 : 0;
}
