# a template file, read from the DAG's template_searchpath
echo "script {{ ds_nodash }} {{ params.x }}"
