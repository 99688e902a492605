"""airflow.operators.email: EmailOperator, an HTML message sent from the task over an SMTP
connection (airflow.utils.email.send_email; docs/airflow.md says why a connection)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from airflow.models.baseoperator import BaseOperator
from airflow.utils.email import send_email


class EmailOperator(BaseOperator):
    """Sends an email."""

    template_fields: Sequence[str] = ("to", "subject", "html_content", "files")
    template_fields_renderers = {"html_content": "html"}
    template_ext: Sequence[str] = (".html",)

    def __init__(self, *, to: Union[List[str], str], subject: str, html_content: str,
                 files: Optional[List[str]] = None, cc: Union[List[str], str, None] = None,
                 bcc: Union[List[str], str, None] = None, mime_subtype: str = "mixed",
                 mime_charset: str = "utf-8", conn_id: Optional[str] = None,
                 custom_headers: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.to = to
        self.subject = subject
        self.html_content = html_content
        self.files = files or []
        self.cc = cc
        self.bcc = bcc
        self.mime_subtype = mime_subtype
        self.mime_charset = mime_charset
        self.conn_id = conn_id or "smtp_default"
        self.custom_headers = custom_headers

    def execute(self, context: Dict[str, Any]) -> None:
        """Sends the message."""
        send_email(self.to, self.subject, self.html_content, files=self.files, cc=self.cc,
                   bcc=self.bcc, mime_subtype=self.mime_subtype,
                   mime_charset=self.mime_charset, conn_id=self.conn_id,
                   custom_headers=self.custom_headers)
