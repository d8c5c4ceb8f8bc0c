#ifndef SECTIOND_CSYSTEMDBUS_H
#define SECTIOND_CSYSTEMDBUS_H
#include <systemd/sd-bus.h>

/// sectiond's D-Bus object for sd-bus. The vtable is made of C macros (designated
/// initializers of unions) that Swift cannot spell, so it lives here; every entry calls back
/// into Swift through these function pointers with `context`.
typedef struct sectiond_bus_object {
  void *context;
  /// Every method of the interface; the member name says which.
  int (*method)(sd_bus_message *call, void *context, sd_bus_error *error);
  /// Appends the value of `property` to `reply` (Get, GetAll, PropertiesChanged).
  int (*property)(sd_bus_message *reply, const char *property, void *context, sd_bus_error *error);
  /// Sees every call of org.freedesktop.DBus.Properties to the object before sd-bus's own
  /// dispatch: returns 1 when it took the call (a Set, or a Get that must wait for a save),
  /// 0 to let sd-bus go on.
  int (*intercept)(sd_bus_message *call, void *context, sd_bus_error *error);
} sectiond_bus_object;

/// Registers `object` at `path`: the interface `interface` (see bus.c for its members) and
/// the callback that sees calls first. Both slots unregister when unreferenced.
int sectiond_bus_add_object(
    sd_bus *bus, sd_bus_slot **vtable_slot, sd_bus_slot **callback_slot, const char *path,
    const char *interface, sectiond_bus_object *object);

#endif
