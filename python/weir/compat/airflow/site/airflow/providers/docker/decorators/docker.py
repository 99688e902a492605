"""airflow.providers.docker.decorators.docker: refused on import, with why
(_weir_airflow.refused)."""

from _weir_airflow.refused import no_containers

raise no_containers("@task.docker (airflow.providers.docker.decorators.docker)")
