#include "CShim.h"
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>

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

int cshim_rename_exchange(const char *from, const char *to) {
  return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
}

int cshim_memfd(const char *name) {
  return memfd_create(name, MFD_CLOEXEC);
}
