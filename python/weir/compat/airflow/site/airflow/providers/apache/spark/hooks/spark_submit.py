"""airflow.providers.apache.spark.hooks.spark_submit: SparkSubmitHook, the `spark-submit`
command line as Airflow's hook builds it from the connection (`spark_default`: the master
from its host and port, `queue`, `deploy-mode`, `spark-binary` and `namespace` from its
extra) and the arguments, run with its output streamed to the task's log."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Dict, List, Optional

from airflow.exceptions import AirflowException
from airflow.hooks.base import BaseHook

ALLOWED_SPARK_BINARIES = ("spark-submit", "spark2-submit", "spark3-submit")


class SparkSubmitHook(BaseHook):
    """Builds and runs a spark-submit command."""

    conn_name_attr = "conn_id"
    default_conn_name = "spark_default"
    conn_type = "spark"
    hook_name = "Spark"

    def __init__(self, conf: Optional[Dict[str, Any]] = None, conn_id: str = "spark_default",
                 files: Optional[str] = None, py_files: Optional[str] = None,
                 archives: Optional[str] = None, driver_class_path: Optional[str] = None,
                 jars: Optional[str] = None, java_class: Optional[str] = None,
                 packages: Optional[str] = None, exclude_packages: Optional[str] = None,
                 repositories: Optional[str] = None, total_executor_cores: Optional[int] = None,
                 executor_cores: Optional[int] = None, executor_memory: Optional[str] = None,
                 driver_memory: Optional[str] = None, keytab: Optional[str] = None,
                 principal: Optional[str] = None, proxy_user: Optional[str] = None,
                 name: str = "default-name", num_executors: Optional[int] = None,
                 status_poll_interval: int = 1, application_args: Optional[List[Any]] = None,
                 env_vars: Optional[Dict[str, Any]] = None, verbose: bool = False,
                 spark_binary: Optional[str] = None, properties_file: Optional[str] = None,
                 use_krb5ccache: bool = False, **kwargs: Any) -> None:
        super().__init__()
        self._conf = conf or {}
        self._conn_id = conn_id
        self._files = files
        self._py_files = py_files
        self._archives = archives
        self._driver_class_path = driver_class_path
        self._jars = jars
        self._java_class = java_class
        self._packages = packages
        self._exclude_packages = exclude_packages
        self._repositories = repositories
        self._total_executor_cores = total_executor_cores
        self._executor_cores = executor_cores
        self._executor_memory = executor_memory
        self._driver_memory = driver_memory
        self._keytab = keytab
        self._principal = principal
        self._proxy_user = proxy_user
        self._name = name
        self._num_executors = num_executors
        self._application_args = application_args
        self._env_vars = env_vars
        self._verbose = verbose
        self._properties_file = properties_file
        self._use_krb5ccache = use_krb5ccache
        self.spark_binary = spark_binary
        self._env: Optional[Dict[str, Any]] = None
        self._connection = self._resolve_connection()
        master = self._connection["master"]
        self._is_yarn = "yarn" in master
        self._is_kubernetes = "k8s" in master

    def _resolve_connection(self) -> Dict[str, Any]:
        """The master, queue, deploy mode, binary and namespace: the connection's where it
        is there, else Airflow's defaults (master yarn)."""
        data: Dict[str, Any] = {"master": "yarn", "queue": None, "deploy_mode": None,
                                "spark_binary": self.spark_binary or "spark-submit",
                                "namespace": None}
        try:
            conn = self.get_connection(self._conn_id)
        except AirflowException:
            print("Could not load connection string %s, defaulting to %s"
                  % (self._conn_id, data["master"]), file=sys.stderr)
            return data
        data["master"] = "%s:%s" % (conn.host, conn.port) if conn.port else conn.host
        extra = conn.extra_dejson
        data["queue"] = extra.get("queue")
        data["deploy_mode"] = extra.get("deploy-mode")
        if not self.spark_binary:
            self.spark_binary = extra.get("spark-binary", "spark-submit")
        data["spark_binary"] = self.spark_binary
        data["namespace"] = extra.get("namespace")
        if data["spark_binary"] not in ALLOWED_SPARK_BINARIES:
            raise RuntimeError("The spark-binary extra can be one of %s and it was `%s`"
                               % (list(ALLOWED_SPARK_BINARIES), data["spark_binary"]))
        return data

    def get_conn(self) -> Any:
        """Nothing to open."""
        return None

    def _build_spark_submit_command(self, application: str) -> List[str]:
        """The argv, in Airflow's order."""
        c = self._connection
        cmd: List[str] = [c["spark_binary"], "--master", c["master"]]
        for key in self._conf:
            cmd += ["--conf", "%s=%s" % (key, self._conf[key])]
        if self._env_vars and (self._is_kubernetes or self._is_yarn):
            tmpl = ("spark.yarn.appMasterEnv.%s=%s" if self._is_yarn
                    else "spark.kubernetes.driverEnv.%s=%s")
            for key in self._env_vars:
                cmd += ["--conf", tmpl % (key, self._env_vars[key])]
        elif self._env_vars and c["deploy_mode"] != "cluster":
            self._env = self._env_vars
        elif self._env_vars and c["deploy_mode"] == "cluster":
            raise AirflowException("SparkSubmitHook env_vars is not supported in "
                                   "standalone-cluster mode.")
        if self._is_kubernetes and c["namespace"]:
            cmd += ["--conf", "spark.kubernetes.namespace=%s" % c["namespace"]]
        for flag, value in (("--properties-file", self._properties_file),
                            ("--files", self._files), ("--py-files", self._py_files),
                            ("--archives", self._archives),
                            ("--driver-class-path", self._driver_class_path),
                            ("--jars", self._jars), ("--packages", self._packages),
                            ("--exclude-packages", self._exclude_packages),
                            ("--repositories", self._repositories),
                            ("--num-executors", self._num_executors),
                            ("--total-executor-cores", self._total_executor_cores),
                            ("--executor-cores", self._executor_cores),
                            ("--executor-memory", self._executor_memory),
                            ("--driver-memory", self._driver_memory),
                            ("--keytab", self._keytab), ("--principal", self._principal)):
            if value:
                cmd += [flag, str(value)]
        if self._use_krb5ccache:
            if not os.getenv("KRB5CCNAME"):
                raise AirflowException("KRB5CCNAME environment variable required to use "
                                       "ticket ccache is missing.")
            cmd += ["--conf", "spark.kerberos.renewal.credentials=ccache"]
        if self._proxy_user:
            cmd += ["--proxy-user", self._proxy_user]
        if self._name:
            cmd += ["--name", self._name]
        if self._java_class:
            cmd += ["--class", self._java_class]
        if self._verbose:
            cmd += ["--verbose"]
        if c["queue"]:
            cmd += ["--queue", c["queue"]]
        if c["deploy_mode"]:
            cmd += ["--deploy-mode", c["deploy_mode"]]
        cmd += [application]
        if self._application_args:
            cmd += [str(a) for a in self._application_args]
        return cmd

    def submit(self, application: str = "", **kwargs: Any) -> None:
        """Runs spark-submit (no shell), its output line by line into the task's log; a
        non-zero exit raises AirflowException."""
        argv = self._build_spark_submit_command(application)
        env = dict(os.environ)
        if self._env:
            env.update({str(k): str(v) for k, v in self._env.items()})
        print("Spark-Submit cmd: %s" % " ".join(argv), file=sys.stderr, flush=True)
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=env, bufsize=-1)
        assert proc.stdout is not None
        for line in proc.stdout:
            os.write(1, line)
        rc = proc.wait()
        if rc:
            raise AirflowException("Cannot execute: %s. Error code is: %d."
                                   % (" ".join(argv), rc))

    def on_kill(self) -> None:
        """Nothing: the task's process group ends with the task."""
