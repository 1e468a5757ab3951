/* compare.h - `dcsim compare`: one job at several sites, on several
 * networks, or several scenarios, in one table (docs/energy.md). */
#ifndef DCSIM_APP_COMPARE_H
#define DCSIM_APP_COMPARE_H

int cmd_compare(int argc, char **argv);
extern const char usage_compare[];

#endif
