/* manpage.h - a command's --help text as a man page (roff, man(7) macros),
 * so that the pages installed under share/man/man1 say exactly what
 * `dcsim help COMMAND` says (dcsim help --man COMMAND; cmake/gen-docs.sh). */
#ifndef DCSIM_APP_MANPAGE_H
#define DCSIM_APP_MANPAGE_H

#include <stddef.h>
#include <stdio.h>

/* Write the page of `command` ("run"; NULL for dcsim(1) itself) on out:
 * NAME (from summary), SYNOPSIS (the usage text's "usage:" paragraph),
 * DESCRIPTION (the rest: prose filled, indented blocks kept as written),
 * EXIT STATUS (an "exit status:" line) and SEE ALSO (dcsim(1), or the
 * n_see pages dcsim-NAME(1) of see[] for dcsim(1)). No date: the page is
 * the same at every build. Returns 0, or -1 when writing failed. */
int man_write(FILE *out, const char *command, const char *summary, const char *usage,
              const char *const *see, size_t n_see);

#endif
