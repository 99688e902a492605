"""airflow.providers.apache.spark.operators.spark_submit: SparkSubmitOperator, runs
`spark-submit` through SparkSubmitHook."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from airflow.models.baseoperator import BaseOperator
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

_HOOK_ARGS = ("conf", "files", "py_files", "archives", "driver_class_path", "jars",
              "java_class", "packages", "exclude_packages", "repositories",
              "total_executor_cores", "executor_cores", "executor_memory", "driver_memory",
              "keytab", "principal", "proxy_user", "name", "num_executors",
              "status_poll_interval", "application_args", "env_vars", "verbose",
              "spark_binary", "properties_file", "use_krb5ccache")


class SparkSubmitOperator(BaseOperator):
    """Submits a Spark application with spark-submit on `conn_id` (default spark_default)."""

    template_fields: Sequence[str] = ("application", "conf", "files", "py_files", "jars",
                                      "driver_class_path", "packages", "exclude_packages",
                                      "keytab", "principal", "proxy_user", "name",
                                      "application_args", "env_vars", "properties_file")

    def __init__(self, *, application: str = "", conn_id: str = "spark_default",
                 conf: Optional[Dict[str, Any]] = None, files: Optional[str] = None,
                 py_files: Optional[str] = None, archives: Optional[str] = None,
                 driver_class_path: Optional[str] = None, jars: Optional[str] = None,
                 java_class: Optional[str] = None, packages: Optional[str] = None,
                 exclude_packages: Optional[str] = None, repositories: Optional[str] = None,
                 total_executor_cores: Optional[int] = None,
                 executor_cores: Optional[int] = None, executor_memory: Optional[str] = None,
                 driver_memory: Optional[str] = None, keytab: Optional[str] = None,
                 principal: Optional[str] = None, proxy_user: Optional[str] = None,
                 name: str = "arrow-spark", num_executors: Optional[int] = None,
                 status_poll_interval: int = 1, application_args: Optional[List[Any]] = None,
                 env_vars: Optional[Dict[str, Any]] = None, verbose: bool = False,
                 spark_binary: Optional[str] = None, properties_file: Optional[str] = None,
                 use_krb5ccache: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.application = application
        self.conn_id = conn_id
        self.conf = conf
        self.files = files
        self.py_files = py_files
        self.archives = archives
        self.driver_class_path = driver_class_path
        self.jars = jars
        self.java_class = java_class
        self.packages = packages
        self.exclude_packages = exclude_packages
        self.repositories = repositories
        self.total_executor_cores = total_executor_cores
        self.executor_cores = executor_cores
        self.executor_memory = executor_memory
        self.driver_memory = driver_memory
        self.keytab = keytab
        self.principal = principal
        self.proxy_user = proxy_user
        self.name = name
        self.num_executors = num_executors
        self.status_poll_interval = status_poll_interval
        self.application_args = application_args
        self.env_vars = env_vars
        self.verbose = verbose
        self.spark_binary = spark_binary
        self.properties_file = properties_file
        self.use_krb5ccache = use_krb5ccache
        self._hook: Optional[SparkSubmitHook] = None

    def _get_hook(self) -> SparkSubmitHook:
        args = {k: getattr(self, k) for k in _HOOK_ARGS}
        return SparkSubmitHook(conn_id=self.conn_id, **args)

    def execute(self, context: Dict[str, Any]) -> None:
        """Runs spark-submit."""
        if self._hook is None:
            self._hook = self._get_hook()
        self._hook.submit(self.application)

    def on_kill(self) -> None:
        """Nothing: the task's process group ends with the task."""
