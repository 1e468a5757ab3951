/* cli.c - shared command-line helpers (see cli.h). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int cli_print_error(const sim_error *err)
{
    char line[2048];
    fprintf(stderr, "%s\n", sim_error_format(err, line, sizeof line));
    switch (err->code) {
    case SIM_ERR_INPUT:
    case SIM_ERR_IO:
        return CLI_EXIT_INPUT;
    case SIM_ERR_INTERRUPTED:
        return CLI_EXIT_INTERRUPTED;
    default:
        return EXIT_FAILURE;
    }
}

int cli_usage_error(const char *command, const char *fmt, const char *arg)
{
    fprintf(stderr, "dcsim %s: error: ", command);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see: dcsim help %s)\n", command); /* one line, like every error */
    return CLI_EXIT_INPUT;
}

int cli_is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

const char *cli_option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (*i + 1 < argc)
        return argv[++*i];
    return NULL;
}

void cli_cap_threads(void)
{
#ifdef _OPENMP
    if (omp_get_max_threads() > CLI_MAX_THREADS)
        omp_set_num_threads(CLI_MAX_THREADS);
#endif
}
