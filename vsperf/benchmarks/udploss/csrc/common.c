/* Scheduler and argument helpers shared by udp_msg_sender and udp_msg_receiver. */
#define _GNU_SOURCE
#include "udpmsg.h"

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

int udpmsg_set_scheduler(int policy, int priority)
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
