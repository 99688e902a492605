"""airflow.sensors.base: BaseSensorOperator and PokeReturnValue.

A sensor whose meaning weir's core has (a file, another DAG's task, an HTTP answer, a SQL
value) becomes a `sensor:` task (_weir_airflow.sensors), poked by weir itself; any other (a
PythonSensor, a BashSensor, `@task.sensor`, a subclass with its own `poke()`) pokes in the
task's process.  In mode poke, execute() below pokes, sleeps `poke_interval` (doubling with
`exponential_backoff`, up to `max_wait`) and ends as Airflow's does: met, the last
PokeReturnValue's xcom_value is the return value; past `timeout`, AirflowSensorTimeout, or
AirflowSkipException with `soft_fail`.  In reschedule mode (and deferrable) the process pokes
once (poke_once()) and exits 97 when not met; weir's server counts the pokes, the timeout
and the backoff and starts the task's process again when the next poke is due, holding
nothing in between (a command task with `sensor:` options, docs/dags.md).
"""

from __future__ import annotations

import datetime as _dt
import time
from typing import Any, Dict, Optional, Tuple, Union

from airflow.exceptions import (AirflowException, AirflowFailException,
                                AirflowSensorTimeout, AirflowSkipException)
from airflow.models.baseoperator import BaseOperator

_MODES = ("poke", "reschedule")


class PokeReturnValue:
    """What a poke may return: whether the wait is over, and a value to push as XCom."""

    def __init__(self, is_done: bool, xcom_value: Optional[Any] = None) -> None:
        self.xcom_value = xcom_value
        self.is_done = is_done

    def __bool__(self) -> bool:
        return bool(self.is_done)

    def __repr__(self) -> str:
        return "PokeReturnValue(is_done=%r, xcom_value=%r)" % (self.is_done, self.xcom_value)


def _seconds(value: Any, what: str) -> float:
    if isinstance(value, _dt.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AirflowException("%s: expected a number of seconds or a timedelta, got %r"
                               % (what, value))
    if value < 0:
        raise AirflowException("%s: expected a number >= 0, got %r" % (what, value))
    return float(value)


class BaseSensorOperator(BaseOperator):
    """A task that waits: `poke(context)` says whether it is done."""

    ui_color = "#e6f1f2"

    def __init__(
        self,
        *,
        poke_interval: Union[float, _dt.timedelta] = 60,
        timeout: Union[float, _dt.timedelta] = 60 * 60 * 24 * 7,
        soft_fail: bool = False,
        mode: str = "poke",
        exponential_backoff: bool = False,
        max_wait: Optional[Union[float, _dt.timedelta]] = None,
        silent_fail: bool = False,
        **kwargs: Any,
    ) -> None:
        deferrable = bool(kwargs.pop("deferrable", False))
        super().__init__(**kwargs)
        self.poke_interval = _seconds(poke_interval, "task %s: poke_interval" % self.task_id)
        self.timeout = _seconds(timeout, "task %s: timeout" % self.task_id)
        self.soft_fail = bool(soft_fail)
        if mode not in _MODES:
            raise AirflowException("task %s: mode %r: expected 'poke' or 'reschedule'"
                                   % (self.task_id, mode))
        self.mode = mode
        self.exponential_backoff = bool(exponential_backoff)
        self.max_wait = (None if max_wait is None else
                         _seconds(max_wait, "task %s: max_wait" % self.task_id))
        self.silent_fail = bool(silent_fail)
        # deferrable=True waits without a worker slot in Airflow: weir's reschedule mode
        self.deferrable = deferrable
        if deferrable:
            self.mode = "reschedule"

    @property
    def reschedule(self) -> bool:
        """Whether the sensor waits in reschedule mode (deferrable sensors too)."""
        return self.mode == "reschedule"

    def poke(self, context: Dict[str, Any]) -> Union[bool, PokeReturnValue]:
        """Whether the wait is over; a subclass says."""
        raise AirflowException("%s has no poke()" % type(self).__name__)

    def next_wait(self, pokes: int) -> float:
        """The wait after the `pokes`-th poke: poke_interval, doubled after each poke with
        exponential_backoff, never above max_wait (the timeout without it).  The same rule
        as the sensors weir pokes (src/sched/sensor.c)."""
        wait = self.poke_interval if self.poke_interval > 0 else 0.001
        cap = self.max_wait if self.max_wait else self.timeout
        if self.exponential_backoff:
            for _ in range(1, pokes):
                if wait >= cap:
                    break
                wait *= 2
        return min(wait, cap) if cap > 0 else wait

    def poke_once(self, context: Dict[str, Any], pokes: int = 1) -> Tuple[bool, Any]:
        """One poke: whether it is met, and the value to push then.  soft_fail makes an
        exception of the poke a skip; silent_fail makes one that is not Airflow's a "not
        yet"."""
        try:
            got = self.poke(context)
        except (AirflowSensorTimeout, AirflowFailException, AirflowSkipException):
            raise
        except Exception as exc:
            if self.soft_fail:
                raise AirflowSkipException("soft_fail: the poke raised %r" % exc) from exc
            if self.silent_fail and not isinstance(exc, AirflowException):
                print("weir: poke %d raised %r; silent_fail: poking on" % (pokes, exc),
                      flush=True)
                return False, None
            raise
        value = got.xcom_value if isinstance(got, PokeReturnValue) else None
        return bool(got), value

    def execute(self, context: Dict[str, Any]) -> Any:
        """Pokes until met or timed out: mode poke, in the task's process.  In reschedule
        mode weir's runner calls poke_once() instead, and the server pokes again."""
        started = time.monotonic()
        pokes = 0
        while True:
            pokes += 1
            done, value = self.poke_once(context, pokes)
            if done:
                print("weir: poke %d: met" % pokes, flush=True)
                return value
            elapsed = time.monotonic() - started
            if elapsed >= self.timeout:
                text = "Sensor has timed out; run duration of %s seconds is more than the " \
                       "specified timeout of %s." % (round(elapsed, 1), self.timeout)
                if self.soft_fail:
                    raise AirflowSkipException("soft_fail: " + text)
                raise AirflowSensorTimeout(text)
            wait = min(self.next_wait(pokes), max(self.timeout - elapsed, 0.0))
            print("weir: poke %d: not yet; next in %gs" % (pokes, wait), flush=True)
            time.sleep(wait)


BaseSensor = BaseSensorOperator  # the name some old DAG files import

__all__ = ["BaseSensorOperator", "PokeReturnValue"]
