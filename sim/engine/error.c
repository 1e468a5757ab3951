/* error.c - first-error-wins error records (see error.h). */
#include "error.h"

#include <stdio.h>
#include <string.h>

void sim_error_clear(sim_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

int sim_error_vset(sim_error *err, int code, const char *file, int line,
                   const char *fmt, va_list ap)
{
    if (!err || err->code != SIM_OK)
        return code;
    err->code = code;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    /* keep it one line: a stray newline from a library message would break
     * the compiler-style format editors parse */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    size_t n = strlen(err->msg);
    while (n > 0 && err->msg[n - 1] == ' ')
        err->msg[--n] = '\0';
    return code;
}

int sim_error_set(sim_error *err, int code, const char *file, int line,
                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sim_error_vset(err, code, file, line, fmt, ap);
    va_end(ap);
    return code;
}

const char *sim_error_format(const sim_error *err, char *buf, unsigned long size)
{
    if (err->file[0] && err->line > 0)
        snprintf(buf, size, "%s:%d: error: %s", err->file, err->line, err->msg);
    else if (err->file[0])
        snprintf(buf, size, "%s: error: %s", err->file, err->msg);
    else
        snprintf(buf, size, "error: %s", err->msg);
    for (char *c = buf; *c; c++) /* one line, whatever a message quoted */
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    return buf;
}
