/* simgrid_oracle.c - run a flow set through SimGrid's max-min solver.
 *
 * Platform: one Full-routing zone with a receiver host "r", one sender host
 * "s<f>" per flow and one link "l<i>" per dcsim directed link (same
 * capacity, latency 0). The route s<f> -> r (symmetrical="NO") is exactly
 * flow f's links, so two flows between the same dcsim hosts may take
 * different paths, as ECMP and adaptive routing let them. Hosts have no
 * links of their own; CPU speed plays no part (comms only).
 *
 * Actors: one sender per flow on s<f> sleeps until the flow's start and then
 * puts its bytes into mailbox m<f> (blocking: the put returns when the
 * transfer completes, which is the flow's completion time); one receiver on
 * r posts every get at time 0, so a transfer starts exactly when its sender
 * puts.
 *
 * SimGrid's engine can be created once per process, so each call forks; the
 * child writes the completion times to a pipe.
 */
#include "simgrid_oracle.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

/* Pure max-min: what each option does (SimGrid 3.32 --cfg names).
 *  - network/model:CM02: the LV08 default multiplies latencies by 13.01 and
 *    bandwidths by 0.97 and weights each flow by weight-S / bandwidth summed
 *    over its route (RTT-unfair TCP sharing); CM02 is the plain fluid model.
 *    Its factors are also set explicitly, in case a default moves:
 *    latency-factor 1, bandwidth-factor 1 (a link gives its full capacity;
 *    0.97 alone makes the durations differ by up to 58 %), weight-S 0.
 *  - Every link has latency 0, so no flow waits before it starts sending,
 *    and CM02 gives a flow without latency the sharing weight 1 whatever
 *    weight-S says (measured: weight-S 20537 changes nothing here).
 *  - network/TCP-gamma:0: the TCP window bound rate <= gamma / (2 latency)
 *    applies only to routes with latency, of which there are none here; set
 *    so that no window could cap a flow.
 *  - network/crosstraffic:0: otherwise every transfer also loads the reverse
 *    route with 0.05 x its bytes (TCP acks). This platform has no route
 *    r -> s<f>, so there is nothing to load either way (measured: no
 *    change); off, so that stays true if routes become symmetrical.
 *  - surf/precision (SimGrid's help: the precision of simulation-time
 *    updates, in seconds) and maxmin/precision (of the sharing, scaled by
 *    a link's capacity: at 1 every flow starves): numerical thresholds.
 *    1e-12 for both leaves rounding as the only difference; the defaults
 *    (1e-9, 1e-5) give the same answers on these cases, while
 *    surf/precision 1e-6 already moves durations by up to 6e-3.
 *  - network/optim:Lazy (the default) updates only the flows whose rates
 *    change; Full, which recomputes all, agrees with dcsim within 3e-13.
 * Contexts: SimGrid's own stack switching (raw) normally; threads in a
 * sanitizer build (SG_ORACLE_THREADS, set by CMake), because switching
 * stacks inside an uninstrumented library makes AddressSanitizer warn of
 * false reports. Threads take about 3 x the time (a futex hand-off per
 * switch). */
#ifdef SG_ORACLE_THREADS
#define SG_CONTEXTS "--cfg=contexts/factory:thread"
#else
#define SG_CONTEXTS "--cfg=contexts/factory:raw"
#endif
static const char *const sg_args[] = {
    "test_flow_simgrid",
    "--cfg=network/model:CM02",
    "--cfg=network/latency-factor:1",
    "--cfg=network/bandwidth-factor:1",
    "--cfg=network/weight-S:0",
    "--cfg=network/TCP-gamma:0",
    "--cfg=network/crosstraffic:0",
    "--cfg=maxmin/precision:1e-12",
    "--cfg=surf/precision:1e-12",
    "--cfg=network/optim:Lazy",
    SG_CONTEXTS,
    "--log=root.thresh:warning",
};

typedef struct sender {
    const sg_flow_set *s;
    double *done_s;
    uint32_t f;
} sender;

static void set_why(char *why, size_t why_size, const char *fmt, ...)
{
    if (!why || !why_size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}

static int write_platform(FILE *out, const sg_flow_set *s)
{
    fprintf(out, "<?xml version='1.0'?>\n"
                 "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n<zone id=\"dcsim\" routing=\"Full\">\n"
                 "<host id=\"r\" speed=\"1f\"/>\n");
    for (uint32_t f = 0; f < s->n_flows; f++)
        fprintf(out, "<host id=\"s%u\" speed=\"1f\"/>\n", f);
    /* %.17g: the capacity round-trips exactly through SimGrid's strtod */
    for (uint32_t l = 0; l < s->n_links; l++)
        fprintf(out, "<link id=\"l%u\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", l,
                s->link_bytes_per_s[l]);
    for (uint32_t f = 0; f < s->n_flows; f++) {
        fprintf(out, "<route src=\"s%u\" dst=\"r\" symmetrical=\"NO\">", f);
        for (uint32_t i = s->route_offset[f]; i < s->route_offset[f + 1]; i++)
            fprintf(out, "<link_ctn id=\"l%u\"/>", s->route_link[i]);
        fprintf(out, "</route>\n");
    }
    fprintf(out, "</zone>\n</platform>\n");
    return ferror(out) ? -1 : 0;
}

static void mailbox_name(char *buf, size_t size, uint32_t f) { snprintf(buf, size, "m%u", f); }

static void send_actor(int argc, char *argv[])
{
    (void)argc, (void)argv;
    const sender *me = sg_actor_self_get_data();
    char name[32];
    mailbox_name(name, sizeof name, me->f);
    sg_actor_sleep_until(me->s->start_s[me->f]);
    /* the payload is never read, but SimGrid refuses NULL */
    sg_mailbox_put(sg_mailbox_by_name(name), (void *)me, (long)me->s->bytes[me->f]);
    me->done_s[me->f] = simgrid_get_clock();
}

static void receive_actor(int argc, char *argv[])
{
    (void)argc, (void)argv;
    const sg_flow_set *s = sg_actor_self_get_data();
    sg_comm_t *comms = malloc(s->n_flows * sizeof *comms);
    void **payload = malloc(s->n_flows * sizeof *payload);
    if (!comms || !payload) {
        free(comms), free(payload);
        return; /* the senders then never finish: the child reports it */
    }
    char name[32];
    for (uint32_t f = 0; f < s->n_flows; f++) {
        mailbox_name(name, sizeof name, f);
        comms[f] = sg_mailbox_get_async(sg_mailbox_by_name(name), &payload[f]);
    }
    sg_comm_wait_all(comms, s->n_flows);
    free(comms);
    free(payload);
}

/* The child: simulate, send n_flows doubles down fd, exit 0 (1 if a flow
 * never completed or the pipe failed). */
static void run_child(const sg_flow_set *s, const char *platform, int fd)
{
    int argc = (int)(sizeof sg_args / sizeof sg_args[0]);
    char *argv[sizeof sg_args / sizeof sg_args[0] + 1];
    for (int i = 0; i < argc; i++)
        argv[i] = (char *)sg_args[i];
    argv[argc] = NULL;
    simgrid_init(&argc, argv);
    simgrid_load_platform(platform);
    double *done = malloc(s->n_flows * sizeof *done);
    sender *snd = malloc(s->n_flows * sizeof *snd);
    if (!done || !snd)
        exit(1);
    char name[32];
    sg_actor_t rx = sg_actor_init("receiver", sg_host_by_name("r"));
    sg_actor_set_data(rx, (void *)s);
    sg_actor_start(rx, receive_actor, 0, NULL);
    for (uint32_t f = 0; f < s->n_flows; f++) {
        done[f] = -1;
        snd[f] = (sender){s, done, f};
        snprintf(name, sizeof name, "s%u", f);
        sg_actor_t a = sg_actor_init(name, sg_host_by_name(name));
        sg_actor_set_data(a, &snd[f]);
        sg_actor_start(a, send_actor, 0, NULL);
    }
    simgrid_run();
    int ok = 1;
    for (uint32_t f = 0; f < s->n_flows; f++)
        ok &= done[f] >= 0;
    size_t want = s->n_flows * sizeof *done;
    ok &= write(fd, done, want) == (ssize_t)want;
    free(done);
    free(snd);
    close(fd);
    exit(ok ? 0 : 1);
}

static int read_all(int fd, void *buf, size_t size)
{
    char *p = buf;
    while (size > 0) {
        ssize_t got = read(fd, p, size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        size -= (size_t)got;
    }
    return 0;
}

/* Fork, let the child simulate, read its answer. */
static int run_forked(const sg_flow_set *s, const char *platform, double *done_s, char *why,
                      size_t why_size)
{
    int fds[2];
    if (pipe(fds) != 0) {
        set_why(why, why_size, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL); /* no buffered output written twice */
    pid_t pid = fork();
    if (pid < 0) {
        set_why(why, why_size, "fork: %s", strerror(errno));
        close(fds[0]), close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(s, platform, fds[1]);
    }
    close(fds[1]);
    int rc = read_all(fds[0], done_s, s->n_flows * sizeof *done_s);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        set_why(why, why_size, "the SimGrid child failed (%s %d, %s)",
                WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                rc ? "no answer" : "answer read");
        return -1;
    }
    return 0;
}

int sg_oracle_run(const sg_flow_set *s, double *done_s, char *why, size_t why_size)
{
    const char *tmp = getenv("TMPDIR");
    char dir[512], platform[600];
    snprintf(dir, sizeof dir, "%s/dcsim-simgrid-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        set_why(why, why_size, "mkdtemp %s: %s", dir, strerror(errno));
        return -1;
    }
    /* the .xml suffix tells SimGrid to parse the file, not load a library */
    snprintf(platform, sizeof platform, "%s/platform.xml", dir);
    FILE *out = fopen(platform, "w");
    int rc = -1;
    if (!out) {
        set_why(why, why_size, "%s: %s", platform, strerror(errno));
    } else {
        int bad = write_platform(out, s) != 0;
        bad |= fclose(out) != 0;
        if (bad)
            set_why(why, why_size, "%s: write failed", platform);
        else
            rc = run_forked(s, platform, done_s, why, why_size);
    }
    remove(platform);
    rmdir(dir);
    return rc;
}
