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

/// The peer's supplementary groups from SO_PEERGROUPS (Linux 4.13), as they were when it
/// connected, into `groups` of `capacity`: how many there are; more than `capacity` when they
/// did not fit (call again with room for that many); -1 with errno set.
int cshim_peer_groups(int fd, gid_t *groups, int capacity);

/// renameat2(RENAME_EXCHANGE): swaps two names atomically. Returns 0 or -1 with errno set.
int cshim_rename_exchange(const char *from, const char *to);

/// memfd_create(2) with MFD_CLOEXEC: an anonymous file in memory. Returns a descriptor or -1.
int cshim_memfd(const char *name);

/// signalfd(2), non-blocking and close-on-exec, for the signals in `mask` (which the caller has
/// blocked); <sys/signalfd.h> is not part of Swift's Glibc module. Returns the descriptor or -1.
int cshim_signalfd(const sigset_t *mask);

/// Reads one pending signal from a signalfd: its number, 0 when none is pending, -1 with errno set.
int cshim_read_signal(int fd);

/// recv(2), send(2) with MSG_NOSIGNAL, and a non-waiting epoll_wait(2), issued through
/// syscall(2): the daemon's request path. glibc's own wrappers are cancellation points, and
/// once the daemon has a second thread (the state syncer) each call switches asynchronous
/// cancellation on and off around the system call; the daemon never cancels a thread.
/// callgrind, a PING at 1 in flight: 1,022 user-space instructions before, 981 after. Each
/// returns what the system call returns, -1 with errno set on failure.
ssize_t cshim_receive(int fd, void *buffer, size_t count);
/// recv(2) with MSG_PEEK | MSG_DONTWAIT: what is waiting, left for the next read.
ssize_t cshim_peek(int fd, void *buffer, size_t count);
ssize_t cshim_send(int fd, const void *buffer, size_t count);
int cshim_epoll_ready(int epfd, struct epoll_event *events, int capacity, int timeout);

/// eventfd(2), non-blocking and close-on-exec: a counter one thread adds to, to wake another
/// that waits for it in epoll. Returns a descriptor or -1 with errno set.
int cshim_eventfd(void);

/// wcwidth(3): the cells the terminal gives a character under the current LC_CTYPE (-1 when
/// it is not printable there); <wchar.h> declares it only for _XOPEN_SOURCE.
int cshim_wcwidth(unsigned int character);

/// prctl(PR_SET_DUMPABLE, dumpable): whether the process may dump core and be traced or read
/// (/proc/PID/mem) by its own user; prctl is variadic, out of Swift's reach. Returns 0 or -1
/// with errno set.
int cshim_set_dumpable(int dumpable);

/// malloc_trim(0): gives the heap's free memory back to the system (glibc keeps what it freed
/// below its top, and in arenas, for reuse). Returns 1 when some was given back. <malloc.h> is
/// glibc's, not part of Swift's Glibc module.
int cshim_malloc_trim(void);
#endif
