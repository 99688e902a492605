"""airflow.utils.email: send_email, a message sent with the standard library's smtplib on
an `smtp` connection of the task (default `smtp_default`): its host and port, login and
password, and its extra's `from_email`, `disable_tls` (true: no STARTTLS, which is used
whenever the server offers it), `ssl` (true: TLS from the first byte, as port 465 has it),
`timeout`."""

from __future__ import annotations

import os
import smtplib
import ssl
import sys
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import formatdate
from typing import Any, Dict, Iterable, List, Optional, Union

from airflow.hooks.base import BaseHook

AddressList = Union[str, Iterable[str], None]


def get_email_address_list(addresses: AddressList) -> List[str]:
    """Addresses given as a list or as text split at ',' or ';'."""
    if addresses is None:
        return []
    if isinstance(addresses, str):
        return [a.strip() for a in addresses.replace(";", ",").split(",") if a.strip()]
    return [str(a) for a in addresses]


def build_mime_message(mail_from: str, to: AddressList, subject: str, html_content: str,
                       files: Optional[List[str]] = None, cc: AddressList = None,
                       mime_subtype: str = "mixed", mime_charset: str = "utf-8",
                       custom_headers: Optional[Dict[str, Any]] = None) -> Any:
    """The message and its recipients (to, cc; bcc are added by the caller)."""
    msg = MIMEMultipart(mime_subtype)
    msg["Subject"] = subject
    msg["From"] = mail_from
    to_list = get_email_address_list(to)
    msg["To"] = ", ".join(to_list)
    recipients = list(to_list)
    cc_list = get_email_address_list(cc)
    if cc_list:
        msg["CC"] = ", ".join(cc_list)
        recipients += cc_list
    msg["Date"] = formatdate(localtime=True)
    msg.attach(MIMEText(html_content, "html", mime_charset))
    for path in files or []:
        with open(path, "rb") as f:
            part = MIMEApplication(f.read(), Name=os.path.basename(path))
        part["Content-Disposition"] = 'attachment; filename="%s"' % os.path.basename(path)
        msg.attach(part)
    for k, v in (custom_headers or {}).items():
        msg[k] = v
    return msg, recipients


def send_email(to: AddressList, subject: str, html_content: str,
               files: Optional[List[str]] = None, dryrun: bool = False, cc: AddressList = None,
               bcc: AddressList = None, mime_subtype: str = "mixed",
               mime_charset: str = "utf-8", conn_id: Optional[str] = None,
               custom_headers: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
    """Sends an HTML message (with files attached) over the SMTP connection."""
    conn = BaseHook.get_connection(conn_id or "smtp_default")
    extra = conn.extra_dejson
    mail_from = str(extra.get("from_email") or kwargs.get("from_email") or
                    (conn.login if conn.login and "@" in conn.login else "airflow@example.com"))
    msg, recipients = build_mime_message(mail_from, to, subject, html_content, files, cc,
                                         mime_subtype, mime_charset, custom_headers)
    recipients += get_email_address_list(bcc)
    if dryrun:
        return
    host, port = conn.host or "localhost", conn.port
    timeout = int(extra.get("timeout", 30))
    ctx = ssl.create_default_context()
    use_ssl = _true(extra.get("ssl")) or port == 465
    if use_ssl:
        smtp: smtplib.SMTP = smtplib.SMTP_SSL(host, port or 465, timeout=timeout, context=ctx)
    else:
        smtp = smtplib.SMTP(host, port or 25, timeout=timeout)
    try:
        smtp.ehlo()
        if not use_ssl and not _true(extra.get("disable_tls")) and smtp.has_extn("starttls"):
            smtp.starttls(context=ctx)
            smtp.ehlo()
        if conn.login:
            smtp.login(conn.login, conn.password or "")
        print("Sent an email to %s" % recipients, file=sys.stderr, flush=True)
        smtp.sendmail(mail_from, recipients, msg.as_string())
    finally:
        smtp.quit()


def _true(value: Any) -> bool:
    """An extra's flag: true, or "true", "1", "yes"."""
    return value is True or str(value).lower() in ("true", "1", "yes")
