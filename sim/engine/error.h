/* error.h - the caller-owned error record every fallible dcsim call fills.
 *
 * Library code never exits or prints: it returns non-zero and describes the
 * problem here, once. The first error wins; later ones are ignored so the root
 * cause is what the user sees. Only the command-line front end picks an exit code.
 */
#ifndef DCSIM_SIM_ERROR_H
#define DCSIM_SIM_ERROR_H

#include <stdarg.h>

enum sim_error_code {
    SIM_OK = 0,
    SIM_ERR_INPUT = 2,     /* bad scenario, option or value: the user can fix it */
    SIM_ERR_IO = 3,        /* a file could not be read or written */
    SIM_ERR_NOMEM = 4,     /* out of memory */
    SIM_ERR_INTERRUPTED = 5, /* the user asked us to stop (SIGINT/SIGTERM) */
    SIM_ERR_INTERNAL = 6   /* a bug in dcsim */
};

typedef struct sim_error {
    int code;          /* enum sim_error_code; 0 while no error is recorded */
    char file[640];    /* where the problem is ("" when not tied to a file) */
    int line;          /* 1-based line in file, 0 when unknown */
    char msg[1024];    /* one line, no trailing newline */
} sim_error;

void sim_error_clear(sim_error *err);

/* Record an error unless one is already recorded (first error wins).
 * file may be NULL, line may be 0. Returns code, so callers can
 * `return sim_error_set(...)`. err may be NULL (the error is dropped). */
int sim_error_set(sim_error *err, int code, const char *file, int line,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int sim_error_vset(sim_error *err, int code, const char *file, int line,
                   const char *fmt, va_list ap);

/* Format as a compiler-style line: "file:line: error: msg", "file: error: msg"
 * or "error: msg", always one line (control characters a message quotes
 * become spaces). Returns buf. */
const char *sim_error_format(const sim_error *err, char *buf, unsigned long size);

#endif
