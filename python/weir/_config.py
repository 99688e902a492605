"""Where the server, its token and the object folder are: as the `weir` CLI finds them.

server:  the argument, else $WEIR_SERVER, else http://127.0.0.1:8270 (a bare HOST:PORT
         means http://HOST:PORT); an https:// server's certificate is verified against the
         system's CAs and the file $WEIR_CA_FILE (tls_context)
home:    the argument, else $WEIR_HOME, else ~/.weir (the server's home)
token:   the argument, else $WEIR_TOKEN, else the file HOME/token
objects: the argument, else $WEIR_OBJECTS, else HOME/objects: where arguments, results and
         `weir.put` objects are written; every task must read it (on Slurm: the shared home,
         or a shared folder)
"""

import os
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

DEFAULT_SERVER = "http://127.0.0.1:8270"


@dataclass(frozen=True)
class Settings:
    server: str
    home: Path
    token: Optional[str]
    objects_dir: Path
    token_source: str


def _url(server: str) -> str:
    server = server.rstrip("/")
    return server if "://" in server else "http://" + server


def settings(server: Optional[str] = None, token: Optional[str] = None,
             home: Optional[str] = None, objects_dir: Optional[str] = None) -> Settings:
    """The settings for a client, each from its argument, the environment or the default."""
    srv = _url(server or os.environ.get("WEIR_SERVER") or DEFAULT_SERVER)
    h = Path(home or os.environ.get("WEIR_HOME") or Path.home() / ".weir")
    source = "the token argument"
    if not token:
        token = os.environ.get("WEIR_TOKEN") or None
        source = "$WEIR_TOKEN"
    if not token:
        source = str(h / "token")
        try:
            token = (h / "token").read_text().strip() or None
        except OSError:
            token = None
    objs = Path(objects_dir or os.environ.get("WEIR_OBJECTS") or h / "objects")
    return Settings(srv, h, token, objs.absolute(), source)


def tls_context() -> ssl.SSLContext:
    """The TLS settings for an https:// server, as the CLI's: its certificate verified, with
    its host name, against the system's CAs and the certificates of $WEIR_CA_FILE.  A
    certificate in that file is trusted as it is, a CA's or the server's own: the server
    gives its own launchers and tasks its certificate file by default (docs/security.md)."""
    ctx = ssl.create_default_context()
    ca = os.environ.get("WEIR_CA_FILE")
    if ca:
        try:
            ctx.load_verify_locations(cafile=ca)
        except (OSError, ssl.SSLError) as e:
            raise ValueError("WEIR_CA_FILE %s: %s" % (ca, e)) from e
        ctx.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    return ctx
