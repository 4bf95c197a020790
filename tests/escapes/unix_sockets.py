"""ESCAPE: reaches local services through unix sockets: one by its path (under /tmp, where
such sockets live) and one in the abstract namespace."""
import socket


def escape():
    for address in ("{path}", "\0{abstract}"):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(address)
            s.sendall(b"hello from a candidate")
            s.close()
        except OSError:
            pass


escape()
