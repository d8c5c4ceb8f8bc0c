#!/bin/sh
# PID 1 of the systemd test lab (Tests/System/lib/lab.py says why each step is here). Runs inside
# `unshare --pid --mount --cgroup --uts --ipc --fork`, already in the lab's own cgroup;
# makes every file system systemd or an installer writes private, then becomes systemd.
set -eu
mount --make-rprivate /
# The project (its scripts and built binaries) must stay visible: a checkout under /tmp,
# /var/tmp or /run (CI may clone there) would vanish under the private mounts below, so a
# descriptor of it is kept and it is bound back at its path afterwards.
project="${LAB_PROJECT:-}"
case "$project" in
  /tmp/* | /var/tmp/* | /run/*) exec 9<"$project" ;;
  *) project="" ;;
esac
# /run first: the overlays' upper layers and the lab's /dev live in it.
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/lab
# Everything an installer, useradd --create-home, dpkg or the journal writes.
for d in etc usr var home root opt srv; do
  [ -d "/$d" ] || continue
  mkdir -p "/run/lab/$d/upper" "/run/lab/$d/work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=/run/lab/$d/upper,workdir=/run/lab/$d/work" "/$d"
done
# The machine's own sectiond files (a `make install`, `make run` as root, the package, units
# enabled on the host) must not leak into the lab: every test starts from the state it made,
# as on a fresh machine. Removed from the overlays only (whiteouts in the lab's upper layers):
# the mount checks make sure the host's files are never the ones touched.
for d in etc var root $([ -d /home ] && echo home); do mountpoint -q "/$d" || { echo "lab-init: /$d is not the lab's overlay" >&2; exit 1; }; done
rm -rf /var/lib/sectiond /var/lib/private/sectiond /etc/sectiond /root/.config/sectiond /root/.local/state/sectiond
rm -f /etc/systemd/system/*.wants/sectiond* /etc/systemd/user/*.wants/sectiond*
# Nor the machine's people: the suites add `alice`, `bob`, ... and the package adds the
# `sectiond` system user, as on a fresh machine, and a machine that already has an alice (or
# a sectiond from an install on the host) would make useradd fail, or hand the lab's alice
# the host's home and groups. So the lab's account database starts with the system's
# accounts only: every regular account (uid or gid 1000-59999) and the sectiond user and
# group leave the lab's passwd, group, shadow, gshadow, subuid and subgid, their names leave
# every member list, and their homes and mailboxes go (never the project's own directory).
regular='($3 >= 1000 && $3 < 60000) || $1 == "sectiond"'
users=" $(awk -F: "$regular { print \$1 }" /etc/passwd | tr '\n' ' ') "
groups=" $(awk -F: "$regular { print \$1 }" /etc/group | tr '\n' ' ') "
# prune FILE GONE MEMBER-FIELDS: without the lines named in GONE, and without the users
# gone from the comma-separated lists in MEMBER-FIELDS; rewritten in place (mode kept).
prune() {
  [ -f "$1" ] || return 0
  awk -F: -v OFS=: -v gone="$2" -v users="$users" -v fields="$3" '
    function strip(list, names, n, i, kept) {
      n = split(list, names, ","); kept = ""
      for (i = 1; i <= n; i++) if (!index(users, " " names[i] " ")) kept = kept (kept == "" ? "" : ",") names[i]
      return kept
    }
    index(gone, " " $1 " ") { next }
    { n = split(fields, f, ","); for (i = 1; i <= n; i++) if (f[i] != "" && NF >= f[i]) $f[i] = strip($f[i]); print }
  ' "$1" >"$1.lab"
  cat "$1.lab" >"$1"
  rm -f "$1.lab"
}
for user in $users; do
  home=$(awk -F: -v u="$user" '$1 == u { print $6 }' /etc/passwd)
  case "$home" in /home/?*) case "${LAB_PROJECT:-}/" in "$home"/*) ;; *) rm -rf "$home" ;; esac ;; esac
  rm -f "/var/mail/$user" "/var/spool/mail/$user"
done
prune /etc/passwd "$users" ""
prune /etc/shadow "$users" ""
prune /etc/group "$groups" 4
prune /etc/gshadow "$groups" 3,4
prune /etc/subuid "$users" ""
prune /etc/subgid "$users" ""
# After the /var overlay, which would hide it.
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
if [ -n "$project" ]; then
  mkdir -p "$project"
  mount --no-canonicalize --bind /proc/self/fd/9 "$project"
  exec 9<&-
fi
# A /dev of its own (the host's devtmpfs is shared even across mount namespaces, and
# systemd makes /dev/log, /dev/mqueue, ... in it): the harmless nodes bound in, a private
# devpts and /dev/shm, and /dev/console and /dev/kmsg as plain files, so that systemd's
# status lines and journald's own messages stay out of the host's console and kernel log.
dev=/run/lab/dev
mkdir -p "$dev"
mount -t tmpfs -o mode=0755,nosuid tmpfs "$dev"
for node in null zero full random urandom tty; do
  : >"$dev/$node"
  mount --bind "/dev/$node" "$dev/$node"
done
mkdir -p "$dev/pts" "$dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$dev/pts"
ln -s pts/ptmx "$dev/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$dev/shm"
ln -s /proc/self/fd "$dev/fd"
ln -s /proc/self/fd/0 "$dev/stdin"
ln -s /proc/self/fd/1 "$dev/stdout"
ln -s /proc/self/fd/2 "$dev/stderr"
: >"$dev/console"
: >"$dev/kmsg"
mount --move "$dev" /dev
# /sys read-only (as in any container), then the lab's cgroup subtree, seen as the
# root through the cgroup namespace, on top.
mount --bind /sys /sys
mount -o remount,bind,ro,nosuid,nodev,noexec /sys
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# Host-wide kernel settings stay out of reach (systemd raises fs.nr_open, for one).
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
mkdir -p /run/systemd/system /run/systemd/journald.conf.d
printf '[Journal]\nReadKMsg=no\nForwardToKMsg=no\nForwardToConsole=no\n' \
  >/run/systemd/journald.conf.d/lab.conf
# The installed socket units (DefaultDependencies) pull in sysinit.target, so what it and
# the early targets want must not reach the host: every unit they want is masked (in the
# lab's /etc, which beats /run and /lib) except the journal, users and tmpfiles, which
# act only on the lab's private layers; so are units that load kernel modules, set the
# clock or mount kernel file systems. container= tells systemd and its generators
# (gpt-auto, fstab) that this is not a machine to set up.
mask() {
  rm -f "/etc/systemd/system/$1"
  ln -s /dev/null "/etc/systemd/system/$1"
}
for wants in /etc/systemd/system /lib/systemd/system /usr/lib/systemd/system; do
  for target in sysinit local-fs swap cryptsetup veritysetup integritysetup; do
    for unit in "$wants/$target.target.wants"/*; do
      [ -e "$unit" ] || [ -L "$unit" ] || continue
      case "${unit##*/}" in
        *.target | systemd-journald.service | systemd-journal-flush.service | \
          systemd-sysusers.service | systemd-tmpfiles-setup.service | \
          systemd-update-utmp.service | dev-mqueue.mount) ;;
        *) mask "${unit##*/}" ;;
      esac
    done
  done
done
for unit in modprobe@.service systemd-udevd.service systemd-udev-trigger.service \
  systemd-remount-fs.service systemd-hwdb-update.service systemd-fsck-root.service \
  proc-sys-fs-binfmt_misc.mount sys-kernel-debug.mount sys-kernel-tracing.mount \
  sys-kernel-config.mount sys-fs-fuse-connections.mount dev-hugepages.mount \
  systemd-journald-audit.socket; do
  mask "$unit"
done
export container=sectiond-lab
# The target systemd starts has no dependencies: nothing runs until a test starts it.
printf '[Unit]\nDescription=sectiond test lab\n' >/run/systemd/system/lab.target
exec /lib/systemd/systemd --system --unit=lab.target
