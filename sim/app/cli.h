/* cli.h - what every dcsim command shares: printing an error record, usage
 * errors, and its options. Exit statuses: 0 ok, 1 internal error or out of
 * memory, 2 bad input, 130 interrupted.
 *
 * Options: a command declares a table of cli_option and cli_parse reads its
 * arguments with getopt_long. Accepted forms: "--name VALUE", "--name=VALUE",
 * "-n VALUE", "-n=VALUE", flags "--name" and "-n", options before, between
 * or after the positional arguments, and "--", after which every argument is
 * positional (dcsim run -- --odd-name.xml). Refused, each as one usage error
 * "dcsim COMMAND: error: MESSAGE (see: dcsim help COMMAND)": an unknown
 * option (abbreviations "--rep", grouped "-qo" and attached "-oFILE" too), a
 * missing value, a single-valued option given twice, one positional argument
 * too many. Arguments are read in order and the first problem wins. */
#ifndef DCSIM_APP_CLI_H
#define DCSIM_APP_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

#define CLI_EXIT_INPUT 2
#define CLI_EXIT_INTERRUPTED 130

/* Print err as one compiler-style line on stderr; return the exit status. */
int cli_print_error(const sim_error *err);

/* "dcsim COMMAND: error: MESSAGE (see: dcsim help COMMAND)", one line; returns 2.
 * fmt has exactly one %s, filled with arg. */
int cli_usage_error(const char *command, const char *fmt, const char *arg);

/* ---------------------------------------------------------------- options */

/* The most --set options of one command. */
#define CLI_MAX_SETS 256

/* --set PATH=VALUE overrides in the order given, with room for one more
 * after them (run's and sweep's --seed, last so that it wins). */
typedef struct cli_sets {
    const char *v[CLI_MAX_SETS + 1];
    size_t n;
} cli_sets;

/* What an option does. The storage of FLAG, TEXT and SETS is at `offset`
 * in the parser's ctx; CALL, CALL_EACH and DO call fn(ctx, value). */
enum cli_kind {
    CLI_FLAG,      /* --json: the int becomes 1 (may be repeated) */
    CLI_TEXT,      /* --output FILE: the const char * is the value (once) */
    CLI_SETS,      /* --set PATH=VALUE: appended to the cli_sets (repeatable, at
                    * most CLI_MAX_SETS) */
    CLI_SETS_EQ,   /* the same, and a value without '=' is refused with `missing` */
    CLI_CALL,      /* --seed N: fn(ctx, value) checks and stores it (once) */
    CLI_CALL_EACH, /* --vary, --grid: fn(ctx, value) for each (repeatable) */
    CLI_DO,        /* a flag that acts: fn(ctx, NULL) */
    CLI_HELP       /* --help: print the command's usage on stdout; exit 0 */
};

/* fn's result: 0 to go on, CLI_DONE to stop with exit status 0 (it
 * printed what was asked, e.g. a list), or an exit status (an error it
 * printed). */
#define CLI_DONE (-1)
typedef int cli_option_fn(void *ctx, const char *value);

typedef struct cli_option {
    const char *name;     /* "--output": the long form, as in messages */
    char short_name;      /* 'o' for -o, or 0 */
    enum cli_kind kind;
    size_t offset;        /* FLAG, TEXT, SETS: offsetof(ctx type, member) */
    cli_option_fn *fn;    /* CALL, CALL_EACH, DO */
    const char *missing;  /* a value option without one: the usage error,
                           * %s = the option as written ("-o", "--output") */
} cli_option;

typedef struct cli_command {
    const char *name;           /* "run", for error lines */
    const char *usage;          /* what CLI_HELP prints */
    const cli_option *options;  /* ends with an entry whose name is NULL */
    size_t max_args;            /* positional arguments allowed */
    const char *too_many;       /* the usage error for one more, %s = it */
    int quiet;                  /* print no usage error (an MPI rank other than 0) */
} cli_command;

/* Read argv[0 .. argc) (the arguments after the command's name) as cmd
 * declares, storing into ctx. The positional arguments land in args (room
 * for cmd->max_args), their count in *n_args. Returns 0, CLI_DONE (an
 * option finished the command: exit 0), or the exit status of the usage
 * error it (or an option's fn) printed. argv is not changed. */
int cli_parse(const cli_command *cmd, int argc, char **argv, void *ctx, const char **args,
              size_t *n_args);

/* s as one CSV field on out (RFC 4180): in double quotes, quotes doubled,
 * when it holds a comma, a double quote or a line break; else as is. The
 * --csv tables (compare, sweep) are RFC 4180 with a header row, numbers in
 * the SI unit their column name ends with (time_to_train_s), exact
 * (cli_csv_number). */
void cli_csv_field(FILE *out, const char *s);

/* x as a CSV number: the shortest of %.15g, %.16g, %.17g that reads back as
 * x exactly (0.36, not 0.35999999999999999). */
void cli_csv_number(FILE *out, double x);

/* "dcsim COMMAND --list-options", the only argument: cli_parse prints the
 * command's options (cli_list_options) and returns CLI_DONE. Not in any
 * usage text: it feeds the shell completions (cmake/gen-docs.sh) and the
 * test that every usage line names every option (tests/cli/help.sh). */
#define CLI_LIST_OPTIONS "--list-options"

/* One line per option of cmd: "LONG SHORT KIND[ repeatable]", SHORT "-x"
 * or "-" for none, KIND "value" or "flag", e.g. "--output -o value". */
void cli_list_options(const cli_command *cmd, FILE *out);

/* The most OpenMP threads any dcsim command uses (as calibrate --threads).
 * More threads than this only time-slice, and libgomp crashes when it
 * cannot create the ~100,000 threads OMP_NUM_THREADS may ask for. */
#define CLI_MAX_THREADS 1024

/* Lower OpenMP's thread count to CLI_MAX_THREADS when OMP_NUM_THREADS (or
 * the default) asks for more; call once at start-up. Results do not depend
 * on the thread count, so capping changes nothing but the speed. */
void cli_cap_threads(void);

#endif
