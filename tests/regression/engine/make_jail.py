#!/usr/bin/env python3
"""Set up a SecChrootDir jail for a regression test: make_jail.py RUN_DIR.

The jail is RUN_DIR/jail. What Apache opens after it has entered the jail
is opened inside it, at the same absolute path: the MPM's PidFile and the
engine's SecTmpDir/SecDataDir under RUN_DIR/apache, and the scoreboard the
MPM creates next (shm_open, under /dev/shm). So those directories
are made inside the jail (owned as the harness makes them outside), and a
detached watcher copies the pid file Apache writes in the jail to where the
harness (and `apache2 -k stop`, which is not jailed) read it. The watcher
gives up after 120 s.
"""
import os
import pwd
import shutil
import sys
import time


def run_user():
    for name in ("www-data", "nobody"):
        try:
            p = pwd.getpwnam(name)
            return p.pw_uid, p.pw_gid
        except KeyError:
            pass
    return 65534, 65534


def make(run_dir):
    jail = os.path.join(run_dir, "jail")
    inside = jail + os.path.join(run_dir, "apache")
    for d in ("tmp", "dev/shm"):   # dev/shm: the name-based scoreboard (shm_open)
        os.makedirs(os.path.join(jail, d), exist_ok=True)
        os.chmod(os.path.join(jail, d), 0o1777)
    uid, gid = run_user()
    for sub in ("modsec/tmp", "modsec/data", "modsec/upload"):
        os.makedirs(os.path.join(inside, sub), exist_ok=True)
    for sub in ("modsec", "modsec/tmp", "modsec/data", "modsec/upload"):
        os.chown(os.path.join(inside, sub), uid, gid)
    return os.path.join(inside, "httpd.pid"), os.path.join(run_dir, "apache", "httpd.pid")


def watch(src, dst):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if os.path.exists(src) and os.path.getsize(src) > 0 and os.path.isdir(os.path.dirname(dst)):
            shutil.copyfile(src, dst + ".tmp")
            os.rename(dst + ".tmp", dst)
            return
        time.sleep(0.05)


def main():
    if os.geteuid() != 0:
        print("SecChrootDir needs Apache started as root: run this test as root")
        return 1
    src, dst = make(os.path.abspath(sys.argv[1]))
    if os.fork() == 0:          # the watcher outlives this setup step
        os.setsid()
        fd = os.open(os.devnull, os.O_RDWR)
        for i in (0, 1, 2):
            os.dup2(fd, i)
        watch(src, dst)
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
