/* udp_msg_sender: send N UDP messages of a fixed payload as fast as the socket takes them.
 *
 * Each payload of at least 8 bytes starts with the message's sequence number, so the receiver
 * can count messages that arrive twice or out of order. Prints one JSON line on stdout:
 * {"sent": N, "retries": R, "elapsed_ns": T}. A send the kernel refuses for lack of buffer
 * (ENOBUFS/EAGAIN) is retried: loss is what the network and the receiver lose, never a
 * message the sender did not manage to hand over.
 */
#define _GNU_SOURCE
#include "udpmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: udp_msg_sender -s SERVER_IP -p PORT [-m PAYLOAD] [-t TOTAL] [-S SCHED] [-P PRIO] [-c]\n"
            "  -s, --server       receiver IPv4 address\n"
            "  -p, --port         receiver UDP port\n"
            "  -m, --msg-payload  payload bytes, 0..%d\n"
            "  -t, --total        number of messages\n"
            "  -S, --scheduler    OTHER, BATCH, IDLE, FIFO or RR\n"
            "  -P, --priority     1..99 for FIFO and RR, 0 otherwise\n"
            "  -c, --connected    connect() the socket and use send() instead of sendto()\n",
            UDPMSG_MAX_PAYLOAD);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"server", required_argument, 0, 's'},    {"port", required_argument, 0, 'p'},
        {"msg-payload", required_argument, 0, 'm'}, {"total", required_argument, 0, 't'},
        {"scheduler", required_argument, 0, 'S'}, {"priority", required_argument, 0, 'P'},
        {"connected", no_argument, 0, 'c'},       {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *server = NULL;
    struct sockaddr_in dst;
    uint64_t port = 0, payload = 64, total = 1000000, priority = 0;
    int policy = -2, connected = 0, opt;

    while ((opt = getopt_long(argc, argv, "s:p:m:t:S:P:ch", longopts, NULL)) != -1) {
        switch (opt) {
        case 's': server = optarg; break;
        case 'p':
            if (udpmsg_port_option(optarg, &port))
                return 2;
            break;
        case 'm':
            if (udpmsg_parse_u64(optarg, UDPMSG_MAX_PAYLOAD, &payload)) {
                fprintf(stderr, "invalid payload %s (0..%d)\n", optarg, UDPMSG_MAX_PAYLOAD);
                return 2;
            }
            break;
        case 't':
            if (udpmsg_parse_u64(optarg, UINT64_MAX, &total) || total == 0) {
                fprintf(stderr, "invalid total %s\n", optarg);
                return 2;
            }
            break;
        case 'S':
        case 'P':
            if (udpmsg_scheduler_option(opt, optarg, &policy, &priority))
                return 2;
            break;
        case 'c': connected = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (server == NULL || port == 0) {
        usage(stderr);
        return 2;
    }
    int rc = udpmsg_setup("server", server, port, policy, priority, &dst);
    if (rc)
        return rc;

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("socket");
        return 1;
    }
    if (connected && connect(fd, (struct sockaddr *)&dst, sizeof(dst)) != 0) {
        perror("connect");
        return 1;
    }
    static char buf[UDPMSG_MAX_PAYLOAD];
    memset(buf, 0xa5, sizeof(buf));
    uint64_t retries = 0;
    uint64_t start = udpmsg_now_ns();
    for (uint64_t seq = 0; seq < total;) {
        if (payload >= sizeof(seq))
            memcpy(buf, &seq, sizeof(seq));
        ssize_t n = connected ? send(fd, buf, payload, 0)
                              : sendto(fd, buf, payload, 0, (struct sockaddr *)&dst, sizeof(dst));
        if (n < 0) {
            if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
                retries++;
                continue;
            }
            /* ECONNREFUSED on a connected socket: the receiver's port was closed (an ICMP
             * came back); the message itself is lost, as on an unconnected socket. */
            if (errno != ECONNREFUSED) {
                perror("send");
                return 1;
            }
        }
        seq++;
    }
    uint64_t elapsed = udpmsg_now_ns() - start;
    printf("{\"sent\": %llu, \"retries\": %llu, \"elapsed_ns\": %llu, \"payload_bytes\": %llu, "
           "\"connected\": %s}\n",
           (unsigned long long)total, (unsigned long long)retries, (unsigned long long)elapsed,
           (unsigned long long)payload, connected ? "true" : "false");
    close(fd);
    return 0;
}
