"""A real SMTP server for the notification tests: Debian's aiosmtpd, with AUTH (PLAIN and LOGIN)
for one user, over plain TCP (AUTH without TLS allowed) or TLS.

    python3 smtp_sink.py PORT USER PASSWORD OUT.jsonl [LOGIN] [STARTTLS=CERT,KEY | SSL=CERT,KEY]

(LOGIN: AUTH LOGIN offered alone, no PLAIN.  STARTTLS: STARTTLS offered and required before
any other command, AUTH only after it.  SSL: TLS from the first byte, as on port 465.)

Writes every message it accepts as one JSON line (envelope, login used, the message text) to
OUT.jsonl and prints "ready" once it listens.  Stopped by the test with SIGTERM on its pid.
"""

import json
import signal
import ssl
import sys
import threading
import warnings

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


def main():
    # AUTH over plain TCP is one of the cases tested: aiosmtpd's warning says so
    warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
    port, user, password, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    lock = threading.Lock()

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (auth_data.login.decode() == user and auth_data.password.decode() == password)
        return AuthResult(success=ok, handled=False, auth_data=auth_data)

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            rec = {"from": envelope.mail_from, "to": list(envelope.rcpt_tos),
                   "login": session.auth_data.login.decode() if session.auth_data else None,
                   "authenticated": bool(session.authenticated),
                   "tls": server.transport.get_extra_info("ssl_object") is not None,
                   "data": envelope.content.decode("utf-8", "replace")}
            with lock, open(out, "a") as f:
                f.write(json.dumps(rec) + "\n")
            return "250 OK"

    flags = dict(a.split("=", 1) if "=" in a else (a, "") for a in sys.argv[5:])
    kw = {}
    for mode in ("STARTTLS", "SSL"):
        if mode in flags:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(*flags[mode].split(","))
            if mode == "STARTTLS":
                kw.update(tls_context=ctx, require_starttls=True, auth_require_tls=True)
            else:
                kw.update(ssl_context=ctx)
    if "STARTTLS" not in flags:
        kw.setdefault("auth_require_tls", False)
    ctl = Controller(Handler(), hostname="127.0.0.1", port=port, authenticator=authenticator,
                     auth_required=True,
                     auth_exclude_mechanism=["PLAIN"] if "LOGIN" in flags else None, **kw)
    ctl.start()
    print("ready", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    done.wait()
    ctl.stop()


if __name__ == "__main__":
    main()
