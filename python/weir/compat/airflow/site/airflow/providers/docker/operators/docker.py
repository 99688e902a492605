"""airflow.providers.docker.operators.docker: refused on import, with why
(_weir_airflow.refused)."""

from _weir_airflow.refused import no_containers

raise no_containers("DockerOperator (airflow.providers.docker.operators.docker)")
