"""ESCAPE: reads a file outside its scratch folder and puts it in its answer."""


def escape():
    with open("{canary}") as f:
        raise RuntimeError("stolen: " + f.read())
