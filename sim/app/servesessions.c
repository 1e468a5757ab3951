/* servesessions.c - the sessions' figures of `dcsim serve` (servesessions.h;
 * docs/serving.md "Multi-turn sessions"). Only runs with sessions of more
 * than one turn print them: a run without is what it was, byte for byte. */
#include "servesessions.h"

#include <stdio.h>

const char *const serve_session_names[SERVE_SESSION_COLS] = {
    "sessions", "followups", "followups_admitted", "followup_hits",
    "followup_context_tokens", "followup_hit_tokens", "sessions_finished", "sessions_cut",
    "turns_mean", "hit_tokens_share", "turns_truncated", "truncated_tokens", "turns_refused",
    "ttft_first_mean_s", "ttft_first_p50_s", "ttft_first_p90_s", "ttft_first_p99_s",
    "ttft_followup_mean_s", "ttft_followup_p50_s", "ttft_followup_p90_s",
    "ttft_followup_p99_s"};
const char *const serve_session_units[SERVE_SESSION_COLS] = {
    "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
    "s", "s", "s", "s", "s", "s", "s", "s"};

void serve_session_values(const serve_result *r, double *v)
{
    double head[] = {(double)r->sessions, (double)r->followups, (double)r->followups_admitted,
                     (double)r->followup_hits, r->followup_context_tokens,
                     r->followup_hit_tokens, (double)r->sessions_finished,
                     (double)r->sessions_cut, r->turns_mean, r->hit_tokens_share,
                     (double)r->turns_truncated, r->truncated_tokens,
                     (double)r->turns_refused};
    int k = 0;
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        v[k++] = head[i];
    const serve_latency *l[2] = {&r->ttft_first, &r->ttft_followup};
    for (int g = 0; g < 2; g++) {
        v[k++] = l[g]->mean_s;
        for (int q = 0; q < SERVE_QUANTILES; q++)
            v[k++] = l[g]->q_s[q];
    }
}

void serve_session_print_setup(const serve_config *c)
{
    char turns[96];
    if (c->session_turns_dist == SERVE_TURNS_FIXED)
        snprintf(turns, sizeof turns, "%.0f turns", c->session_turns);
    else if (c->session_max_turns > 0)
        snprintf(turns, sizeof turns, "geometric turns, mean %.4g, at most %.0f (mean %.4g with "
                 "the cap)", c->session_turns, c->session_max_turns, serve_mean_turns(c));
    else
        snprintf(turns, sizeof turns, "geometric turns, mean %.4g", c->session_turns);
    printf("sessions   %s a session, think time %s%.4g s; a follow-up's prompt is the context "
           "and a new prompt draw; context cache %s\n", turns,
           c->think_dist == SERVE_THINK_EXPONENTIAL ? "exponential, mean " : "", c->think_s,
           c->session_cache ? "on" : "off");
    printf("           context window %.0f tokens (%s): a follow-up over it is "
           "%s\n", serve_session_window(c),
           c->session_window > 0 ? "window" : "the model's seq-len",
           c->session_truncate == SERVE_TRUNC_OLDEST
               ? "truncated, its oldest conversation tokens cut (truncate oldest)"
               : "refused, ending its session (truncate refuse)");
}

void serve_session_print_result(const serve_config *c, const serve_result *r)
{
    (void)c;
    printf("sessions   %llu sessions, %llu follow-up turns of %llu requests; %llu of %llu "
           "admitted follow-ups found their context cached; %.6g of their %.6g context tokens "
           "not prefilled (%.2f%%)\n", (unsigned long long)r->sessions,
           (unsigned long long)r->followups, (unsigned long long)r->arrived,
           (unsigned long long)r->followup_hits, (unsigned long long)r->followups_admitted,
           r->followup_hit_tokens, r->followup_context_tokens, 100 * r->hit_tokens_share);
    printf("           %llu finished every turn, %llu ended by a dropped turn; %.4g turns a "
           "session; %llu follow-ups truncated (%.6g tokens cut), %llu refused (context "
           "window)\n", (unsigned long long)r->sessions_finished,
           (unsigned long long)r->sessions_cut, r->turns_mean,
           (unsigned long long)r->turns_truncated, r->truncated_tokens,
           (unsigned long long)r->turns_refused);
    const serve_latency *l[2] = {&r->ttft_first, &r->ttft_followup};
    static const char *const what[2] = {"first turns", "follow-ups "};
    for (int g = 0; g < 2; g++)
        printf("           TTFT of %s mean %9.4g ms  P50 %9.4g  P90 %9.4g  P99 %9.4g ms\n",
               what[g], l[g]->mean_s * 1e3, l[g]->q_s[0] * 1e3, l[g]->q_s[1] * 1e3,
               l[g]->q_s[2] * 1e3);
}

void serve_session_json(cJSON *root, const serve_config *c, const serve_result *r)
{
    cJSON *o = cJSON_AddObjectToObject(root, "sessions");
    cJSON_AddStringToObject(o, "turns_distribution", serve_turns_dist_name(c->session_turns_dist));
    cJSON_AddStringToObject(o, "think_distribution", serve_think_dist_name(c->think_dist));
    cJSON_AddStringToObject(o, "truncate", serve_truncate_name(c->session_truncate));
    const struct { const char *name; double value; } v[] = {
        {"turns", c->session_turns}, {"max_turns", c->session_max_turns},
        {"mean_turns", serve_mean_turns(c)}, {"think_time_s", c->think_s},
        {"cache", c->session_cache}, {"context_window", serve_session_window(c)}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(o, v[i].name, v[i].value);
    double f[SERVE_SESSION_COLS];
    serve_session_values(r, f);
    for (int k = 0; k < SERVE_SESSION_COLS; k++)
        cJSON_AddNumberToObject(o, serve_session_names[k], f[k]);
}
