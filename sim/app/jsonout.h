/* jsonout.h - the one envelope and the one CSV table of every dcsim command's
 * machine output (docs/json.md). A --json document is an object whose first
 * three members are
 *   "schema": "dcsim/1", "command": "step", "dcsim_version": "X.Y.Z"
 * and whose numbers are all finite: jsonout_check refuses NaN and infinity
 * (cJSON would print them as null, which a reader could not tell from a
 * missing value). --csv is built from the same document (jsonout_csv), so a
 * CSV number is the JSON's: one header row of the members' names (units at
 * the end of the name: _s, _bytes, _j, _w), RFC 4180 fields (cli_csv_field),
 * numbers exact (cli_csv_number). */
#ifndef DCSIM_APP_JSONOUT_H
#define DCSIM_APP_JSONOUT_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* The schema's name; removing or renaming a key bumps N (docs/json.md). */
#define JSONOUT_SCHEMA "dcsim/1"

/* A new object holding the envelope for `command` ("run"); NULL when out of
 * memory. The caller adds its members and owns the object. */
cJSON *jsonout_begin(const char *command);

/* The envelope for command, then body's members in their order (body is
 * consumed): for documents built before their command is known. NULL when
 * out of memory. */
cJSON *jsonout_wrap(const char *command, cJSON *body);

/* 0 when every number under root is finite; else 1, with the first
 * offending member's path ("rows[3].time_s") in where. */
int jsonout_check(const cJSON *root, char *where, size_t size);

/* Print root (formatted as cJSON_Print, or on one line) and a newline on
 * out, after jsonout_check. Returns 0, or 1 after printing "dcsim COMMAND:
 * error: ..." on stderr (a non-finite number, out of memory). Does not free
 * root. */
int jsonout_print(const cJSON *root, int formatted, FILE *out);

/* root as a CSV table on out. table NULL: one row of root's members; a
 * member's name: one row per object of that array, or one row of that
 * object's members. The columns are the scalar members (string, number,
 * true/false; not the envelope) in the order of the first row, then any a later row adds; a
 * member object's scalars are columns too, named PARENT_CHILD
 * ("wait_s_p99"); arrays are left out (--json has them). index non-NULL:
 * a first column of that name numbering the rows from 0 ("stage"). A row
 * without a column has an empty field there. Checks as jsonout_print;
 * returns 0 or 1 (the error printed). */
int jsonout_csv(const cJSON *root, const char *table, const char *index, FILE *out);

enum jsonout_format {
    JSONOUT_JSON,      /* formatted, as cJSON_Print */
    JSONOUT_JSON_LINE, /* on one line */
    JSONOUT_CSV        /* jsonout_csv */
};

/* The usual ending of a command's machine output: root on stdout as f asks
 * (table and index: jsonout_csv's), then root freed. NULL root: out of
 * memory, reported. Returns 0 or 1. */
int jsonout_emit(cJSON *root, enum jsonout_format f, const char *table, const char *index);

/* The usage error for --json with --csv, as compare's: the exit status. */
int jsonout_one_format(const char *command);

#endif
