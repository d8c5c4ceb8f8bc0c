#ifndef SECTIOND_CSHIM_H
#define SECTIOND_CSHIM_H
#include <signal.h>
#include <sys/epoll.h>
#include <sys/types.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; glibc hides it without _GNU_SOURCE.
int cshim_accept_nonblocking(int fd);

/// The peer's pid and uid from SO_PEERCRED; struct ucred needs _GNU_SOURCE too.
/// Returns 0 or -1 with errno set.
int cshim_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// renameat2(RENAME_EXCHANGE): swaps two names atomically. Returns 0 or -1 with errno set.
int cshim_rename_exchange(const char *from, const char *to);

/// memfd_create(2) with MFD_CLOEXEC: an anonymous file in memory. Returns a descriptor or -1.
int cshim_memfd(const char *name);

/// signalfd(2), non-blocking and close-on-exec, for the signals in `mask` (which the caller has
/// blocked); <sys/signalfd.h> is not part of Swift's Glibc module. Returns the descriptor or -1.
int cshim_signalfd(const sigset_t *mask);

/// Reads one pending signal from a signalfd: its number, 0 when none is pending, -1 with errno set.
int cshim_read_signal(int fd);

/// wcwidth(3): the cells the terminal gives a character under the current LC_CTYPE (-1 when
/// it is not printable there); <wchar.h> declares it only for _XOPEN_SOURCE.
int cshim_wcwidth(unsigned int character);
#endif
