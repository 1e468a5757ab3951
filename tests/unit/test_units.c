/* test_units.c - quantities with units (sim/engine/units.h).
 *
 * Every unit symbol with its SI factor (written out here independently of
 * units.c), the table is complete (every symbol sim_dim_units lists is
 * covered), and every way a value is refused, with the key phrase of its
 * message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "units.h"

struct unit_case {
    const char *symbol;
    enum sim_dim dim;
    double factor;
};

static const struct unit_case unit_cases[] = {
    {"ns", SIM_DIM_TIME, 1e-9}, {"us", SIM_DIM_TIME, 1e-6}, {"ms", SIM_DIM_TIME, 1e-3},
    {"s", SIM_DIM_TIME, 1}, {"min", SIM_DIM_TIME, 60}, {"h", SIM_DIM_TIME, 3600},
    {"d", SIM_DIM_TIME, 86400}, {"week", SIM_DIM_TIME, 604800},
    {"year", SIM_DIM_TIME, 31536000}, /* 365 days */

    {"B", SIM_DIM_DATA, 1}, {"KB", SIM_DIM_DATA, 1e3}, {"MB", SIM_DIM_DATA, 1e6},
    {"GB", SIM_DIM_DATA, 1e9}, {"TB", SIM_DIM_DATA, 1e12}, {"PB", SIM_DIM_DATA, 1e15},
    {"KiB", SIM_DIM_DATA, 1024}, {"MiB", SIM_DIM_DATA, 1048576},
    {"GiB", SIM_DIM_DATA, 1073741824}, {"TiB", SIM_DIM_DATA, 1099511627776.0},
    {"PiB", SIM_DIM_DATA, 1125899906842624.0},
    {"b", SIM_DIM_DATA, 0.125}, {"Kb", SIM_DIM_DATA, 125}, {"Mb", SIM_DIM_DATA, 125e3},
    {"Gb", SIM_DIM_DATA, 125e6}, {"Tb", SIM_DIM_DATA, 125e9},

    {"B/s", SIM_DIM_BANDWIDTH, 1}, {"KB/s", SIM_DIM_BANDWIDTH, 1e3},
    {"MB/s", SIM_DIM_BANDWIDTH, 1e6}, {"GB/s", SIM_DIM_BANDWIDTH, 1e9},
    {"TB/s", SIM_DIM_BANDWIDTH, 1e12}, {"KiB/s", SIM_DIM_BANDWIDTH, 1024},
    {"MiB/s", SIM_DIM_BANDWIDTH, 1048576}, {"GiB/s", SIM_DIM_BANDWIDTH, 1073741824},
    {"TiB/s", SIM_DIM_BANDWIDTH, 1099511627776.0},
    {"bps", SIM_DIM_BANDWIDTH, 0.125}, {"Kbps", SIM_DIM_BANDWIDTH, 125},
    {"Mbps", SIM_DIM_BANDWIDTH, 125e3}, {"Gbps", SIM_DIM_BANDWIDTH, 125e6},
    {"Tbps", SIM_DIM_BANDWIDTH, 125e9},
    {"b/s", SIM_DIM_BANDWIDTH, 0.125}, {"Kb/s", SIM_DIM_BANDWIDTH, 125},
    {"Mb/s", SIM_DIM_BANDWIDTH, 125e3}, {"Gb/s", SIM_DIM_BANDWIDTH, 125e6},
    {"Tb/s", SIM_DIM_BANDWIDTH, 125e9},

    {"W", SIM_DIM_POWER, 1}, {"kW", SIM_DIM_POWER, 1e3}, {"MW", SIM_DIM_POWER, 1e6},
    {"GW", SIM_DIM_POWER, 1e9},

    {"J", SIM_DIM_ENERGY, 1}, {"kJ", SIM_DIM_ENERGY, 1e3}, {"MJ", SIM_DIM_ENERGY, 1e6},
    {"GJ", SIM_DIM_ENERGY, 1e9}, {"Wh", SIM_DIM_ENERGY, 3600},
    {"kWh", SIM_DIM_ENERGY, 3.6e6}, {"MWh", SIM_DIM_ENERGY, 3.6e9},
    {"GWh", SIM_DIM_ENERGY, 3.6e12},

    {"FLOP/s", SIM_DIM_FLOP_RATE, 1}, {"GFLOP/s", SIM_DIM_FLOP_RATE, 1e9},
    {"TFLOP/s", SIM_DIM_FLOP_RATE, 1e12}, {"PFLOP/s", SIM_DIM_FLOP_RATE, 1e15},
    {"EFLOP/s", SIM_DIM_FLOP_RATE, 1e18},
    {"FLOPS", SIM_DIM_FLOP_RATE, 1}, {"GFLOPS", SIM_DIM_FLOP_RATE, 1e9},
    {"TFLOPS", SIM_DIM_FLOP_RATE, 1e12}, {"PFLOPS", SIM_DIM_FLOP_RATE, 1e15},
    {"EFLOPS", SIM_DIM_FLOP_RATE, 1e18},

    {"/s", SIM_DIM_FREQUENCY, 1}, {"/min", SIM_DIM_FREQUENCY, 1.0 / 60},
    {"/h", SIM_DIM_FREQUENCY, 1.0 / 3600}, {"/d", SIM_DIM_FREQUENCY, 1.0 / 86400},
    {"/week", SIM_DIM_FREQUENCY, 1.0 / 604800},
    {"/year", SIM_DIM_FREQUENCY, 1.0 / 31536000}, {"Hz", SIM_DIM_FREQUENCY, 1},

    {"", SIM_DIM_COUNT, 1}, {"K", SIM_DIM_COUNT, 1e3}, {"M", SIM_DIM_COUNT, 1e6},
    {"B", SIM_DIM_COUNT, 1e9}, /* billion: "405B" parameters */
    {"G", SIM_DIM_COUNT, 1e9}, {"T", SIM_DIM_COUNT, 1e12}, {"P", SIM_DIM_COUNT, 1e15},

    {"", SIM_DIM_FRACTION, 1}, {"%", SIM_DIM_FRACTION, 0.01},
};

#define N_UNIT_CASES (sizeof unit_cases / sizeof unit_cases[0])

/* parse, expecting success */
static double parse_ok(const char *text, enum sim_dim dim, int *ok)
{
    double v = -12345.0;
    char why[256] = "";
    *ok = sim_units_parse(text, dim, &v, why, sizeof why) == 0;
    if (!*ok)
        fprintf(stderr, "  parse of '%s' as %s failed: %s\n", text, sim_dim_name(dim), why);
    return v;
}

static void test_every_unit(void)
{
    static const char *const numbers[] = {"2", "2.5", "1e-3", "0"};
    static const double values[] = {2, 2.5, 1e-3, 0};
    for (size_t i = 0; i < N_UNIT_CASES; i++) {
        const struct unit_case *u = &unit_cases[i];
        for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++) {
            char text[64];
            int ok;
            /* attached and with a space */
            snprintf(text, sizeof text, "%s%s", numbers[k], u->symbol);
            double v = parse_ok(text, u->dim, &ok);
            CHECK(ok);
            CHECK_REL(v, values[k] * u->factor, 1e-15);
            snprintf(text, sizeof text, "%s %s", numbers[k], u->symbol);
            v = parse_ok(text, u->dim, &ok);
            CHECK(ok);
            CHECK_REL(v, values[k] * u->factor, 1e-15);
        }
    }
}

/* every symbol sim_dim_units lists is in unit_cases, and the other way round */
static void test_table_is_complete(void)
{
    for (int d = 0; d < SIM_DIM_COUNT_OF_DIMS; d++) {
        char buf[512];
        sim_dim_units((enum sim_dim)d, buf, sizeof buf);
        size_t n_listed = 0;
        for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
            const char *sym = strcmp(tok, "(none)") == 0 ? "" : tok;
            int found = 0;
            for (size_t i = 0; i < N_UNIT_CASES; i++)
                found |= unit_cases[i].dim == (enum sim_dim)d &&
                         strcmp(unit_cases[i].symbol, sym) == 0;
            if (!found)
                fprintf(stderr, "  unit '%s' (%s) has no test case\n", tok,
                        sim_dim_name((enum sim_dim)d));
            CHECK(found);
            n_listed++;
        }
        size_t n_cases = 0;
        for (size_t i = 0; i < N_UNIT_CASES; i++)
            n_cases += unit_cases[i].dim == (enum sim_dim)d;
        CHECK_INT_EQ(n_listed, n_cases);
    }
}

static void test_examples(void)
{
    static const struct {
        const char *text;
        enum sim_dim dim;
        double si;
    } cases[] = {
        {"400Gbps", SIM_DIM_BANDWIDTH, 50e9},
        {"3.35TB/s", SIM_DIM_BANDWIDTH, 3.35e12},
        {"900 GB/s", SIM_DIM_BANDWIDTH, 900e9},
        {"700W", SIM_DIM_POWER, 700},
        {"30min", SIM_DIM_TIME, 1800},
        {"15.6T", SIM_DIM_COUNT, 15.6e12},
        {"405B", SIM_DIM_COUNT, 405e9},
        {"405B", SIM_DIM_DATA, 405}, /* as a data size, B is bytes */
        {"40%", SIM_DIM_FRACTION, 0.4},
        {"2e-5/h", SIM_DIM_FREQUENCY, 2e-5 / 3600},
        {"1.5 GiB", SIM_DIM_DATA, 1.5 * 1073741824.0},
        {" 10 s ", SIM_DIM_TIME, 10},
        {"\t7h\n", SIM_DIM_TIME, 25200},
        {"+3 s", SIM_DIM_TIME, 3},
        {".5 s", SIM_DIM_TIME, 0.5},
        {"1E3ms", SIM_DIM_TIME, 1},
        {"989.5 TFLOP/s", SIM_DIM_FLOP_RATE, 989.5e12},
        {"1EFLOP/s", SIM_DIM_FLOP_RATE, 1e18}, /* E starts the unit, not an exponent */
        {"1e3EFLOPS", SIM_DIM_FLOP_RATE, 1e21},
        {"1.2 kWh", SIM_DIM_ENERGY, 4.32e6},
        {"0.25 /d", SIM_DIM_FREQUENCY, 0.25 / 86400},
        {"64", SIM_DIM_COUNT, 64},      /* bare counts and fractions are fine */
        {"1e6", SIM_DIM_COUNT, 1e6},
        {"0.4", SIM_DIM_FRACTION, 0.4},
        {"100 %", SIM_DIM_FRACTION, 1},
        {"1e300 s", SIM_DIM_TIME, 1e300},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int ok;
        double v = parse_ok(cases[i].text, cases[i].dim, &ok);
        CHECK(ok);
        CHECK_REL(v, cases[i].si, 1e-15);
    }
}

static void test_rejections(void)
{
    static const struct {
        const char *text;
        enum sim_dim dim;
        const char *phrase; /* the message must contain this */
    } cases[] = {
        {"", SIM_DIM_TIME, "empty value; expected a duration"},
        {"", SIM_DIM_COUNT, "empty value"},
        {"   \t ", SIM_DIM_DATA, "empty value; expected a data size"},
        {"abc", SIM_DIM_TIME, "does not start with a number"},
        {"s", SIM_DIM_TIME, "does not start with a number"},
        {"s 10", SIM_DIM_TIME, "does not start with a number"},
        {"- 5 s", SIM_DIM_TIME, "does not start with a number"},
        {".s", SIM_DIM_TIME, "does not start with a number"},
        {"%", SIM_DIM_FRACTION, "does not start with a number"},
        /* a number without unit, for every dimension that has units */
        {"10", SIM_DIM_TIME, "number without unit; a duration needs one of: ns us ms s min h d"},
        {"10", SIM_DIM_DATA, "number without unit; a data size needs one of: B KB"},
        {"10", SIM_DIM_BANDWIDTH, "number without unit; a bandwidth needs one of: B/s"},
        {"10", SIM_DIM_POWER, "number without unit; a power needs one of: W kW MW GW"},
        {"10", SIM_DIM_ENERGY, "needs one of: J kJ MJ GJ Wh kWh"},
        {"10", SIM_DIM_FLOP_RATE, "number without unit; a compute rate needs one of: FLOP/s"},
        {"10", SIM_DIM_FREQUENCY, "number without unit; a rate needs one of: /s"},
        {" 1.5  ", SIM_DIM_TIME, "number without unit"},
        /* unknown units, including trailing garbage */
        {"10 parsecs", SIM_DIM_TIME, "unknown unit 'parsecs'; a duration takes one of:"},
        {"10 s x", SIM_DIM_TIME, "unknown unit 's x'"},
        {"10s;", SIM_DIM_TIME, "unknown unit 's;'"},
        {"10 s 5", SIM_DIM_TIME, "unknown unit"},
        {"1.2.3 s", SIM_DIM_TIME, "unknown unit '.3 s'"},
        {"10 S", SIM_DIM_TIME, "unknown unit 'S'"}, /* symbols are case-sensitive */
        {"10 gbps", SIM_DIM_BANDWIDTH, "unknown unit 'gbps'"},
        {"5 k", SIM_DIM_COUNT, "unknown unit 'k'"},
        /* units of another dimension name that dimension */
        {"400Gbps", SIM_DIM_TIME, "'Gbps' is a bandwidth unit; expected a duration"},
        {"700 W", SIM_DIM_ENERGY, "'W' is a power unit; expected a"},
        {"5 GB", SIM_DIM_BANDWIDTH, "'GB' is a data size unit; expected a bandwidth"},
        {"1 h", SIM_DIM_FREQUENCY, "'h' is a duration unit"},
        {"2 /h", SIM_DIM_TIME, "'/h' is a rate unit"},
        {"3 TFLOPS", SIM_DIM_POWER, "'TFLOPS' is a compute rate unit"},
        {"40%", SIM_DIM_COUNT, "'%' is a fraction unit"},
        {"15.6T", SIM_DIM_DATA, "'T' is a count unit"},
        {"2 Wh", SIM_DIM_POWER, "energy unit; expected a power"},
        /* numbers strtod would take but a scenario must not */
        {"0x10s", SIM_DIM_TIME, "hexadecimal numbers are not accepted"},
        {"0X1p3 s", SIM_DIM_TIME, "hexadecimal"},
        {"-0x10 s", SIM_DIM_TIME, "hexadecimal"},
        {"0x10", SIM_DIM_COUNT, "hexadecimal"},
        {"infs", SIM_DIM_TIME, "does not start with a number"},
        {"inf s", SIM_DIM_TIME, "does not start with a number"},
        {"-inf s", SIM_DIM_TIME, "does not start with a number"},
        {"INFINITY", SIM_DIM_COUNT, "does not start with a number"},
        {"nan s", SIM_DIM_TIME, "does not start with a number"},
        {"NaN", SIM_DIM_FRACTION, "does not start with a number"},
        /* overflow, of the number or after scaling */
        {"1e400 s", SIM_DIM_TIME, "out of range"},
        {"-1e400 s", SIM_DIM_TIME, "out of range"},
        {"1e300 EFLOP/s", SIM_DIM_FLOP_RATE, "out of range"},
        {"1e308 year", SIM_DIM_TIME, "out of range"},
        /* underflow would otherwise read as zero */
        {"1e-400 s", SIM_DIM_TIME, "out of range"},
        /* the article follows the dimension */
        {"5", SIM_DIM_ENERGY, "an energy needs one of"},
        {"5 s", SIM_DIM_ENERGY, "'s' is a duration unit; expected an energy"},
        /* an absurdly long unit */
        {"1 abcdefghijklmnopqrstuvwxyzabcdefghijklmnop", SIM_DIM_TIME, "unit too long"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v = -12345.0;
        char why[512] = "";
        int rc = sim_units_parse(cases[i].text, cases[i].dim, &v, why, sizeof why);
        CHECK(rc != 0);
        CHECK(v == -12345.0); /* output untouched on failure */
        CHECK_CONTAINS(why, cases[i].phrase);
        CHECK(strchr(why, '\n') == NULL);
        if (rc == 0 || !strstr(why, cases[i].phrase))
            fprintf(stderr, "  case '%s' (%s): rc %d, why \"%s\"\n", cases[i].text,
                    sim_dim_name(cases[i].dim), rc, why);
    }

    /* NULL text, NULL or tiny why buffer, unknown dimension */
    double v = -1.0;
    char why[256] = "";
    CHECK(sim_units_parse(NULL, SIM_DIM_TIME, &v, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "missing value");
    CHECK(sim_units_parse("10", SIM_DIM_TIME, &v, NULL, 0) != 0);
    CHECK(sim_units_parse("10 parsecs", SIM_DIM_TIME, &v, NULL, 123) != 0);
    CHECK(sim_units_parse("", SIM_DIM_TIME, &v, NULL, 0) != 0);
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    CHECK(sim_units_parse("10", SIM_DIM_TIME, &v, tiny, sizeof tiny) != 0);
    CHECK_STR_EQ(tiny, "number ");
    memset(tiny, 'x', sizeof tiny);
    CHECK(sim_units_parse("10 parsecs", SIM_DIM_TIME, &v, tiny, 1) != 0);
    CHECK_INT_EQ(tiny[0], '\0');
    CHECK_INT_EQ(tiny[1], 'x');
    CHECK(sim_units_parse("10 s", SIM_DIM_COUNT_OF_DIMS, &v, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "unknown dimension");
    CHECK(v == -1.0);
    /* a failed parse after a good one leaves the good value alone */
    CHECK(sim_units_parse("10 s", SIM_DIM_TIME, &v, why, sizeof why) == 0);
    CHECK(v == 10.0);
    CHECK(sim_units_parse("10 W", SIM_DIM_TIME, &v, why, sizeof why) != 0);
    CHECK(v == 10.0);
}

static void test_dim_names_and_units(void)
{
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_TIME), "duration");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_DATA), "data size");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_BANDWIDTH), "bandwidth");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_POWER), "power");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_ENERGY), "energy");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_FLOP_RATE), "compute rate");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_FREQUENCY), "rate");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_COUNT), "count");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_FRACTION), "fraction");
    CHECK_STR_EQ(sim_dim_name(SIM_DIM_COUNT_OF_DIMS), "?");
    CHECK_STR_EQ(sim_dim_name((enum sim_dim)-1), "?");

    char buf[256];
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_TIME, buf, sizeof buf), "ns us ms s min h d week year");
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_POWER, buf, sizeof buf), "W kW MW GW");
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_COUNT, buf, sizeof buf), "(none) K M B G T P");
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_FRACTION, buf, sizeof buf), "(none) %");
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_FREQUENCY, buf, sizeof buf),
                 "/s /min /h /d /week /year Hz");
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_COUNT_OF_DIMS, buf, sizeof buf), "");
    CHECK(sim_dim_units(SIM_DIM_TIME, buf, sizeof buf) == buf);

    /* a short buffer keeps whole symbols only and stays terminated */
    char small[6];
    memset(small, 'x', sizeof small);
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_TIME, small, sizeof small), "ns us");
    memset(small, 'x', sizeof small);
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_TIME, small, 5), "ns");
    memset(small, 'x', sizeof small);
    CHECK_STR_EQ(sim_dim_units(SIM_DIM_TIME, small, 1), "");
    memset(small, 'x', sizeof small);
    sim_dim_units(SIM_DIM_TIME, small, 0);
    CHECK_INT_EQ(small[0], 'x'); /* size 0: nothing written */
}

int main(void)
{
    test_every_unit();
    test_table_is_complete();
    test_examples();
    test_rejections();
    test_dim_names_and_units();
    return check_report();
}
