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

/* Apply `policy` with `priority` (1..99 for FIFO/RR, 0 otherwise) to the calling process;
 * prints the reason and returns -1 on failure. */
int udpmsg_set_scheduler(int policy, int priority);

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

/* The IPv4 address `ip` with `port` into *out; prints "invalid `what` address" and returns -1
 * when `ip` is not an IPv4 address. */
int udpmsg_address(const char *what, const char *ip, uint64_t port, struct sockaddr_in *out);

#endif
