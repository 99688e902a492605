"""airflow.providers.cncf.kubernetes.decorators.kubernetes: refused on import, with why
(_weir_airflow.refused)."""

from _weir_airflow.refused import no_containers

raise no_containers("@task.kubernetes (airflow.providers.cncf.kubernetes.decorators.kubernetes)")
