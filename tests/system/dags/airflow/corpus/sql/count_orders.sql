select count(*) from orders where day = '{{ ds }}'
