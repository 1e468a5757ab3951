/* compare_table.c - the parts of the tier tables of `dcsim compare` and
 * `dcsim sweep` that every tier shares (compare_table.h). */
#include "compare_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "trace.h"

int compare_case_error(const compare_case *c, const sim_error *err)
{
    if (strcmp(err->file, c->label) != 0)
        fprintf(stderr, "%s: ", c->label);
    return cli_print_error(err);
}

int compare_label_width(const compare_case *cases, size_t n)
{
    int w = 8;
    for (size_t i = 0; i < n; i++)
        w = strlen(cases[i].label) > (size_t)w ? (int)strlen(cases[i].label) : w;
    return w > 72 ? 72 : w;
}

cJSON *compare_json_begin(const char *command, const char *kind, const char *const *names,
                          const char *const *units, int n_cols, cJSON **rows)
{
    cJSON *root = jsonout_begin(command);
    *rows = NULL;
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "kind", kind);
    cJSON *u = cJSON_AddObjectToObject(root, "units");
    for (int k = 0; k < n_cols; k++)
        cJSON_AddStringToObject(u, names[k], units[k]);
    *rows = cJSON_AddArrayToObject(root, "variants");
    return root;
}

void compare_json_values(cJSON *o, const char *const *names, int n_cols, int site_col,
                         const double *v, int has_site, const double *v0, int has_site0)
{
    for (int k = 0; k < n_cols; k++)
        if (k < site_col || has_site)
            cJSON_AddNumberToObject(o, names[k], v[k]);
    cJSON *d = cJSON_AddObjectToObject(o, "difference");
    for (int k = 0; d && k < n_cols; k++)
        if (k < site_col || (has_site && has_site0))
            cJSON_AddNumberToObject(d, names[k], v[k] - v0[k]);
}

int compare_write_rows(const compare_cluster_out *o, const char *description,
                       const char *const *names, const char *const *units, int n_cols,
                       const compare_case *cases, size_t n, const double *first, size_t stride,
                       const trace_texts *texts, const char *const *inputs, size_t n_inputs)
{
    double *values = malloc((n ? n : 1) * (size_t)n_cols * sizeof *values);
    const char **rows = malloc((n ? n : 1) * sizeof *rows);
    sim_error err;
    sim_error_clear(&err);
    int rc = 0;
    if (!values || !rows) {
        fprintf(stderr, "dcsim %s: out of memory\n", o->command);
        rc = 1;
    } else {
        for (size_t i = 0; i < n; i++) {
            memcpy(values + i * (size_t)n_cols, (const char *)first + i * stride,
                   (size_t)n_cols * sizeof *values);
            rows[i] = cases[i].label;
        }
        if (trace_write_table(o->table_path, o->table_name, description, names, units,
                              (size_t)n_cols, rows, n, values, texts, inputs, n_inputs, &err))
            rc = cli_print_error(&err);
        else if (!o->json && !o->csv) /* machine output stays one document */
            printf("  table written to %s\n", o->table_path);
    }
    free(values);
    free(rows);
    return rc;
}
