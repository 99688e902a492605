"""_weir_airflow.email_alerts: a task's `email`, `email_on_failure` and `email_on_retry`
(Airflow's BaseOperator arguments, often in `default_args`) as weir's task notifications
(docs/notifications.md): with addresses in `email`, a try that fails for good mails them
(`on_failure`) unless `email_on_failure=False`, and a try that fails and is retried mails
them (`on_retry`) unless `email_on_retry=False`; both default to True, as Airflow's
`[email] default_email_on_failure` and `default_email_on_retry` do. The mail goes over the
`smtp_default` connection (Airflow's `[email] email_conn_id`)."""

import re
from typing import Any, Dict, List

SMTP_CONN = "smtp_default"


def addresses(value: Any) -> List[str]:
    """The addresses of `email`: a list, or a string of them split at ',' and ';' (Airflow's
    get_email_address_list)."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    out: List[str] = []
    for item in items:
        out.extend(a.strip() for a in re.split(r"[,;]", str(item)) if a.strip())
    return out


def apply(task: Any, t: Dict[str, Any]) -> None:
    """The task's document `t` with the email notifications its arguments ask for."""
    other = getattr(task, "other", {})
    to = addresses(other.get("email"))
    if not to:
        return
    mail = {"email": {"conn": SMTP_CONN, "to": to}}
    for flag, key in (("email_on_failure", "on_failure"), ("email_on_retry", "on_retry")):
        if other.get(flag, True):
            t[key] = [mail]
