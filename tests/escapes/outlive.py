"""ESCAPE: forks a daemon, out of the process group, that outlives the evaluation."""
import ctypes
import os
import time


def escape():
    if os.fork() == 0:
        try:
            os.setsid()
        except OSError:
            pass
        if os.fork() == 0:
            ctypes.CDLL(None).prctl(15, b"{token}", 0, 0, 0)  # PR_SET_NAME: findable by name
            for _ in range(600):
                time.sleep(0.1)
        os._exit(0)


escape()
