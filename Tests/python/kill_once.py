#!/usr/bin/env python3
"""Fault injection for test_spark.py: shipped to Spark as `receiptflow`, it runs the real binary
(RECEIPTFLOW_REAL) unchanged, except for the first run on the input named by KILL_SOURCE: that run gets only the
first KILL_AFTER_BYTES bytes of its input, then the real receiptflow is SIGKILLed and this process SIGKILLs itself,
as an executor losing the tool mid-file would see it. KILL_MARKER is created exclusively so that exactly one run,
whichever task attempt it is, is killed; it records what happened for the test to check.

It also proves that the driver passes the executor's environment through: without it, none of these variables
would reach this script and nothing would be killed.
"""

import os
import signal
import subprocess
import sys


def main():
    real = os.environ["RECEIPTFLOW_REAL"]
    argv = [real] + sys.argv[1:]
    target = os.environ.get("KILL_SOURCE")
    marker = os.environ.get("KILL_MARKER")
    if target and marker and os.environ.get("RECEIPTFLOW_SOURCE") == target:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            fd = None
        if fd is not None:
            limit = int(os.environ.get("KILL_AFTER_BYTES", "65536"))
            child = subprocess.Popen(argv, stdin=subprocess.PIPE)
            sent = 0
            while sent < limit:
                chunk = sys.stdin.buffer.read(min(65536, limit - sent))
                if not chunk:
                    break
                child.stdin.write(chunk)
                sent += len(chunk)
            child.stdin.flush()
            child.send_signal(signal.SIGKILL)
            child.wait()
            os.write(fd, f"killed receiptflow on {target} after {sent} bytes (exit {child.returncode})\n".encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    os.execv(real, argv)


if __name__ == "__main__":
    main()
