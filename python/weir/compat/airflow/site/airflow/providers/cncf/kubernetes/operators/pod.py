"""airflow.providers.cncf.kubernetes.operators.pod: refused on import, with why
(_weir_airflow.refused)."""

from _weir_airflow.refused import no_containers

raise no_containers("KubernetesPodOperator (airflow.providers.cncf.kubernetes.operators.pod)")
