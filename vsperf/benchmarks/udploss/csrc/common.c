/* Scheduler and argument helpers shared by udp_msg_sender and udp_msg_receiver. */
#define _GNU_SOURCE
#include "udpmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int policy;
} policies[] = {
    {"OTHER", SCHED_OTHER}, {"BATCH", SCHED_BATCH}, {"IDLE", SCHED_IDLE},
    {"FIFO", SCHED_FIFO},   {"RR", SCHED_RR},
};

int udpmsg_policy(const char *name)
{
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
        if (strcasecmp(name, policies[i].name) == 0)
            return policies[i].policy;
    return -1;
}

static int set_scheduler(int policy, int priority)
{
    struct sched_param param = {.sched_priority = priority};
    if (sched_setscheduler(0, policy, &param) != 0) {
        fprintf(stderr, "sched_setscheduler(policy %d, priority %d): %s\n", policy, priority,
                strerror(errno));
        return -1;
    }
    return 0;
}

int udpmsg_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    if (s == NULL || *s == '\0' || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int udpmsg_scheduler_option(int opt, const char *arg, int *policy, uint64_t *priority)
{
    if (opt == 'S') {
        *policy = udpmsg_policy(arg);
        if (*policy < 0) {
            fprintf(stderr, "unknown scheduler %s (OTHER, BATCH, IDLE, FIFO, RR)\n", arg);
            return -1;
        }
        return 0;
    }
    if (udpmsg_parse_u64(arg, 99, priority)) {
        fprintf(stderr, "invalid priority %s (0..99)\n", arg);
        return -1;
    }
    return 0;
}

int udpmsg_port_option(const char *arg, uint64_t *port)
{
    if (udpmsg_parse_u64(arg, 65535, port) || *port == 0) {
        fprintf(stderr, "invalid port %s\n", arg);
        return -1;
    }
    return 0;
}

int udpmsg_setup(const char *what, const char *ip, uint64_t port, int policy, uint64_t priority,
                 struct sockaddr_in *out)
{
    memset(out, 0, sizeof(*out));
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, ip, &out->sin_addr) != 1) {
        fprintf(stderr, "invalid %s address %s\n", what, ip);
        return 2;
    }
    if (policy >= 0 && set_scheduler(policy, (int)priority) != 0)
        return 1;
    return 0;
}
