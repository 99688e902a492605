/* sensor_task.h: `weir task-sensor`, what a sensor's job runs in mode
 * poke: its spec from WEIR_DATA_SPEC, its connection from WEIR_CONN_<ID>,
 * exit statuses as data/sensor_poke.h says. */
#ifndef WEIR_SERVER_SENSOR_TASK_H
#define WEIR_SERVER_SENSOR_TASK_H

/* The subcommand's main (argv[0] is the subcommand). */
int sensor_task_main(int argc, char **argv);

#endif
