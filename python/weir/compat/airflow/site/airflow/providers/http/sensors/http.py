"""airflow.providers.http.sensors.http: HttpSensor, weir's `sensor: http` (a GET poked by
weir on its own connection, no Python process in reschedule mode)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence

from airflow.exceptions import AirflowException
from airflow.sensors.base import BaseSensorOperator


class HttpSensor(BaseSensorOperator):
    """Waits until a GET of `endpoint` on `http_conn_id` answers 200."""

    template_fields: Sequence[str] = ("endpoint", "request_params", "headers")

    def __init__(self, *, endpoint: str, http_conn_id: str = "http_default",
                 method: str = "GET", request_params: Optional[Dict[str, Any]] = None,
                 request_kwargs: Optional[Dict[str, Any]] = None,
                 headers: Optional[Dict[str, Any]] = None,
                 response_error_codes_allowlist: Optional[Any] = None,
                 response_check: Optional[Callable[..., bool]] = None,
                 extra_options: Optional[Dict[str, Any]] = None,
                 tcp_keep_alive: bool = True, tcp_keep_alive_idle: int = 120,
                 tcp_keep_alive_count: int = 20, tcp_keep_alive_interval: int = 30,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.endpoint = endpoint
        self.http_conn_id = http_conn_id
        self.method = method
        self.request_params = request_params or {}
        self.request_kwargs = request_kwargs or {}
        self.headers = headers or {}
        self.response_error_codes_allowlist = response_error_codes_allowlist
        self.response_check = response_check
        self.extra_options = extra_options or {}

    def poke(self, context: Dict[str, Any]) -> bool:
        """weir pokes this sensor itself (_weir_airflow.sensors); never in Python."""
        raise AirflowException("HttpSensor is poked by weir, not in Python")


__all__ = ["HttpSensor"]
