echo "report for {{ ds }} of {{ dag.dag_id }} in $(basename "$PWD")"
