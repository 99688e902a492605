"""airflow.providers.http.operators.http: HttpOperator (and its old name SimpleHttpOperator):
a request on `http_conn_id` through HttpHook; the answer's text (or what response_filter
makes of it) is the task's XCom."""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Optional, Sequence

from airflow.exceptions import AirflowException
from airflow.models.baseoperator import BaseOperator
from airflow.operators.python import determine_kwargs
from airflow.providers.http.hooks.http import HttpHook


class HttpOperator(BaseOperator):
    """Calls an endpoint of an HTTP connection."""

    template_fields: Sequence[str] = ("endpoint", "data", "headers")
    template_fields_renderers = {"headers": "json", "data": "py"}
    template_ext: Sequence[str] = ()

    def __init__(self, *, endpoint: Optional[str] = None, method: str = "POST",
                 data: Any = None, headers: Optional[Dict[str, str]] = None,
                 response_check: Optional[Callable[..., bool]] = None,
                 response_filter: Optional[Callable[..., Any]] = None,
                 extra_options: Optional[Dict[str, Any]] = None,
                 http_conn_id: str = "http_default", log_response: bool = False,
                 auth_type: Any = None, tcp_keep_alive: bool = True,
                 **kwargs: Any) -> None:
        for key in ("pagination_function", "deferrable", "retry_args", "tcp_keep_alive_idle",
                    "tcp_keep_alive_count", "tcp_keep_alive_interval"):
            kwargs.pop(key, None)
        super().__init__(**kwargs)
        self.http_conn_id = http_conn_id
        self.method = method
        self.endpoint = endpoint
        self.headers = headers or {}
        self.data = data or {}
        self.response_check = response_check
        self.response_filter = response_filter
        self.extra_options = extra_options or {}
        self.log_response = log_response

    def execute(self, context: Dict[str, Any]) -> Any:
        """Sends the request, checks and filters the answer."""
        hook = HttpHook(self.method, http_conn_id=self.http_conn_id)
        response = hook.run(self.endpoint, self.data, self.headers, self.extra_options)
        if self.log_response:
            print(response.text, file=sys.stderr, flush=True)
        if self.response_check is not None:
            kw = determine_kwargs(self.response_check, [response], context, {})
            if not self.response_check(response, **kw):
                raise AirflowException("Response check returned False.")
        if self.response_filter is not None:
            kw = determine_kwargs(self.response_filter, [response], context, {})
            return self.response_filter(response, **kw)
        return response.text


class SimpleHttpOperator(HttpOperator):
    """The old name of HttpOperator."""
