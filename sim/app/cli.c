/* cli.c - shared command-line helpers (see cli.h). The option parser runs
 * getopt_long in its in-order mode ("-" first in the short options: every
 * positional argument is returned where it stands, so the first problem in
 * argv order wins, as the commands' own loops did) with its messages off
 * (opterr = 0, ":" for a missing value); it then checks the argument as
 * written, which getopt_long is more lenient about (abbreviations, "-qo",
 * "-oFILE"). */
#include "cli.h"

#include <getopt.h>
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

/* ---------------------------------------------------------------- options */

/* The most options of one command. */
#define CLI_MAX_OPTIONS 32
/* getopt_long's val for option i: above every short option character */
#define LONG_VAL 0x100

static int refuse(const cli_command *cmd, const char *fmt, const char *arg)
{
    return cmd->quiet ? CLI_EXIT_INPUT : cli_usage_error(cmd->name, fmt, arg);
}

static int unknown_option(const cli_command *cmd, const char *arg)
{
    if (cmd->quiet)
        return CLI_EXIT_INPUT;
    return cli_usage_error(cmd->name, "unknown option '%s'", arg);
}

static int takes_value(const cli_option *o)
{
    return o->kind != CLI_FLAG && o->kind != CLI_DO && o->kind != CLI_HELP;
}

static int once_only(const cli_option *o)
{
    return o->kind == CLI_TEXT || o->kind == CLI_CALL;
}

/* The value of option o, written as arg ("--name", "--name=V", "-n",
 * "-n=V"; getopt's value in *value), or NULL when arg is not one of these
 * forms ("--na", "-nV", "-nq"). */
static int written_as(const cli_option *o, const char *arg, const char **value)
{
    size_t n = strlen(o->name);
    if (!strncmp(arg, o->name, n) && (arg[n] == '\0' || arg[n] == '='))
        return 1;
    if (!o->short_name || arg[0] != '-' || arg[1] != o->short_name)
        return 0;
    if (arg[2] == '=' && takes_value(o)) { /* "-o=FILE" as "--output=FILE" */
        *value = arg + 3;
        return 1;
    }
    return arg[2] == '\0';
}

/* A value or flag for option o; seen counts the earlier ones. */
static int take(const cli_command *cmd, const cli_option *o, const char *value, int seen,
                void *ctx)
{
    char *base = ctx;
    if (seen && once_only(o)) {
        if (cmd->quiet)
            return CLI_EXIT_INPUT;
        return cli_usage_error(cmd->name, "%s given twice", o->name);
    }
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)(void *)(base + o->offset) = 1;
        return 0;
    case CLI_TEXT:
        *(const char **)(void *)(base + o->offset) = value;
        return 0;
    case CLI_SETS_EQ:
        if (!strchr(value, '='))
            return refuse(cmd, o->missing, o->name);
        /* fall through */
    case CLI_SETS: {
        cli_sets *sets = (cli_sets *)(void *)(base + o->offset);
        if (sets->n == CLI_MAX_SETS) {
            if (cmd->quiet)
                return CLI_EXIT_INPUT;
            return cli_usage_error(cmd->name, "more than 256 --set options%s", "");
        }
        sets->v[sets->n++] = value;
        return 0;
    }
    case CLI_CALL:
    case CLI_CALL_EACH:
    case CLI_DO:
        return o->fn(ctx, value);
    case CLI_HELP:
        fputs(cmd->usage, stdout);
        return CLI_DONE;
    }
    return 0;
}

static int positional(const cli_command *cmd, const char *arg, const char **args,
                      size_t *n_args)
{
    if (*n_args == cmd->max_args)
        return refuse(cmd, cmd->too_many, arg);
    args[(*n_args)++] = arg;
    return 0;
}

/* getopt_long's tables for cmd: longs (n + 1 entries) and shorts. */
static size_t getopt_tables(const cli_command *cmd, struct option *longs, char *shorts)
{
    size_t n = 0, k = 0;
    shorts[k++] = '-'; /* in order: positional arguments come back as 1 */
    shorts[k++] = ':'; /* a missing value comes back as ':' */
    for (const cli_option *o = cmd->options; o->name; o++, n++) {
        int arg = takes_value(o) ? required_argument : no_argument;
        longs[n] = (struct option){o->name + 2, arg, NULL, LONG_VAL + (int)n};
        if (o->short_name) {
            shorts[k++] = o->short_name;
            if (arg == required_argument)
                shorts[k++] = ':';
        }
    }
    longs[n] = (struct option){0};
    shorts[k] = '\0';
    return n;
}

/* The option getopt_long returned as c, or NULL. */
static const cli_option *option_of(const cli_command *cmd, size_t n, int c)
{
    if (c >= LONG_VAL && (size_t)(c - LONG_VAL) < n)
        return &cmd->options[c - LONG_VAL];
    for (size_t i = 0; c > 0 && i < n; i++)
        if (cmd->options[i].short_name == c)
            return &cmd->options[i];
    return NULL;
}

/* One getopt_long step at av[at] (c its result): 0, or the command's exit. */
static int step(const cli_command *cmd, size_t n, char **av, int at, int c, void *ctx,
                unsigned char *seen, const char **args, size_t *n_args)
{
    const char *arg = av[at];
    if (c == 1)
        return positional(cmd, optarg, args, n_args);
    const cli_option *o = option_of(cmd, n, c == ':' ? optopt : c);
    const char *value = optarg;
    if (c == '?' || !o || !written_as(o, arg, &value))
        return unknown_option(cmd, arg);
    if (c == ':') {
        char written[64];
        snprintf(written, sizeof written, "%.*s", (int)strcspn(arg, "="), arg);
        return refuse(cmd, o->missing, written);
    }
    size_t i = (size_t)(o - cmd->options);
    int rc = take(cmd, o, value, seen[i], ctx);
    seen[i] = 1;
    return rc;
}

void cli_csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void cli_csv_number(FILE *out, double x)
{
    char text[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (strtod(text, NULL) == x)
            break;
    }
    fputs(text, out);
}

void cli_list_options(const cli_command *cmd, FILE *out)
{
    for (const cli_option *o = cmd->options; o->name; o++) {
        char short_form[3] = "-";
        if (o->short_name)
            short_form[1] = o->short_name;
        fprintf(out, "%s %s %s%s\n", o->name, short_form, takes_value(o) ? "value" : "flag",
                once_only(o) || !takes_value(o) ? "" : " repeatable");
    }
}

int cli_parse(const cli_command *cmd, int argc, char **argv, void *ctx, const char **args,
              size_t *n_args)
{
    struct option longs[CLI_MAX_OPTIONS + 1];
    char shorts[2 + 2 * CLI_MAX_OPTIONS + 1];
    unsigned char seen[CLI_MAX_OPTIONS] = {0};
    size_t n = 0;
    while (cmd->options[n].name)
        n++;
    if (n > CLI_MAX_OPTIONS) {
        fprintf(stderr, "dcsim %s: error: more than %d options declared\n", cmd->name,
                CLI_MAX_OPTIONS);
        return EXIT_FAILURE;
    }
    *n_args = 0;
    if (argc == 1 && !strcmp(argv[0], CLI_LIST_OPTIONS)) { /* for the generators */
        if (!cmd->quiet)
            cli_list_options(cmd, stdout);
        return CLI_DONE;
    }
    getopt_tables(cmd, longs, shorts);
    /* getopt_long reads from av[1]: av[0] names the command */
    char **av = malloc(((size_t)argc + 2) * sizeof *av);
    if (!av) {
        fprintf(stderr, "dcsim %s: error: out of memory\n", cmd->name);
        return EXIT_FAILURE;
    }
    av[0] = (char *)cmd->name;
    memcpy(av + 1, argv, (size_t)argc * sizeof *av);
    av[argc + 1] = NULL;
    opterr = 0;
    optind = 0; /* glibc: start over (the commands run more than once in the tests) */
    int rc = 0, c;
    for (int at = 1; !rc && (c = getopt_long(argc + 1, av, shorts, longs, NULL)) != -1;
         at = optind)
        rc = step(cmd, n, av, at, c, ctx, seen, args, n_args);
    for (int i = optind; !rc && i <= argc; i++) /* after "--" */
        rc = positional(cmd, av[i], args, n_args);
    free(av);
    return rc;
}

void cli_cap_threads(void)
{
#ifdef _OPENMP
    if (omp_get_max_threads() > CLI_MAX_THREADS)
        omp_set_num_threads(CLI_MAX_THREADS);
#endif
}
