"""Run the appliance's root filesystem (tools/appliance/build-root) the way a
container runtime would: bulwark-proxy as PID 1 of a new PID and mount
namespace, chrooted into the root, with /proc, the host's /dev, fresh /run
and /tmp, and nothing of the caller's environment but what is passed. The
network is the host's, so its ports are on the host's loopback.

Used by tests/appliance/run and the perf harness's appliance variant.
Needs root (unshare, mount, chroot). Python 3 standard library only.
"""

import os
import subprocess
import time

# unshare's default (--propagation private) makes "/" private, which fails
# where "/" is no mount point (inside a chroot, as in ../shared/tools/
# fresh-root); making private the mount that holds the root works in both
# places, and keeps the mounts below from propagating out of the namespace.
_INNER = ('set -e; r=$1; shift; mount --make-rprivate "$(findmnt -n -o TARGET -T "$r")"; '
          'mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; '
          'mount -t tmpfs tmpfs "$r/run"; mount -t tmpfs tmpfs "$r/tmp"; '
          'exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@" '
          '/usr/bin/bulwark-proxy')


def launch(root, env, stdout, stderr):
    """Start bulwark-proxy in ROOT with exactly the variables of ENV; returns
    the unshare process (in a process group of its own)."""
    envargs = ["%s=%s" % kv for kv in env.items()]
    return subprocess.Popen(
        ["unshare", "--mount", "--pid", "--fork", "--propagation", "unchanged", "--kill-child",
         "bash", "-c", _INNER, "appliance", os.path.abspath(root)] + envargs,
        stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True)


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def init_pid(proc, timeout=5.0):
    """PID, as the host sees it, of bulwark-proxy (unshare's child)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = children(proc.pid)
        if kids:
            return kids[0]
        time.sleep(0.05)
    raise RuntimeError("unshare %d has no child" % proc.pid)


def apache_pid(proc, timeout=60.0):
    """PID of Apache's parent, bulwark-proxy's child: the leader of the
    process group of every Apache process of the appliance."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in children(init_pid(proc)):
            try:
                with open("/proc/%d/comm" % pid) as f:
                    if f.read().strip() in ("apache2", "httpd"):
                        return pid
            except OSError:
                pass
        time.sleep(0.1)
    raise RuntimeError("no Apache under bulwark-proxy")
