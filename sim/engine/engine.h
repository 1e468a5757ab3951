/* engine.h - the discrete-event loop shared by the step and campaign tiers.
 *
 * Time is double seconds and never goes backwards: an event may not be
 * scheduled before now. Events at equal times fire by priority, then in
 * insertion order (queue.h). The engine keeps a running 64-bit digest of every
 * fired event (time, kind, payload) so two runs can be compared with one
 * number; kinds, not handler addresses, enter the digest, so it does not
 * depend on where the binary was loaded.
 */
#ifndef DCSIM_SIM_ENGINE_H
#define DCSIM_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"

typedef struct sim_engine sim_engine;

/* Called every `every` fired events; return non-zero to stop the run (the
 * engine uses this for progress reports and for SIGINT). */
typedef int (*sim_poll_fn)(sim_engine *eng, void *ctx);

enum sim_run_status {
    SIM_RUN_EMPTY = 0,   /* no event left */
    SIM_RUN_UNTIL,       /* next event is later than the horizon */
    SIM_RUN_STOPPED,     /* a handler called sim_stop() */
    SIM_RUN_POLLED_STOP, /* the poll function asked to stop */
    SIM_RUN_FAILED       /* out of memory, or an event scheduled in the past */
};

sim_engine *sim_engine_create(void);
void sim_engine_destroy(sim_engine *eng); /* NULL is a no-op */

/* Back to the state sim_engine_create returns (time 0, no events, fresh
 * digest and counters, no poll function, no failure), keeping the event
 * pool's memory: a run on a reset engine fires the same events with the same
 * digest as on a new one, without re-growing (and re-faulting) the pool.
 * Ids from before the reset are stale. */
void sim_engine_reset(sim_engine *eng);

/* Schedule fn(ctx, data) at absolute time_s (>= now) or after delay_s (>= 0).
 * priority 0..255, lower fires first at equal times; kind is folded into the
 * digest. Returns the id, or 0 on failure (then sim_run reports SIM_RUN_FAILED
 * and sim_engine_failure() says why). */
sim_event_id sim_schedule_at(sim_engine *eng, double time_s, unsigned priority, unsigned kind,
                             sim_handler_fn fn, void *ctx, uint64_t data);
sim_event_id sim_schedule_in(sim_engine *eng, double delay_s, unsigned priority, unsigned kind,
                             sim_handler_fn fn, void *ctx, uint64_t data);

/* Cancel a pending event: 1 if removed, 0 if it already fired, is firing now
 * or was cancelled before. O(1) (the entry is dropped when it reaches the
 * head, or in a purge; queue.h). */
int sim_cancel(sim_engine *eng, sim_event_id id);

/* Fire events in order until none is left, the next is later than until_s,
 * a handler calls sim_stop, or the poll function says stop. now advances to
 * each event's time; it is not moved to until_s. */
enum sim_run_status sim_run(sim_engine *eng, double until_s);

/* For a model that keeps its own future-event set and feeds the engine one
 * event at a time (the packet tier's pump, models/packet_queue.c): called
 * from inside a handler that sim_run is firing, fire the model's next event
 * (time_s, priority, kind, data) inline when the engine would fire it next
 * anyway: no pending event at or before time_s, within the run's horizon,
 * no stop or failure, not at a poll point. Then now, the digest and the
 * fired count advance exactly as sim_run's would for that event, 1 is
 * returned and the caller runs the event's handler itself; 0: nothing
 * changed, the caller schedules it as usual. */
int sim_fire_inline(sim_engine *eng, double time_s, unsigned priority, unsigned kind,
                    uint64_t data);

void sim_stop(sim_engine *eng);
void sim_engine_set_poll(sim_engine *eng, sim_poll_fn fn, void *ctx, uint64_t every);

double sim_now(const sim_engine *eng);
uint64_t sim_digest(const sim_engine *eng);
uint64_t sim_events_fired(const sim_engine *eng);
size_t sim_pending(const sim_engine *eng);
/* Why the last SIM_RUN_FAILED happened ("" if it did not). */
const char *sim_engine_failure(const sim_engine *eng);
/* How often the event pool grew (for the no-malloc-per-event test). */
size_t sim_engine_pool_grows(const sim_engine *eng);

/* Bytes the event queue has allocated (bench_engine's bytes_per_pending). */
size_t sim_engine_queue_bytes(const sim_engine *eng);

#endif
