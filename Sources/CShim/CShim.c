#include "CShim.h"
#include <fcntl.h>
#include <malloc.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

int cshim_accept_nonblocking(int fd) {
  return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int cshim_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    return -1;
  *pid = cred.pid;
  *uid = cred.uid;
  *gid = cred.gid;
  return 0;
}

int cshim_peer_groups(int fd, gid_t *groups, int capacity) {
  socklen_t len = (socklen_t)(capacity * sizeof(gid_t));
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
    return errno == ERANGE ? (int)(len / sizeof(gid_t)) : -1;
  return (int)(len / sizeof(gid_t));
}

int cshim_rename_exchange(const char *from, const char *to) {
  return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
}

int cshim_memfd(const char *name) {
  return memfd_create(name, MFD_CLOEXEC);
}

int cshim_signalfd(const sigset_t *mask) {
  return signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

int cshim_read_signal(int fd) {
  struct signalfd_siginfo info;
  ssize_t count = read(fd, &info, sizeof(info));
  if (count == (ssize_t)sizeof(info))
    return (int)info.ssi_signo;
  if (count < 0 && errno == EAGAIN)
    return 0;
  return -1;
}

ssize_t cshim_receive(int fd, void *buffer, size_t count) {
  return syscall(SYS_recvfrom, fd, buffer, count, 0, NULL, NULL);
}

ssize_t cshim_peek(int fd, void *buffer, size_t count) {
  return syscall(SYS_recvfrom, fd, buffer, count, MSG_PEEK | MSG_DONTWAIT, NULL, NULL);
}

ssize_t cshim_send(int fd, const void *buffer, size_t count) {
  return syscall(SYS_sendto, fd, buffer, count, MSG_NOSIGNAL, NULL, 0);
}

int cshim_epoll_ready(int epfd, struct epoll_event *events, int capacity, int timeout) {
  return (int)syscall(SYS_epoll_pwait, epfd, events, capacity, timeout, NULL, 8);
}

int cshim_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int cshim_wcwidth(unsigned int character) { return wcwidth((wchar_t)character); }

int cshim_malloc_trim(void) { return malloc_trim(0); }

int cshim_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0); }
