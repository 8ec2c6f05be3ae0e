#!/usr/bin/env python3
# pty_drive.py TFSH LINE...: the interactive shell on a pseudo-terminal; types each line
# after a prompt, then Ctrl-D; writes everything the shell wrote to stdout as it comes (so
# a caller's timeout still shows how far it got). Every wait is bounded; a shell that does
# not exit after Ctrl-D is killed and said so.
import os, pty, select, signal, sys, time

tfsh = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execv(tfsh, [tfsh])
out = b""


def emit(d):
    sys.stdout.write(d.decode(errors="replace").replace("\r", ""))
    sys.stdout.flush()


def read_until(pat, secs):
    """Read until pat shows in the last output, secs * 2 at most (a loaded CI machine)."""
    global out
    end = time.time() + secs * 2
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                d = os.read(fd, 65536)
            except OSError:
                return False
            if not d:
                return False
            out += d
            emit(d)
            if out.endswith(pat) or pat in out[-200:]:
                return True
    return False


read_until(b">>> ", 20)
for line in sys.argv[2:]:
    mark = len(out)
    os.write(fd, line.encode() + b"\n")
    end = time.time() + 60
    while time.time() < end:
        if not read_until(b">>> ", 30):
            break
        if out.rfind(b">>> ") > mark + len(line):
            break
# Ctrl-D, again each second until the shell exits: one typed while the terminal is still
# in cooked mode (the shell not yet back in its line editor) is taken by the line
# discipline and never reaches the shell (a line typed then is echoed twice, too).
for tick in range(400):   # 20 s for the shell to exit after Ctrl-D
    if tick % 20 == 0:
        try:
            os.write(fd, b"\x04")
        except OSError:
            pass
    read_until(b"\xff", 0.025)
    done, _ = os.waitpid(pid, os.WNOHANG)
    if done:
        break
else:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    emit(b"\npty_drive: the shell did not exit after Ctrl-D; killed it\n")
