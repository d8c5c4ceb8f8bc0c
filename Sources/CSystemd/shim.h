#ifndef SECTIOND_CSYSTEMD_SHIM_H
#define SECTIOND_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>
#include <sys/epoll.h>
#include <signal.h>
#endif
