/* campaign_checks.h - the campaign tests' conservation law (models/campaign.h):
 * elapsed = productive compute + rework + checkpoint writes + aborted writes
 * + restarts (waits included) + the persist, elastic, straggler and degraded
 * stretches + maintenance, to 1e-9. Include after check.h. */
#ifndef DCSIM_TESTS_CAMPAIGN_CHECKS_H
#define DCSIM_TESTS_CAMPAIGN_CHECKS_H

#include "campaign.h"

static void check_conservation(const campaign_result *r)
{
    double sum = r->compute_time_s + r->rework_s + r->checkpoint_time_s +
                 r->checkpoint_aborted_s + r->restart_time_s + r->persist_slowdown_s +
                 r->elastic_slowdown_s + r->straggler_slowdown_s + r->degraded_slowdown_s +
                 r->throttle_slowdown_s +
                 r->maintenance_time_s;
    CHECK_REL(sum, r->time_to_train_s, 1e-9);
    CHECK(r->fabric_wait_s >= 0 && r->fabric_wait_s <= r->restart_time_s * (1 + 1e-12));
}

#endif
