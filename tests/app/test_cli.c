/* test_cli.c - the option parser every dcsim command uses (sim/app/cli.h):
 * the accepted forms (--name VALUE, --name=VALUE, -n VALUE, -n=VALUE,
 * options anywhere, --), the refusals and their exact lines (unknown,
 * abbreviated, grouped, missing value, given twice, one argument too many),
 * that the first problem in argv order wins, that argv is left alone, and
 * that a process can parse again (the commands run more than once in the
 * tests). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"

typedef struct opts {
    const char *output;
    cli_sets sets, eq_sets;
    int json, quiet;
    const char *seed;
    int n_vary;
    const char *args[2];
    size_t n_args;
} opts;

static int opt_seed(void *ctx, const char *v)
{
    if (!strcmp(v, "bad"))
        return cli_usage_error("t", "--seed %s: expected a number", v);
    ((opts *)ctx)->seed = v;
    return 0;
}

static int opt_vary(void *ctx, const char *v)
{
    (void)v;
    ((opts *)ctx)->n_vary++;
    return 0;
}

static int opt_list(void *ctx, const char *v)
{
    (void)ctx;
    (void)v;
    return CLI_DONE;
}

static const cli_option table[] = {
    {"--output", 'o', CLI_TEXT, offsetof(opts, output), .missing = "%s needs a file name"},
    {"--set", 0, CLI_SETS, offsetof(opts, sets), .missing = "%s needs PATH=VALUE"},
    {"--fixed", 0, CLI_SETS_EQ, offsetof(opts, eq_sets), .missing = "%s needs PATH=VALUE"},
    {"--json", 0, CLI_FLAG, offsetof(opts, json), NULL, NULL},
    {"--quiet", 'q', CLI_FLAG, offsetof(opts, quiet), NULL, NULL},
    {"--seed", 0, CLI_CALL, 0, opt_seed, .missing = "%s needs a number"},
    {"--vary", 0, CLI_CALL_EACH, 0, opt_vary, .missing = "%s needs KEY=VALUES"},
    {"--list", 0, CLI_DO, 0, opt_list, NULL},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

static char err_line[1024];
static int quiet_mode;

/* parse argv into *o; the first line on stderr in err_line */
static int parse_v(opts *o, int argc, char **argv)
{
    static const char usage[] = "usage: dcsim t\n";
    char **copy = malloc(((size_t)argc + 1) * sizeof *copy);
    memcpy(copy, argv, (size_t)argc * sizeof *argv);
    memset(o, 0, sizeof *o);
    cli_command cmd = {"t", usage, table, 2, .too_many = "more than two ('%s')"};
    cmd.quiet = quiet_mode;

    FILE *tmp = tmpfile();
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = cli_parse(&cmd, argc, argv, o, o->args, &o->n_args);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    err_line[0] = '\0';
    if (fgets(err_line, sizeof err_line, tmp))
        err_line[strcspn(err_line, "\n")] = '\0';
    fclose(tmp);
    for (int i = 0; i < argc; i++) /* argv is left as it was */
        CHECK(argv[i] == copy[i]);
    free(copy);
    return rc;
}

/* the same with the arguments listed, NULL-terminated */
static int parse(opts *o, ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;
    va_start(ap, o);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 16;)
        argv[argc++] = a;
    va_end(ap);
    return parse_v(o, argc, argv);
}

static void check_forms(void)
{
    opts o;
    CHECK_INT_EQ(parse(&o, "a.xml", "--output", "t.h5", "--json", NULL), 0);
    CHECK_STR_EQ(o.output, "t.h5");
    CHECK_INT_EQ(o.json, 1);
    CHECK_INT_EQ(o.n_args, 1);
    CHECK_STR_EQ(o.args[0], "a.xml");
    CHECK_STR_EQ(err_line, "");

    CHECK_INT_EQ(parse(&o, "--output=t.h5", "a.xml", "b.xml", NULL), 0);
    CHECK_STR_EQ(o.output, "t.h5");
    CHECK_INT_EQ(o.n_args, 2);
    CHECK_STR_EQ(o.args[1], "b.xml");

    CHECK_INT_EQ(parse(&o, "-o", "t.h5", "-q", NULL), 0);
    CHECK_STR_EQ(o.output, "t.h5");
    CHECK_INT_EQ(o.quiet, 1);
    CHECK_INT_EQ(parse(&o, "-o=t.h5", NULL), 0); /* compare's form, now everyone's */
    CHECK_STR_EQ(o.output, "t.h5");
    CHECK_INT_EQ(parse(&o, "--output=", NULL), 0); /* an empty value is a value */
    CHECK_STR_EQ(o.output, "");

    /* repeatable: in the order given; a value may hold '=' and start with '-' */
    CHECK_INT_EQ(parse(&o, "--set", "a/@x=1", "--set=b/@y=2=3", "--vary", "k=1",
                       "--vary=k=2", "--seed", "-5", NULL), 0);
    CHECK_INT_EQ(o.sets.n, 2);
    CHECK_STR_EQ(o.sets.v[0], "a/@x=1");
    CHECK_STR_EQ(o.sets.v[1], "b/@y=2=3");
    CHECK_INT_EQ(o.n_vary, 2);
    CHECK_STR_EQ(o.seed, "-5");
    CHECK_INT_EQ(parse(&o, "--set", "no-equals", NULL), 0); /* the loader says why */
    CHECK_INT_EQ(parse(&o, "--json", "--json", "-q", "--quiet", NULL), 0); /* flags repeat */

    /* --: every later argument is positional; "-" always is */
    CHECK_INT_EQ(parse(&o, "--json", "--", "--output", "-x", NULL), 0);
    CHECK_INT_EQ(o.json, 1);
    CHECK(o.output == NULL);
    CHECK_INT_EQ(o.n_args, 2);
    CHECK_STR_EQ(o.args[0], "--output");
    CHECK_STR_EQ(o.args[1], "-x");
    CHECK_INT_EQ(parse(&o, "-", "--", NULL), 0);
    CHECK_INT_EQ(o.n_args, 1);
    CHECK_STR_EQ(o.args[0], "-");
    CHECK_INT_EQ(parse(&o, "--seed", "--", "a", NULL), 0); /* a value, not the end */
    CHECK_STR_EQ(o.seed, "--");
    CHECK_INT_EQ(o.n_args, 1);
}

static void check_refusals(void)
{
    opts o;
    static const struct {
        const char *args[4];
        const char *line;
    } cases[] = {
        {{"--frob"}, "dcsim t: error: unknown option '--frob' (see: dcsim help t)"},
        {{"--out", "x"}, "dcsim t: error: unknown option '--out' (see: dcsim help t)"},
        {{"--out"}, "dcsim t: error: unknown option '--out' (see: dcsim help t)"},
        {{"--js"}, "dcsim t: error: unknown option '--js' (see: dcsim help t)"},
        {{"-qo", "x"}, "dcsim t: error: unknown option '-qo' (see: dcsim help t)"},
        {{"-ox"}, "dcsim t: error: unknown option '-ox' (see: dcsim help t)"},
        {{"-x"}, "dcsim t: error: unknown option '-x' (see: dcsim help t)"},
        {{"--json=1"}, "dcsim t: error: unknown option '--json=1' (see: dcsim help t)"},
        {{"-q=1"}, "dcsim t: error: unknown option '-q=1' (see: dcsim help t)"},
        {{"--seed"}, "dcsim t: error: --seed needs a number (see: dcsim help t)"},
        {{"a", "-o"}, "dcsim t: error: -o needs a file name (see: dcsim help t)"},
        {{"--output"}, "dcsim t: error: --output needs a file name (see: dcsim help t)"},
        {{"--fixed", "x"}, "dcsim t: error: --fixed needs PATH=VALUE (see: dcsim help t)"},
        {{"--seed", "1", "--seed", "1"}, "dcsim t: error: --seed given twice (see: dcsim help t)"},
        {{"-o", "a", "--output=b"}, "dcsim t: error: --output given twice (see: dcsim help t)"},
        {{"a", "b", "c"}, "dcsim t: error: more than two ('c') (see: dcsim help t)"},
        {{"--", "a", "b", "c"}, "dcsim t: error: more than two ('c') (see: dcsim help t)"},
        {{"--seed", "bad"}, "dcsim t: error: --seed bad: expected a number (see: dcsim help t)"},
        /* the first problem in argv order wins */
        {{"a", "b", "c", "--frob"}, "dcsim t: error: more than two ('c') (see: dcsim help t)"},
        {{"--frob", "a", "b", "c"}, "dcsim t: error: unknown option '--frob' (see: dcsim help t)"},
        {{"--seed", "bad", "--frob"}, "dcsim t: error: --seed bad: expected a number (see: dcsim help t)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const *a = cases[i].args;
        int rc = parse(&o, a[0], a[1], a[2], a[3], NULL);
        CHECK_INT_EQ(rc, CLI_EXIT_INPUT);
        CHECK_STR_EQ(err_line, cases[i].line);
    }

    /* at most CLI_MAX_SETS of one --set list */
    char *argv[2 * CLI_MAX_SETS + 2];
    for (int k = 0; k <= CLI_MAX_SETS; k++) {
        argv[2 * k] = "--set";
        argv[2 * k + 1] = "a/@b=1";
    }
    CHECK_INT_EQ(parse_v(&o, 2 * CLI_MAX_SETS, argv), 0);
    CHECK_INT_EQ(o.sets.n, CLI_MAX_SETS);
    CHECK_INT_EQ(parse_v(&o, 2 * CLI_MAX_SETS + 2, argv), CLI_EXIT_INPUT);
    CHECK_STR_EQ(err_line, "dcsim t: error: more than 256 --set options (see: dcsim help t)");

    /* quiet (an MPI rank other than 0): the same status, nothing printed */
    quiet_mode = 1;
    CHECK_INT_EQ(parse(&o, "--frob", NULL), CLI_EXIT_INPUT);
    CHECK_STR_EQ(err_line, "");
    CHECK_INT_EQ(parse(&o, "--seed", "1", "--seed", "2", NULL), CLI_EXIT_INPUT);
    CHECK_STR_EQ(err_line, "");
    quiet_mode = 0;
}

static void check_done(void)
{
    opts o;
    /* an option that finishes the command stops there: later problems unread */
    CHECK_INT_EQ(parse(&o, "--list", "--frob", NULL), CLI_DONE);
    CHECK_STR_EQ(err_line, "");
    CHECK_INT_EQ(parse(&o, "--frob", "--list", NULL), CLI_EXIT_INPUT);
    /* --help: the usage on stdout */
    FILE *out = tmpfile();
    fflush(stdout);
    int saved = dup(1);
    dup2(fileno(out), 1);
    int rc = parse(&o, "-h", "--frob", NULL);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(out);
    char line[64] = "";
    CHECK(fgets(line, sizeof line, out) != NULL);
    fclose(out);
    CHECK_INT_EQ(rc, CLI_DONE);
    CHECK_STR_EQ(line, "usage: dcsim t\n");
    /* after a refusal in the middle of "-qo", the next parse starts afresh */
    CHECK_INT_EQ(parse(&o, "-qo", NULL), CLI_EXIT_INPUT);
    CHECK_INT_EQ(parse(&o, "-q", "a", NULL), 0);
    CHECK_INT_EQ(o.quiet, 1);
    CHECK_INT_EQ(o.n_args, 1);
    CHECK_INT_EQ(parse(&o, NULL), 0);
    CHECK_INT_EQ(o.n_args, 0);
}

int main(void)
{
    check_forms();
    check_refusals();
    check_done();
    return check_report();
}
