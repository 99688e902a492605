"""airflow.sensors.sql_sensor: the old path of SqlSensor."""

from airflow.providers.common.sql.sensors.sql import SqlSensor

__all__ = ["SqlSensor"]
