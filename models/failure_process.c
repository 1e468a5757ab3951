/* failure_process.c - the failure-process registry (see failure_process.h). */
#include "failure_process.h"

#include <string.h>

/* One line per process, naming the failure_process its file defines, in
 * enum failure_process_id order (a new process goes last). */
#define FAILURE_PROCESS_REGISTRY(X)                                    \
    X(failure_exponential) /* failure_exponential.c  FAILURE_EXPONENTIAL */ \
    X(failure_weibull)     /* failure_weibull.c      FAILURE_WEIBULL */

#define FAILURE_DECLARE(type) extern const failure_process type;
FAILURE_PROCESS_REGISTRY(FAILURE_DECLARE)
#undef FAILURE_DECLARE

#define FAILURE_ENTRY(type) &type,
const failure_process *const failure_processes[] = {FAILURE_PROCESS_REGISTRY(FAILURE_ENTRY) NULL};
#undef FAILURE_ENTRY

unsigned failure_process_count(void)
{
    return sizeof failure_processes / sizeof failure_processes[0] - 1;
}

const failure_process *failure_process_get(unsigned id)
{
    return id < failure_process_count() ? failure_processes[id] : NULL;
}

int failure_process_find(const char *name)
{
    for (unsigned i = 0; name && failure_processes[i]; i++)
        if (!strcmp(name, failure_processes[i]->name))
            return (int)i;
    return -1;
}

int failure_process_is_memoryless(unsigned id)
{
    const failure_process *p = failure_process_get(id);
    return p && !p->residual;
}
