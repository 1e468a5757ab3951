/* event_kinds.h - every engine event kind the models schedule: its number
 * and what the event is. The engine folds the kind into the event digest
 * (engine.h) and traces, golden files and users' notes record digests, so a
 * number never changes and is never reused: append only. Documented in
 * docs/trace-format.md ("Engine event kinds"), which
 * tests/models/test_registries.c checks against this list both ways.
 *
 * The models own this numbering, not the engine: the engine only hashes a
 * kind and sits below every model, so it must not know its users. Any tier
 * that schedules events (a packet network, a cluster scheduler) adds its
 * kinds here, in a free range of its own.
 */
#ifndef DCSIM_MODELS_EVENT_KINDS_H
#define DCSIM_MODELS_EVENT_KINDS_H

/* X(name, number, meaning): one line per kind. Ranges: campaign 1-39,
 * flow model 40-59, collectives on the flow model 60-79, the step tier's
 * concurrent iteration 80-99, the packet tier 100-119, serving 130-139, the
 * cluster scheduler 140-149. */
#define MODEL_EVENT_KINDS(X)                                                                \
    X(KIND_SEGMENT_END, 1, "campaign: a compute segment reaches its checkpoint iteration")  \
    X(KIND_CHECKPOINT_END, 2, "campaign: a checkpoint write (or async snapshot) ends")       \
    X(KIND_FAILURE, 3, "campaign: a unit, switch or cable fails")                            \
    X(KIND_RESTART_END, 4, "campaign: a restart ends, compute resumes")                      \
    X(KIND_REPAIR, 5, "campaign: repaired nodes return to the spare pool")                   \
    X(KIND_PERSIST_END, 6, "campaign: an async checkpoint is durable")                       \
    X(KIND_MAINTENANCE, 7, "campaign: a maintenance window opens or ends")                   \
    X(KIND_SDC_FOUND, 8, "campaign: a silent data corruption is found")                      \
    X(KIND_STRAGGLER, 9, "campaign: a node turns slow")                                      \
    X(KIND_DRAIN_DUE, 10, "campaign: a slow node's drain comes due")                         \
    X(KIND_FABRIC_REPAIR, 11, "campaign: a network part down or slow is repaired")            \
    X(KIND_FLAP, 12, "campaign: a flapping cable goes down, comes back up or is repaired")   \
    X(KIND_THROTTLE, 13, "campaign: an hour boundary where thermal throttling begins or ends") \
    X(KIND_FLOW_DONE, 40, "flow model: a flow's last byte leaves")                           \
    X(KIND_FLOW_DELIVER, 41, "flow model: a finished flow is delivered (after its latency)") \
    X(KIND_FLOW_RECOMPUTE, 42, "flow model: the max-min rates are recomputed")               \
    X(KIND_NC_PHASE_DONE, 60, "collectives: a phase of a collective's plan ends")           \
    X(KIND_STEP_TASK_END, 80, "step tier: a forward or backward of a pipeline stage ends")   \
    X(KIND_STEP_BUCKET_START, 81, "step tier: a DP gradient bucket starts on every group")   \
    X(KIND_STEP_OPTIMIZER_END, 82, "step tier: a stage's optimizer step ends")             \
    X(KIND_STEP_SAMPLE, 83, "step tier: link utilisation is sampled for one time bin")     \
    X(KIND_STEP_COLL_START, 84, "step tier: a task segment's TP, CP or EP flows start")    \
    X(KIND_STEP_SEGMENT_TIME, 85, "step tier: a task segment's isolated time is up")      \
    X(KIND_PKT_TX_DONE, 100, "packet tier: a link finishes serialising a packet")           \
    X(KIND_PKT_ARRIVE, 101, "packet tier: a packet arrives at the far end of a link")       \
    X(KIND_PKT_CREDIT, 102, "packet tier: an InfiniBand credit reaches the sender")          \
    X(KIND_PKT_PAUSE, 103, "packet tier: a PFC PAUSE reaches the upstream transmitter")     \
    X(KIND_PKT_RESUME, 104, "packet tier: a PFC RESUME reaches the upstream transmitter")   \
    X(KIND_PKT_PACE, 105, "packet tier: DCQCN pacing hands a message's next packet to the NIC") \
    X(KIND_PKT_CNP, 106, "packet tier: a DCQCN CNP reaches the sender")                     \
    X(KIND_PKT_DCQCN_ALPHA, 107, "packet tier: a DCQCN alpha timer expires")                \
    X(KIND_PKT_DCQCN_INCREASE, 108, "packet tier: a DCQCN rate-increase timer expires")      \
    X(KIND_PKT_STALL_END, 109, "packet tier: a stalled host drains its NIC buffer")           \
    X(KIND_PKT_BENCH_SEND, 110, "packet tier phenomena: a message sent later than t = 0 starts") \
    X(KIND_PKT_ACK, 111, "packet tier, lossy RoCE: an ACK reaches the sender")                \
    X(KIND_PKT_NACK, 112, "packet tier, lossy RoCE: a NACK reaches the sender")               \
    X(KIND_PKT_RTO, 113, "packet tier, lossy RoCE: a message's retransmission timer expires") \
    X(KIND_PKT_BECN, 115, "packet tier: an IB congestion-control BECN reaches the sender")      \
    X(KIND_PKT_IBCC_TIMER, 116, "packet tier: an IB congestion-control CCTI timer expires") \
    X(KIND_PKT_SHARP_EMIT, 117, "packet tier: a SHARP switch's rate-limited reduction sends a packet on") \
    X(KIND_SERVE_ARRIVAL, 130, "serving: a request arrives")                                    \
    X(KIND_SERVE_ITERATION, 131, "serving: a replica's iteration ends")                         \
    X(KIND_SERVE_START, 132, "serving: an idle replica starts an iteration")                  \
    X(KIND_SERVE_TRANSFER, 133, "serving: a request's KV reaches its decode replica")        \
    X(KIND_SERVE_TURN, 134, "serving: a session's next turn arrives after its think time")   \
    X(KIND_CLUSTER_ARRIVAL, 140, "cluster: a job is submitted")                                 \
    X(KIND_CLUSTER_JOB_END, 141, "cluster: a job ends and frees its GPUs")                      \
    X(KIND_CLUSTER_SCHEDULE, 142, "cluster: the scheduler's pass after an arrival or an end")  \
    X(KIND_CLUSTER_RETIME, 143, "cluster: the running jobs' paces after a start or an end") \
    X(KIND_CLUSTER_CKPT_END, 144, "cluster: an evicted job's checkpoint is written")            \
    X(KIND_CLUSTER_FAILURE, 145, "cluster: a node fails")                                       \
    X(KIND_CLUSTER_REPAIR, 146, "cluster: a failed node is repaired")                           \
    X(KIND_CLUSTER_WINDOW, 147, "cluster: a maintenance window starts or ends")

enum model_event_kind {
#define MODEL_EVENT_KIND_ENUM(name, number, meaning) name = number,
    MODEL_EVENT_KINDS(MODEL_EVENT_KIND_ENUM)
#undef MODEL_EVENT_KIND_ENUM
};

/* 1 for a kind listed above, else 0. Also the static uniqueness check: a
 * number listed twice is a duplicate case label, which does not compile. */
static inline int model_event_kind_is_known(unsigned kind)
{
    switch (kind) {
#define MODEL_EVENT_KIND_CASE(name, number, meaning) case number:
        MODEL_EVENT_KINDS(MODEL_EVENT_KIND_CASE)
#undef MODEL_EVENT_KIND_CASE
        return 1;
    default:
        return 0;
    }
}

#endif
