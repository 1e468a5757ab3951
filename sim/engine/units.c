/* units.c - the unit table and the quantity parser (see units.h).
 *
 * Grammar: [space] number [space] unit [space]. number is what strtod accepts
 * except hex, inf and nan. The unit is looked up in the expected dimension
 * first; if it belongs to another dimension the message says which.
 */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    const char *symbol;
    enum sim_dim dim;
    double factor; /* multiply by this to get SI base units */
};

#define KILO 1e3
#define MEGA 1e6
#define GIGA 1e9
#define TERA 1e12
#define PETA 1e15
#define EXA 1e18
#define KIBI 1024.0
#define MEBI (1024.0 * 1024.0)
#define GIBI (1024.0 * 1024.0 * 1024.0)
#define TEBI (1024.0 * 1024.0 * 1024.0 * 1024.0)
#define PEBI (1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0)
#define MINUTE 60.0
#define HOUR 3600.0
#define DAY 86400.0
#define WEEK (7 * DAY)
#define YEAR (365 * DAY) /* a calendar year of 365 days: 8760 h, as AFR tables use */

static const struct unit unit_table[] = {
    /* time */
    {"ns", SIM_DIM_TIME, 1e-9}, {"us", SIM_DIM_TIME, 1e-6}, {"ms", SIM_DIM_TIME, 1e-3},
    {"s", SIM_DIM_TIME, 1.0}, {"min", SIM_DIM_TIME, MINUTE}, {"h", SIM_DIM_TIME, HOUR},
    {"d", SIM_DIM_TIME, DAY}, {"week", SIM_DIM_TIME, WEEK}, {"year", SIM_DIM_TIME, YEAR},
    /* data: decimal and binary bytes, and bits */
    {"B", SIM_DIM_DATA, 1.0}, {"KB", SIM_DIM_DATA, KILO}, {"MB", SIM_DIM_DATA, MEGA},
    {"GB", SIM_DIM_DATA, GIGA}, {"TB", SIM_DIM_DATA, TERA}, {"PB", SIM_DIM_DATA, PETA},
    {"KiB", SIM_DIM_DATA, KIBI}, {"MiB", SIM_DIM_DATA, MEBI}, {"GiB", SIM_DIM_DATA, GIBI},
    {"TiB", SIM_DIM_DATA, TEBI}, {"PiB", SIM_DIM_DATA, PEBI},
    {"b", SIM_DIM_DATA, 0.125}, {"Kb", SIM_DIM_DATA, KILO / 8}, {"Mb", SIM_DIM_DATA, MEGA / 8},
    {"Gb", SIM_DIM_DATA, GIGA / 8}, {"Tb", SIM_DIM_DATA, TERA / 8},
    /* bandwidth */
    {"B/s", SIM_DIM_BANDWIDTH, 1.0}, {"KB/s", SIM_DIM_BANDWIDTH, KILO},
    {"MB/s", SIM_DIM_BANDWIDTH, MEGA}, {"GB/s", SIM_DIM_BANDWIDTH, GIGA},
    {"TB/s", SIM_DIM_BANDWIDTH, TERA}, {"KiB/s", SIM_DIM_BANDWIDTH, KIBI},
    {"MiB/s", SIM_DIM_BANDWIDTH, MEBI}, {"GiB/s", SIM_DIM_BANDWIDTH, GIBI},
    {"TiB/s", SIM_DIM_BANDWIDTH, TEBI},
    {"bps", SIM_DIM_BANDWIDTH, 0.125}, {"Kbps", SIM_DIM_BANDWIDTH, KILO / 8},
    {"Mbps", SIM_DIM_BANDWIDTH, MEGA / 8}, {"Gbps", SIM_DIM_BANDWIDTH, GIGA / 8},
    {"Tbps", SIM_DIM_BANDWIDTH, TERA / 8}, {"b/s", SIM_DIM_BANDWIDTH, 0.125},
    {"Kb/s", SIM_DIM_BANDWIDTH, KILO / 8}, {"Mb/s", SIM_DIM_BANDWIDTH, MEGA / 8},
    {"Gb/s", SIM_DIM_BANDWIDTH, GIGA / 8}, {"Tb/s", SIM_DIM_BANDWIDTH, TERA / 8},
    /* power and energy */
    {"W", SIM_DIM_POWER, 1.0}, {"kW", SIM_DIM_POWER, KILO}, {"MW", SIM_DIM_POWER, MEGA},
    {"GW", SIM_DIM_POWER, GIGA},
    {"J", SIM_DIM_ENERGY, 1.0}, {"kJ", SIM_DIM_ENERGY, KILO}, {"MJ", SIM_DIM_ENERGY, MEGA},
    {"GJ", SIM_DIM_ENERGY, GIGA}, {"Wh", SIM_DIM_ENERGY, HOUR},
    {"kWh", SIM_DIM_ENERGY, KILO * HOUR}, {"MWh", SIM_DIM_ENERGY, MEGA * HOUR},
    {"GWh", SIM_DIM_ENERGY, GIGA * HOUR},
    /* compute rate */
    {"FLOP/s", SIM_DIM_FLOP_RATE, 1.0}, {"GFLOP/s", SIM_DIM_FLOP_RATE, GIGA},
    {"TFLOP/s", SIM_DIM_FLOP_RATE, TERA}, {"PFLOP/s", SIM_DIM_FLOP_RATE, PETA},
    {"EFLOP/s", SIM_DIM_FLOP_RATE, EXA},
    {"FLOPS", SIM_DIM_FLOP_RATE, 1.0}, {"GFLOPS", SIM_DIM_FLOP_RATE, GIGA},
    {"TFLOPS", SIM_DIM_FLOP_RATE, TERA}, {"PFLOPS", SIM_DIM_FLOP_RATE, PETA},
    {"EFLOPS", SIM_DIM_FLOP_RATE, EXA},
    /* frequency (events per time) */
    {"/s", SIM_DIM_FREQUENCY, 1.0}, {"/min", SIM_DIM_FREQUENCY, 1.0 / MINUTE},
    {"/h", SIM_DIM_FREQUENCY, 1.0 / HOUR}, {"/d", SIM_DIM_FREQUENCY, 1.0 / DAY},
    {"/week", SIM_DIM_FREQUENCY, 1.0 / WEEK}, {"/year", SIM_DIM_FREQUENCY, 1.0 / YEAR},
    {"Hz", SIM_DIM_FREQUENCY, 1.0},
    /* counts: bare, or with a scale suffix. B is billion (405B parameters). */
    {"", SIM_DIM_COUNT, 1.0}, {"K", SIM_DIM_COUNT, KILO}, {"M", SIM_DIM_COUNT, MEGA},
    {"B", SIM_DIM_COUNT, GIGA}, {"G", SIM_DIM_COUNT, GIGA}, {"T", SIM_DIM_COUNT, TERA},
    {"P", SIM_DIM_COUNT, PETA},
    /* fractions */
    {"", SIM_DIM_FRACTION, 1.0}, {"%", SIM_DIM_FRACTION, 0.01},
};

#define N_UNITS (sizeof unit_table / sizeof unit_table[0])

static const char *const dim_names[SIM_DIM_COUNT_OF_DIMS] = {
    [SIM_DIM_TIME] = "duration",       [SIM_DIM_DATA] = "data size",
    [SIM_DIM_BANDWIDTH] = "bandwidth", [SIM_DIM_POWER] = "power",
    [SIM_DIM_ENERGY] = "energy",       [SIM_DIM_FLOP_RATE] = "compute rate",
    [SIM_DIM_FREQUENCY] = "rate",      [SIM_DIM_COUNT] = "count",
    [SIM_DIM_FRACTION] = "fraction",
};

const char *sim_dim_name(enum sim_dim dim)
{
    return (unsigned)dim < SIM_DIM_COUNT_OF_DIMS ? dim_names[dim] : "?";
}

const char *sim_dim_units(enum sim_dim dim, char *buf, size_t size)
{
    size_t used = 0;
    if (!size)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < N_UNITS; i++) {
        if (unit_table[i].dim != dim)
            continue;
        const char *sym = unit_table[i].symbol[0] ? unit_table[i].symbol : "(none)";
        int n = snprintf(buf + used, size - used, "%s%s", used ? " " : "", sym);
        if (n < 0 || (size_t)n >= size - used) {
            buf[used] = '\0'; /* drop the partly written symbol */
            break;
        }
        used += (size_t)n;
    }
    return buf;
}

static const struct unit *find_unit(const char *symbol, enum sim_dim dim)
{
    for (size_t i = 0; i < N_UNITS; i++)
        if (unit_table[i].dim == dim && strcmp(unit_table[i].symbol, symbol) == 0)
            return &unit_table[i];
    return NULL;
}

static const struct unit *find_unit_any_dim(const char *symbol)
{
    for (size_t i = 0; i < N_UNITS; i++)
        if (unit_table[i].symbol[0] && strcmp(unit_table[i].symbol, symbol) == 0)
            return &unit_table[i];
    return NULL;
}

/* "a duration", "an energy" */
static const char *article(enum sim_dim dim)
{
    return strchr("aeiou", sim_dim_name(dim)[0]) ? "an" : "a";
}

static int fail(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t why_size, const char *fmt, ...)
{
    if (why && why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int sim_units_parse(const char *text, enum sim_dim dim, double *out_si, char *why,
                    size_t why_size)
{
    if ((unsigned)dim >= SIM_DIM_COUNT_OF_DIMS)
        return fail(why, why_size, "internal: unknown dimension");
    if (!text)
        return fail(why, why_size, "missing value");
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p)
        return fail(why, why_size, "empty value; expected %s %s", article(dim),
                    sim_dim_name(dim));

    /* strtod accepts hex, inf and nan, none of which belong in a scenario */
    const char *q = p;
    if (*q == '+' || *q == '-')
        q++;
    if (!(isdigit((unsigned char)*q) || (*q == '.' && isdigit((unsigned char)q[1]))))
        return fail(why, why_size, "'%s' does not start with a number; expected %s %s",
                    text, article(dim), sim_dim_name(dim));
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
        return fail(why, why_size, "'%s': hexadecimal numbers are not accepted", text);

    char *end = NULL;
    errno = 0;
    double value = strtod(p, &end);
    /* ERANGE: overflow, or underflow that would silently read as 0 */
    if (!isfinite(value) || errno == ERANGE)
        return fail(why, why_size, "'%s' is out of range", text);

    while (isspace((unsigned char)*end))
        end++;
    char symbol[32];
    size_t len = strlen(end);
    while (len > 0 && isspace((unsigned char)end[len - 1]))
        len--;
    char units[256];
    if (len >= sizeof symbol)
        return fail(why, why_size, "unit too long; %s %s takes one of: %s", article(dim),
                    sim_dim_name(dim), sim_dim_units(dim, units, sizeof units));
    memcpy(symbol, end, len);
    symbol[len] = '\0';

    const struct unit *u = find_unit(symbol, dim);
    if (!u) {
        if (why && why_size) {
            const struct unit *other = find_unit_any_dim(symbol);
            if (!symbol[0])
                snprintf(why, why_size, "number without unit; %s %s needs one of: %s",
                         article(dim), sim_dim_name(dim), sim_dim_units(dim, units, sizeof units));
            else if (other)
                snprintf(why, why_size, "'%s' is %s %s unit; expected %s %s (%s)", symbol,
                         article(other->dim), sim_dim_name(other->dim), article(dim),
                         sim_dim_name(dim),
                         sim_dim_units(dim, units, sizeof units));
            else
                snprintf(why, why_size, "unknown unit '%s'; %s %s takes one of: %s", symbol,
                         article(dim), sim_dim_name(dim), sim_dim_units(dim, units, sizeof units));
        }
        return -1;
    }
    double si = value * u->factor;
    if (!isfinite(si))
        return fail(why, why_size, "'%s' is out of range", text);
    *out_si = si;
    return 0;
}
