/* serve.h - `dcsim serve` (serve.c): an inference fleet request by request.
 * argv excludes the command word; returns the exit status. */
#ifndef DCSIM_APP_SERVE_H
#define DCSIM_APP_SERVE_H

int cmd_serve(int argc, char **argv);

extern const char usage_serve[];

#endif
