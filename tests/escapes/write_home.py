"""ESCAPE: rewrites a file in the user's data directory and in the run directory."""
import os

TARGETS = ["{canary}", "{run_file}"]


def escape():
    for path in TARGETS:
        try:
            with open(path, "w") as f:
                f.write("owned by a candidate")
        except OSError:
            pass
        try:
            os.unlink(path)
        except OSError:
            pass


escape()
