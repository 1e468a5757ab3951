#define _XOPEN_SOURCE 700 /* nftw; before any header */
/* report.c - `dcsim report`: the analysis scripts (analysis/dcsim_*.py) travel
 * inside the binary; the command writes them to a private temporary
 * directory and runs Debian's Python on them (h5py, numpy, matplotlib), so
 * a report works from any directory and with the scripts of the same
 * version as the binary. DCSIM_PYTHON overrides the interpreter. */
#include "report.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern const unsigned char dcsim_analysis_trace[], dcsim_analysis_figures[],
    dcsim_analysis_report[], dcsim_analysis_units[], dcsim_analysis_brief[],
    dcsim_analysis_cluster[], dcsim_analysis_serve[], dcsim_analysis_hubs[];
extern const size_t dcsim_analysis_trace_len, dcsim_analysis_figures_len,
    dcsim_analysis_report_len, dcsim_analysis_units_len, dcsim_analysis_brief_len,
    dcsim_analysis_cluster_len, dcsim_analysis_serve_len, dcsim_analysis_hubs_len;

const char usage_report[] =
    "usage: dcsim report TRACE.h5 [MORE.h5 ...] [-o report.html] [--goodput FILE]\n"
    "\n"
    "Writes a self-contained HTML report of a trace (summary, failures by\n"
    "cause, and every figure the trace supports, embedded) and prints the\n"
    "summary; with several traces, compares them side by side. A `dcsim\n"
    "cluster -o` file gives its utilisation and queue, power, wait and slowdown\n"
    "CDFs and placement figures (analysis/dcsim_cluster.py); a `dcsim serve\n"
    "-o` file its latency CDFs and load, a serving sweep or compare table its\n"
    "latency against throughput (analysis/dcsim_serve.py); a `dcsim hubs -o`\n"
    "file its hubs side by side, cost and CO2 by hub over the months and the\n"
    "saving against the nearest hub (analysis/dcsim_hubs.py). Runs\n"
    "/usr/bin/python3 (or $DCSIM_PYTHON) with h5py, numpy and matplotlib\n"
    "(Debian: python3-h5py python3-numpy python3-matplotlib). The figures\n"
    "alone: /usr/bin/python3 analysis/dcsim_figures.py TRACE.h5 -o DIR.\n"
    "\n"
    "  -o, --output FILE  the report (default report.html)\n"
    "  --goodput FILE     add the goodput curve of a `dcsim goodput --json` output\n"
    "                     or a `dcsim sweep` file\n";

static int write_file(const char *dir, const char *name, const unsigned char *data, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t put = fwrite(data, 1, len, f);
    return fclose(f) || put != len ? -1 : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* the scripts, and whatever Python and matplotlib left beside them */
static void remove_dir(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* "a.h5" or "a.h5, b.h5": the traces, for an error line */
static const char *traces_named(const char *const *traces, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", traces[i]);
    return buf;
}

typedef struct report_args {
    const char *output, *goodput;
    const char **traces;  /* argc entries */
    size_t n_traces;
} report_args;

static const cli_option report_options[] = {
    {"--output", 'o', CLI_TEXT, offsetof(report_args, output), .missing = "%s needs a file name"},
    {"--goodput", 0, CLI_TEXT, offsetof(report_args, goodput),
     .missing = "%s needs a file name"},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

/* The options, read here so that every command reads them alike (the
 * script gets them back in one form). Returns 0, CLI_DONE or an exit status. */
static int report_parse(int argc, char **argv, report_args *o)
{
    if (argc == 0) {
        fputs(usage_report, stderr);
        return CLI_EXIT_INPUT;
    }
    o->traces = calloc((size_t)argc, sizeof *o->traces);
    if (!o->traces) {
        fprintf(stderr, "dcsim report: error: out of memory\n");
        return EXIT_FAILURE;
    }
    /* as many traces as arguments: never too many */
    const cli_command cmd = {"report", usage_report, report_options, (size_t)argc, NULL, 0};
    int rc = cli_parse(&cmd, argc, argv, o, o->traces, &o->n_traces);
    if (!rc && !o->n_traces)
        rc = cli_usage_error("report", "no trace given%s", "");
    return rc;
}

/* python3 SCRIPT [-o FILE] [--goodput FILE] -- TRACE...: malloc'd */
static char **script_argv(const char *python, const char *script, const report_args *o)
{
    char **args = calloc(o->n_traces + 8, sizeof *args);
    size_t k = 0;
    if (!args)
        return NULL;
    args[k++] = (char *)python;
    args[k++] = (char *)script;
    if (o->output) {
        args[k++] = "-o";
        args[k++] = (char *)o->output;
    }
    if (o->goodput) {
        args[k++] = "--goodput";
        args[k++] = (char *)o->goodput;
    }
    args[k++] = "--";
    for (size_t i = 0; i < o->n_traces; i++)
        args[k++] = (char *)o->traces[i];
    return args;
}

int cmd_report(int argc, char **argv)
{
    report_args o = {0};
    int rc = report_parse(argc, argv, &o);
    if (rc) {
        free(o.traces);
        return rc == CLI_DONE ? 0 : rc;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/dcsim-report-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "dcsim report: error: cannot make a temporary directory: %s\n",
                strerror(errno));
        free(o.traces);
        return EXIT_FAILURE;
    }
    if (write_file(dir, "dcsim_trace.py", dcsim_analysis_trace, dcsim_analysis_trace_len) ||
        write_file(dir, "dcsim_figures.py", dcsim_analysis_figures, dcsim_analysis_figures_len) ||
        write_file(dir, "dcsim_report.py", dcsim_analysis_report, dcsim_analysis_report_len) ||
        write_file(dir, "dcsim_units.py", dcsim_analysis_units, dcsim_analysis_units_len) ||
        write_file(dir, "dcsim_brief.py", dcsim_analysis_brief, dcsim_analysis_brief_len) ||
        write_file(dir, "dcsim_cluster.py", dcsim_analysis_cluster, dcsim_analysis_cluster_len) ||
        write_file(dir, "dcsim_serve.py", dcsim_analysis_serve, dcsim_analysis_serve_len) ||
        write_file(dir, "dcsim_hubs.py", dcsim_analysis_hubs, dcsim_analysis_hubs_len)) {
        fprintf(stderr, "dcsim report: error: cannot write to %s\n", dir);
        remove_dir(dir);
        free(o.traces);
        return EXIT_FAILURE;
    }
    const char *python = getenv("DCSIM_PYTHON");
    if (!python || !python[0])
        python = "/usr/bin/python3";
    char script[4200];
    snprintf(script, sizeof script, "%s/dcsim_report.py", dir);
    char **args = script_argv(python, script, &o);
    if (!args) {
        remove_dir(dir);
        free(o.traces);
        return EXIT_FAILURE;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("MPLCONFIGDIR", dir, 1); /* matplotlib's cache: not in $HOME */
        setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
        setenv("DCSIM_REPORT_PROG", "dcsim report", 1); /* its error lines' prefix */
        execv(python, args);
        fprintf(stderr, "dcsim report: error: cannot run %s: %s (install python3-h5py "
                        "python3-numpy python3-matplotlib, or set DCSIM_PYTHON)\n",
                python, strerror(errno));
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        rc = EXIT_FAILURE;
    else if (WIFEXITED(status))
        rc = WEXITSTATUS(status) == 1     ? CLI_EXIT_INPUT /* the script's bad input */
             : WEXITSTATUS(status) == 127 ? EXIT_FAILURE   /* no interpreter: said above */
                                          : WEXITSTATUS(status);
    else if (WIFSIGNALED(status) &&
             (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM))
        rc = CLI_EXIT_INTERRUPTED;
    else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS ||
                                     WTERMSIG(status) == SIGFPE || WTERMSIG(status) == SIGABRT)) {
        /* the HDF5 library can crash on a damaged file before Python sees
         * an error: say so in one line */
        char names[1024];
        fprintf(stderr, "dcsim report: error: %s: the HDF5 reader crashed (%s); the file is "
                        "probably damaged\n", traces_named(o.traces, o.n_traces, names, sizeof names),
                strsignal(WTERMSIG(status)));
        rc = CLI_EXIT_INPUT;
    } else {
        fprintf(stderr, "dcsim report: error: the analysis (%s) was stopped by signal %d (%s)\n",
                python, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "unknown");
        rc = EXIT_FAILURE;
    }
    free(args);
    free(o.traces);
    remove_dir(dir);
    return rc;
}
