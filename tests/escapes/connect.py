"""ESCAPE: connects to a loopback port and sends the run's data there."""
import socket


def escape():
    for family, addr in ((socket.AF_INET, ("127.0.0.1", {port})),):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(addr)
            s.sendall(b"hello from a candidate")
            s.close()
        except OSError:
            pass


escape()
