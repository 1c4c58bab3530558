#!/bin/bash
# jail.sh STATE_DIR BIN_DIR COMMAND [ARG...]: run as root, runs COMMAND the way docs/deploy/svc.service runs svc,
# as far as that can be done without systemd. STATE_DIR is seen as /mnt/state, the working directory and the one
# place it may write; BIN_DIR, holding `seccomp` and `system-calls` (the allow-list), as /mnt/bin, read-only.
#   a mount namespace: ProtectSystem=strict (every mount read-only, /sys and its cgroups among them: also
#     ProtectKernelTunables, ProtectControlGroups), ProtectHome=yes, PrivateTmp=yes, PrivateDevices=yes,
#     ProtectProc=invisible and ProcSubset=pid;
#   a UTS namespace: ProtectHostname=yes;
#   an unprivileged user (UID and GID 61999, as DynamicUser= picks one) with no capabilities (CapabilityBoundingSet=,
#     AmbientCapabilities=) and no_new_privs; UMask=0077; LimitNOFILE= (as far as the caller's hard limit allows);
#   then seccomp: the system call filters.
# Not reproduced: PrivateUsers= (a user namespace), DevicePolicy= and ProtectClock='s device rule (there are only
# pseudo-devices anyway), RemoveIPC=, SystemCallArchitectures=; ProtectKernelLogs= in part (no /dev/kmsg, and
# syslog(2) is off the allow-list).
set -euo pipefail
if [ "${1-}" != --inside ]; then
  exec unshare --mount --uts --propagation private -- "$0" --inside "$@"
fi
shift
state=$1 bin=$2
shift 2
hostname svc-jail

# /mnt/state and /mnt/bin first, while /tmp (where they may be) is still the host's.
mount -n -t tmpfs -o mode=755 tmpfs /mnt
mkdir /mnt/state /mnt/bin /mnt/dev
mount -n --bind "$state" /mnt/state
mount -n --bind "$bin" /mnt/bin

# PrivateDevices=yes: a /dev of the pseudo-devices alone, moved into place once the rest is read-only.
mount -n -t tmpfs -o mode=755,nosuid,noexec tmpfs /mnt/dev
for device in null zero full random urandom tty; do
  touch "/mnt/dev/$device"
  mount -n --bind "/dev/$device" "/mnt/dev/$device"
done
mkdir /mnt/dev/shm /mnt/dev/pts
mount -n -t tmpfs -o mode=1777,nosuid,nodev tmpfs /mnt/dev/shm
ln -s /proc/self/fd /mnt/dev/fd
ln -s /proc/self/fd/0 /mnt/dev/stdin
ln -s /proc/self/fd/1 /mnt/dev/stdout
ln -s /proc/self/fd/2 /mnt/dev/stderr

# ProtectSystem=strict: every mount read-only but the state directory (and /proc, /dev, replaced below).
awk '{ print $5 }' /proc/self/mountinfo | sort -u | while read -r point; do
  case "$point" in
  /mnt | /mnt/bin) ;;
  /proc | /proc/* | /dev | /dev/* | /mnt/*) continue ;; # replaced below, the state directory, or hidden by /mnt
  esac
  mount -n -o remount,bind,ro "$point" 2>/dev/null || echo "jail.sh: $point stays writable" >&2
done
mount -n --move /mnt/dev /dev
mount -n -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mount -n -t tmpfs -o mode=1777,nosuid,nodev tmpfs /var/tmp
for home in /root /home /run/user; do
  if [ -d "$home" ]; then mount -n -t tmpfs -o ro,mode=000 tmpfs "$home"; fi
done
mount -n -t proc -o nosuid,nodev,noexec,hidepid=invisible,subset=pid proc /proc

cd /mnt/state
umask 0077
files=$(ulimit -Hn)
if [ "$files" = unlimited ] || [ "$files" -gt 65536 ]; then files=65536; fi
exec prlimit --nofile="$files:$files" -- setpriv --reuid=61999 --regid=61999 --clear-groups --inh-caps=-all \
  --bounding-set=-all --no-new-privs -- /mnt/bin/seccomp /mnt/bin/system-calls "$@"
