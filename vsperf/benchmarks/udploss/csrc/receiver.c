/* udp_msg_receiver: count the UDP messages that arrive, waiting with select, epoll or a thread.
 *
 * Prints "ready" on stdout once the socket is bound (the sender may start), then one JSON line:
 * {"received": N, "bytes": B, "first_ns": .., "last_ns": .., "rcvbuf_bytes": .., ...}.
 * It stops when it has received TOTAL messages, when no message came for IDLE_MS after the
 * first one, or when none came within WAIT_MS of being ready.
 */
#define _GNU_SOURCE
#include "udpmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

enum method { M_SELECT, M_EPOLL, M_THREAD };

struct counters {
    uint64_t received, bytes, reordered, first_ns, last_ns, next_seq;
};

struct ctx {
    int fd;
    enum method method;
    uint64_t total, idle_ns, wait_ns, ready_ns;
    struct counters c;
    int error;
};

static char buf[65536];

/* Account one message; returns 1 once TOTAL messages have arrived. */
static int count(struct ctx *x, ssize_t n)
{
    uint64_t now = udpmsg_now_ns();
    if (x->c.received == 0)
        x->c.first_ns = now;
    x->c.last_ns = now;
    x->c.received++;
    x->c.bytes += (uint64_t)n;
    if ((size_t)n >= sizeof(uint64_t)) {
        uint64_t seq;
        memcpy(&seq, buf, sizeof(seq));
        if (seq < x->c.next_seq)
            x->c.reordered++;
        else
            x->c.next_seq = seq + 1;
    }
    return x->total && x->c.received >= x->total;
}

/* True when the receiver should give up waiting. */
static int timed_out(const struct ctx *x)
{
    uint64_t now = udpmsg_now_ns();
    if (x->c.received == 0)
        return now - x->ready_ns > x->wait_ns;
    return now - x->c.last_ns > x->idle_ns;
}

/* Read every queued message without blocking; returns 1 when done. */
static int drain(struct ctx *x)
{
    for (;;) {
        ssize_t n = recv(x->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return 0;
            perror("recv");
            x->error = 1;
            return 1;
        }
        if (count(x, n))
            return 1;
    }
}

/* After a select() or epoll_wait() (`what`) that returned `r`: drain the socket when it is
 * readable. 1 when the wait loop must end: the stream ended, or the wait failed (x->error). */
static int after_wait(struct ctx *x, int r, const char *what)
{
    if (r < 0 && errno != EINTR) {
        perror(what);
        x->error = 1;
        return 1;
    }
    return r > 0 && drain(x);
}

static void run_select(struct ctx *x)
{
    while (!timed_out(x)) {
        fd_set rd;
        FD_ZERO(&rd);
        FD_SET(x->fd, &rd);
        struct timeval tv = {.tv_sec = 0, .tv_usec = 20000};
        if (after_wait(x, select(x->fd + 1, &rd, NULL, NULL, &tv), "select"))
            return;
    }
}

static void run_epoll(struct ctx *x)
{
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = x->fd};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, x->fd, &ev) != 0) {
        perror("epoll");
        x->error = 1;
        return;
    }
    while (!timed_out(x)) {
        struct epoll_event out;
        if (after_wait(x, epoll_wait(ep, &out, 1, 20), "epoll_wait"))
            break;
    }
    close(ep);
}

/* The thread method: a dedicated thread blocks in recv(); a receive timeout lets it notice
 * the end of the stream. */
static void *receive_thread(void *arg)
{
    struct ctx *x = arg;
    struct timeval tv = {.tv_sec = 0, .tv_usec = 20000};
    setsockopt(x->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    while (!timed_out(x)) {
        ssize_t n = recv(x->fd, buf, sizeof(buf), 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                continue;
            perror("recv");
            x->error = 1;
            break;
        }
        if (count(x, n))
            break;
    }
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: udp_msg_receiver -p PORT [-B BIND_IP] [-S SCHED] [-P PRIO] [-r RCVBUF] "
                 "[-m SELECT|EPOLL|THREAD] [-t TOTAL] [-i IDLE_MS] [-w WAIT_MS]\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"port", required_argument, 0, 'p'},      {"bind", required_argument, 0, 'B'},
        {"scheduler", required_argument, 0, 'S'}, {"priority", required_argument, 0, 'P'},
        {"receive-buffer-size", required_argument, 0, 'r'},
        {"method", required_argument, 0, 'm'},    {"total", required_argument, 0, 't'},
        {"idle-ms", required_argument, 0, 'i'},   {"wait-ms", required_argument, 0, 'w'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0},
    };
    const char *bind_ip = "0.0.0.0";
    struct sockaddr_in addr;
    uint64_t port = 0, priority = 0, rcvbuf = 0, total = 0, idle_ms = 500, wait_ms = 5000;
    int policy = -2, opt;
    struct ctx x = {.method = M_SELECT};

    while ((opt = getopt_long(argc, argv, "p:B:S:P:r:m:t:i:w:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'p':
            if (udpmsg_port_option(optarg, &port))
                return 2;
            break;
        case 'B': bind_ip = optarg; break;
        case 'S':
        case 'P':
            if (udpmsg_scheduler_option(opt, optarg, &policy, &priority))
                return 2;
            break;
        case 'r':
            if (udpmsg_parse_u64(optarg, 1u << 30, &rcvbuf)) {
                fprintf(stderr, "invalid receive buffer size %s\n", optarg);
                return 2;
            }
            break;
        case 'm':
            if (strcasecmp(optarg, "select") == 0)
                x.method = M_SELECT;
            else if (strcasecmp(optarg, "epoll") == 0)
                x.method = M_EPOLL;
            else if (strcasecmp(optarg, "thread") == 0)
                x.method = M_THREAD;
            else {
                fprintf(stderr, "unknown method %s (SELECT, EPOLL, THREAD)\n", optarg);
                return 2;
            }
            break;
        case 't':
            if (udpmsg_parse_u64(optarg, UINT64_MAX, &total)) {
                fprintf(stderr, "invalid total %s\n", optarg);
                return 2;
            }
            break;
        case 'i':
            if (udpmsg_parse_u64(optarg, 3600000, &idle_ms) || idle_ms == 0) {
                fprintf(stderr, "invalid idle time %s\n", optarg);
                return 2;
            }
            break;
        case 'w':
            if (udpmsg_parse_u64(optarg, 3600000, &wait_ms) || wait_ms == 0) {
                fprintf(stderr, "invalid wait time %s\n", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (port == 0) {
        usage(stderr);
        return 2;
    }
    int rc = udpmsg_setup("bind", bind_ip, port, policy, priority, &addr);
    if (rc)
        return rc;
    x.fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (x.fd < 0) {
        perror("socket");
        return 1;
    }
    if (rcvbuf) {
        int size = (int)rcvbuf;
        /* FORCE (root) passes net.core.rmem_max, as the seed's root runs did; else capped. */
        if (setsockopt(x.fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0 &&
            setsockopt(x.fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) != 0) {
            perror("setsockopt SO_RCVBUF");
            return 1;
        }
    }
    int effective = 0;
    socklen_t len = sizeof(effective);
    getsockopt(x.fd, SOL_SOCKET, SO_RCVBUF, &effective, &len);
    if (bind(x.fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        perror("bind");
        return 1;
    }
    x.total = total;
    x.idle_ns = idle_ms * 1000000ull;
    x.wait_ns = wait_ms * 1000000ull;
    x.ready_ns = udpmsg_now_ns();
    printf("ready\n");
    fflush(stdout);

    static const char *names[] = {"select", "epoll", "thread"};
    if (x.method == M_SELECT) {
        run_select(&x);
    } else if (x.method == M_EPOLL) {
        run_epoll(&x);
    } else {
        pthread_t t;
        if (pthread_create(&t, NULL, receive_thread, &x) != 0) {
            perror("pthread_create");
            return 1;
        }
        pthread_join(t, NULL);
    }
    printf("{\"received\": %llu, \"bytes\": %llu, \"reordered\": %llu, \"first_ns\": %llu, "
           "\"last_ns\": %llu, \"rcvbuf_bytes\": %d, \"method\": \"%s\"}\n",
           (unsigned long long)x.c.received, (unsigned long long)x.c.bytes,
           (unsigned long long)x.c.reordered, (unsigned long long)x.c.first_ns,
           (unsigned long long)x.c.last_ns, effective, names[x.method]);
    close(x.fd);
    return x.error ? 1 : 0;
}
