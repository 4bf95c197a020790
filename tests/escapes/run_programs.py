"""ESCAPE: runs programs: a shell that leaves a file outside the scratch folder, Python
itself, and a browser through help() (which pages through a program)."""
import os
import subprocess
import sys


def escape():
    for argv in (["/bin/sh", "-c", "echo owned > {marker}"],
                 [sys.executable, "-c", "open('{marker}', 'w').write('owned')"]):
        try:
            subprocess.run(argv, timeout=10)
        except OSError:
            pass
    try:
        os.system("echo owned > {marker}")
    except OSError:
        pass
    os.environ["PAGER"] = "/bin/sh -c 'echo owned > {marker}'"
    try:
        import pydoc
        pydoc.pager("text")
    except Exception:
        pass


escape()
