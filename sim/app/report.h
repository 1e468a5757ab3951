/* report.h - `dcsim report`: a self-contained HTML report of one trace, or
 * several side by side, drawn by analysis/dcsim_report.py (docs/analysis.md). */
#ifndef DCSIM_APP_REPORT_H
#define DCSIM_APP_REPORT_H

int cmd_report(int argc, char **argv);
extern const char usage_report[];

#endif
