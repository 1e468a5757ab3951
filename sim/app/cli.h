/* cli.h - what every dcsim command shares: printing an error record, usage
 * errors, and "--name VALUE" / "--name=VALUE" options. Exit statuses:
 * 0 ok, 1 internal error or out of memory, 2 bad input, 130 interrupted. */
#ifndef DCSIM_APP_CLI_H
#define DCSIM_APP_CLI_H

#include "error.h"

#define CLI_EXIT_INPUT 2
#define CLI_EXIT_INTERRUPTED 130

/* Print err as one compiler-style line on stderr; return the exit status. */
int cli_print_error(const sim_error *err);

/* "dcsim COMMAND: error: MESSAGE (see: dcsim help COMMAND)", one line; returns 2.
 * fmt has exactly one %s, filled with arg. */
int cli_usage_error(const char *command, const char *fmt, const char *arg);

/* arg is "--name" or "--name=..." */
int cli_is_option(const char *arg, const char *name);

/* The value of "--name VALUE" or "--name=VALUE" (advancing *i past VALUE),
 * or NULL when it is missing. */
const char *cli_option_value(int argc, char **argv, int *i, const char *name);

/* The most OpenMP threads any dcsim command uses (as calibrate --threads).
 * More threads than this only time-slice, and libgomp crashes when it
 * cannot create the ~100,000 threads OMP_NUM_THREADS may ask for. */
#define CLI_MAX_THREADS 1024

/* Lower OpenMP's thread count to CLI_MAX_THREADS when OMP_NUM_THREADS (or
 * the default) asks for more; call once at start-up. Results do not depend
 * on the thread count, so capping changes nothing but the speed. */
void cli_cap_threads(void);

#endif
