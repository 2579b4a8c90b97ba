/* Shared helpers of vsperf's UDP message-loss sender and receiver (seeds/004). */
#ifndef UDPMSG_H
#define UDPMSG_H

#include <netinet/in.h>
#include <stdint.h>
#include <time.h>

/* Largest UDP payload the programs send or receive (the seed allows 0..1500; a 1500-byte
 * payload is fragmented by IPv4). */
#define UDPMSG_MAX_PAYLOAD 1500

/* Scheduler policy by its name (OTHER, BATCH, IDLE, FIFO, RR); -1 when unknown. */
int udpmsg_policy(const char *name);

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t udpmsg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Parse an unsigned decimal number into *out; -1 when `s` is not one or exceeds `max`. */
int udpmsg_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* The -S/--scheduler (`opt` 'S': *policy) or -P/--priority (`opt` 'P': *priority, 0..99)
 * option both programs take; prints what is wrong and returns -1 on a bad value. */
int udpmsg_scheduler_option(int opt, const char *arg, int *policy, uint64_t *priority);

/* The -p/--port option (1..65535) into *port; prints what is wrong and returns -1 on a bad value. */
int udpmsg_port_option(const char *arg, uint64_t *port);

/* What both programs do once their options are read: the IPv4 address `ip` with `port` into
 * *out, then the scheduler `policy` (negative: none was asked for) with `priority` (1..99 for
 * FIFO/RR, 0 otherwise) for the calling process. Returns 0, or the exit code after printing
 * what is wrong: 2 when `ip` is not an IPv4 address ("invalid `what` address"), 1 when the
 * scheduler was refused. */
int udpmsg_setup(const char *what, const char *ip, uint64_t port, int policy, uint64_t priority,
                 struct sockaddr_in *out);

#endif
