"""airflow.providers.http.sensors.http: HttpSensor.  A plain GET is weir's `sensor: http`
(poked by weir on its own connection, no Python process in reschedule mode); with a
`response_check`, headers, another method, `extra_options`, `request_kwargs`, an allowlist
or templates weir's sensor does not render, it pokes in Python through HttpHook, as the
http provider's HttpSensor does (poke() below; _weir_airflow.sensors decides)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence

from airflow.exceptions import AirflowException, AirflowSkipException
from airflow.sensors.base import BaseSensorOperator


class HttpSensor(BaseSensorOperator):
    """Waits until a request of `endpoint` on `http_conn_id` answers below 400 (and
    `response_check` of the answer is true); an answer whose "CODE:reason" starts with one
    of `response_error_codes_allowlist` (404) is "not yet", any other error fails."""

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
        self.weir_allowlist_given = response_error_codes_allowlist is not None
        self.response_error_codes_allowlist = (
            ("404",) if response_error_codes_allowlist is None else
            tuple(str(c) for c in response_error_codes_allowlist))
        self.response_check = response_check
        self.extra_options = extra_options or {}

    def poke(self, context: Dict[str, Any]) -> Any:
        """One request: the answer checked as Airflow's HttpSensor does."""
        from airflow.operators.python import determine_kwargs
        from airflow.providers.http.hooks.http import HttpHook

        hook = HttpHook(method=self.method, http_conn_id=self.http_conn_id)
        print("Poking: %s" % self.endpoint, flush=True)
        try:
            response = hook.run(self.endpoint, data=self.request_params, headers=self.headers,
                                extra_options=self.extra_options, **self.request_kwargs)
            if self.response_check:
                kwargs = determine_kwargs(self.response_check, [response], context, {})
                return self.response_check(response, **kwargs)
        except AirflowException as exc:
            if str(exc).startswith(self.response_error_codes_allowlist):
                return False
            if self.soft_fail:
                raise AirflowSkipException(str(exc)) from exc
            raise
        return True


__all__ = ["HttpSensor"]
