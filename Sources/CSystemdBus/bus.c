#include "CSystemdBus.h"

#include <errno.h>
#include <string.h>

static int on_method(sd_bus_message *call, void *userdata, sd_bus_error *error) {
  sectiond_bus_object *object = userdata;
  return object->method(call, object->context, error);
}

static int on_get(
    sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
    void *userdata, sd_bus_error *error) {
  (void)bus, (void)path, (void)interface;
  sectiond_bus_object *object = userdata;
  return object->property(reply, property, object->context, error);
}

/// Properties.Set is taken by the intercept callback (its reply must wait for the save, and
/// sd-bus answers a setter at once); this runs only for a Set the callback passed on.
static int on_set(
    sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *value,
    void *userdata, sd_bus_error *error) {
  (void)bus, (void)path, (void)interface, (void)value, (void)userdata;
  return sd_bus_error_setf(error, SD_BUS_ERROR_PROPERTY_READ_ONLY, "%s cannot be set this way", property);
}

/// Only calls of org.freedesktop.DBus.Properties go to Swift: this runs before every call.
static int on_call(sd_bus_message *call, void *userdata, sd_bus_error *error) {
  const char *interface = sd_bus_message_get_interface(call);
  if (!interface || strcmp(interface, "org.freedesktop.DBus.Properties") != 0) return 0;
  sectiond_bus_object *object = userdata;
  return object->intercept(call, object->context, error);
}

#define UNPRIVILEGED SD_BUS_VTABLE_UNPRIVILEGED

/// The interface of docs/DBUS.md (its introspection XML is docs/org.sectiond.Sectiond1.xml).
/// Access is checked by the daemon itself from the caller's credentials, hence every member
/// is UNPRIVILEGED: without it sd-bus would allow only callers with CAP_SYS_ADMIN on the
/// system bus.
static const sd_bus_vtable vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_WRITABLE_PROPERTY(
        "Mode", "s", on_get, on_set, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE | UNPRIVILEGED),
    SD_BUS_PROPERTY("Revision", "t", on_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("OpenSections", "as", on_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Sections", "a(ssbu)", on_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
    SD_BUS_METHOD_WITH_NAMES(
        "List", "", "", "ta(ssbu)", SD_BUS_PARAM(revision) SD_BUS_PARAM(sections), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "Items", "s", SD_BUS_PARAM(ref), "tas", SD_BUS_PARAM(revision) SD_BUS_PARAM(items), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "Open", "s", SD_BUS_PARAM(ref), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "Close", "s", SD_BUS_PARAM(ref), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "Toggle", "s", SD_BUS_PARAM(ref), "bt", SD_BUS_PARAM(open) SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "OpenAll", "", "", "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "CloseAll", "", "", "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "InsertSection", "sss", SD_BUS_PARAM(index) SD_BUS_PARAM(id) SD_BUS_PARAM(title), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "DeleteSection", "s", SD_BUS_PARAM(ref), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "MoveSection", "su", SD_BUS_PARAM(ref) SD_BUS_PARAM(index), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "RenameSection", "ss", SD_BUS_PARAM(ref) SD_BUS_PARAM(title), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "InsertItem", "sss", SD_BUS_PARAM(ref) SD_BUS_PARAM(position) SD_BUS_PARAM(text), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "DeleteItem", "su", SD_BUS_PARAM(ref) SD_BUS_PARAM(position), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "MoveItem", "suu", SD_BUS_PARAM(ref) SD_BUS_PARAM(from) SD_BUS_PARAM(to), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "SetItem", "sus", SD_BUS_PARAM(ref) SD_BUS_PARAM(position) SD_BUS_PARAM(text), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "Batch", "as", SD_BUS_PARAM(requests), "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "Reload", "", "", "t", SD_BUS_PARAM(revision), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "History", "u", SD_BUS_PARAM(count), "ta(tssuuss)", SD_BUS_PARAM(revision) SD_BUS_PARAM(changes), on_method, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES(
        "ChangedBy", "t", SD_BUS_PARAM(revision), "ssuus", SD_BUS_PARAM(time) SD_BUS_PARAM(via) SD_BUS_PARAM(uid) SD_BUS_PARAM(pid) SD_BUS_PARAM(name), on_method, UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_NAMES("Opened", "tus", SD_BUS_PARAM(revision) SD_BUS_PARAM(index) SD_BUS_PARAM(id), 0),
    SD_BUS_SIGNAL_WITH_NAMES("Closed", "tus", SD_BUS_PARAM(revision) SD_BUS_PARAM(index) SD_BUS_PARAM(id), 0),
    SD_BUS_SIGNAL_WITH_NAMES("ModeChanged", "ts", SD_BUS_PARAM(revision) SD_BUS_PARAM(mode), 0),
    SD_BUS_SIGNAL_WITH_NAMES("Inserted", "tus", SD_BUS_PARAM(revision) SD_BUS_PARAM(index) SD_BUS_PARAM(id), 0),
    SD_BUS_SIGNAL_WITH_NAMES("Deleted", "tus", SD_BUS_PARAM(revision) SD_BUS_PARAM(index) SD_BUS_PARAM(id), 0),
    SD_BUS_SIGNAL_WITH_NAMES("Moved", "tuus", SD_BUS_PARAM(revision) SD_BUS_PARAM(from) SD_BUS_PARAM(to) SD_BUS_PARAM(id), 0),
    SD_BUS_SIGNAL_WITH_NAMES("Renamed", "tus", SD_BUS_PARAM(revision) SD_BUS_PARAM(index) SD_BUS_PARAM(id), 0),
    SD_BUS_SIGNAL_WITH_NAMES("ItemsChanged", "tusu", SD_BUS_PARAM(revision) SD_BUS_PARAM(index) SD_BUS_PARAM(id) SD_BUS_PARAM(count), 0),
    SD_BUS_SIGNAL_WITH_NAMES("Reloaded", "t", SD_BUS_PARAM(revision), 0),
    SD_BUS_VTABLE_END,
};

int sectiond_bus_add_object(
    sd_bus *bus, sd_bus_slot **vtable_slot, sd_bus_slot **callback_slot, const char *path,
    const char *interface, sectiond_bus_object *object) {
  int r = sd_bus_add_object(bus, callback_slot, path, on_call, object);
  if (r < 0) return r;
  return sd_bus_add_object_vtable(bus, vtable_slot, path, interface, vtable, object);
}
