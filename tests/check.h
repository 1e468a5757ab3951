/* check.h - the assertion header every dcsim unit test uses.
 *
 * CHECK(cond) and the CHECK_* forms report file:line and the values, count
 * failures, and keep going so one run shows every broken assertion.
 * main() ends with `return check_report();` which prints a summary line
 * and returns non-zero when anything failed.
 */
#ifndef DCSIM_TESTS_CHECK_H
#define DCSIM_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_INT_EQ(a, b)                                                           \
    do {                                                                             \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);              \
        check_count++;                                                               \
        if (check_a_ != check_b_) {                                                  \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK_INT_EQ failed: %s = %lld, %s = %lld\n",    \
                    __FILE__, __LINE__, #a, check_a_, #b, check_b_);                 \
        }                                                                            \
    } while (0)

/* |a - b| <= tol (absolute) */
#define CHECK_NEAR(a, b, tol)                                                        \
    do {                                                                             \
        double check_a_ = (double)(a), check_b_ = (double)(b), check_t_ = (tol);    \
        check_count++;                                                               \
        if (!(fabs(check_a_ - check_b_) <= check_t_)) {                              \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.17g, %s = %.17g, "     \
                    "|diff| = %.3g > %.3g\n", __FILE__, __LINE__, #a, check_a_, #b,  \
                    check_b_, fabs(check_a_ - check_b_), check_t_);                  \
        }                                                                            \
    } while (0)

/* |a - b| <= rel * |b| */
#define CHECK_REL(a, b, rel) CHECK_NEAR(a, b, (rel) * fabs((double)(b)))

#define CHECK_STR_EQ(a, b)                                                           \
    do {                                                                             \
        const char *check_a_ = (a), *check_b_ = (b);                                 \
        check_count++;                                                               \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {             \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK_STR_EQ failed:\n  %s = \"%s\"\n  %s = \"%s\"\n", \
                    __FILE__, __LINE__, #a, check_a_ ? check_a_ : "(null)", #b,      \
                    check_b_ ? check_b_ : "(null)");                                 \
        }                                                                            \
    } while (0)

/* haystack contains needle */
#define CHECK_CONTAINS(hay, needle)                                                  \
    do {                                                                             \
        const char *check_h_ = (hay), *check_n_ = (needle);                          \
        check_count++;                                                               \
        if (!check_h_ || !strstr(check_h_, check_n_)) {                              \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK_CONTAINS failed: \"%s\" not in \"%s\"\n",  \
                    __FILE__, __LINE__, check_n_, check_h_ ? check_h_ : "(null)");   \
        }                                                                            \
    } while (0)

static inline int check_report(void)
{
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
