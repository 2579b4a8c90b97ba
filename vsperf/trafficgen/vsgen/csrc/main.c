/* vsgen engine: a session that owns a set of generator ports and runs trials on them.
 *
 * Usage: vsgen-engine [--control PATH]      commands from PATH (a FIFO) or standard input
 *        vsgen-engine --version
 *
 * Commands, one per line (answers are JSON lines on standard output):
 *   port I netns=NAME|- ifname=IF [raw=N]
 *                                      open port I (loads the BPF programs, attaches the
 *                                      receive program to IF inside namespace NAME); raw=N: it
 *                                      can keep N latencies raw (run ... raw=1, for tests)
 *   dir D tx=I rx=J streams=N vary=none|mac|ip|udp|smac base=V l3=14|18 frame=HEX [sizes=L,L,...]
 *                                      direction D: the template frame (without FCS) port I
 *                                      sends to port J, N streams varying one field from V
 *                                      (smac: the source MAC, for RFC 2889 learning frames);
 *                                      sizes: a frame mix, frame i cut to the i-th length (mod
 *                                      their count, at most 1024; lengths without FCS, at most
 *                                      the template's)
 *   run ...                            one trial (see run.c)
 *   stop                               ends a continuous run
 *   ping | quit
 * Every command is answered by {"ev":"ok",...}, {"ev":"result",...} or {"ev":"error",...}.
 * The session ends on quit, end of input, SIGTERM/SIGINT/SIGHUP or the parent's death;
 * it closes every socket and bpf_link (which detaches the XDP programs) before exiting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "engine.h"

#define MAX_WORDS 32
#define LINE_MAX_BYTES (64 * 1024)

static struct vsg_engine *g_engine; /* only for the signal handler */

static void on_signal(int sig)
{
	(void)sig;
	if (g_engine)
		atomic_store(&g_engine->stop_all, 1);
}

/* 1: a line in *line; 0: timeout; -1: end of input (or error). */
int vsg_ctl_readline(struct vsg_engine *eng, int timeout_ms, char **line)
{
	for (;;) {
		char *nl = eng->llen ? memchr(eng->lbuf, '\n', eng->llen) : NULL;
		struct pollfd pfd = {.fd = eng->ctl_fd, .events = POLLIN};
		ssize_t n;
		int rc;

		if (nl) {
			size_t k = (size_t)(nl - eng->lbuf);

			if (k + 1 > eng->line_cap) {
				eng->line_cap = k + 1;
				eng->line = realloc(eng->line, eng->line_cap);
			}
			memcpy(eng->line, eng->lbuf, k);
			eng->line[k] = '\0';
			if (k && eng->line[k - 1] == '\r')
				eng->line[k - 1] = '\0';
			memmove(eng->lbuf, nl + 1, eng->llen - k - 1);
			eng->llen -= k + 1;
			*line = eng->line;
			return 1;
		}
		if (atomic_load(&eng->stop_all))
			return -1;
		rc = poll(&pfd, 1, timeout_ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0)
			return 0;
		if (eng->llen == eng->lcap) {
			if (eng->lcap >= LINE_MAX_BYTES) {
				vsg_error("command line longer than %d bytes", LINE_MAX_BYTES);
				eng->llen = 0;
			} else {
				eng->lcap = eng->lcap ? eng->lcap * 2 : 4096;
				eng->lbuf = realloc(eng->lbuf, eng->lcap);
			}
		}
		n = read(eng->ctl_fd, eng->lbuf + eng->llen, eng->lcap - eng->llen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		eng->llen += (size_t)n;
	}
}

static int split(char *line, char **words)
{
	int n = 0;

	for (char *save = NULL, *w = strtok_r(line, " \t", &save); w && n < MAX_WORDS;
	     w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	return n;
}

static const char *value_of(char **kv, int n, const char *key)
{
	size_t k = strlen(key);

	for (int i = 0; i < n; i++)
		if (!strncmp(kv[i], key, k) && kv[i][k] == '=')
			return kv[i] + k + 1;
	return NULL;
}

static int parse_index(const char *s, int max, int *out)
{
	uint64_t v;

	if (vsg_parse_u64(s, &v) || v >= (uint64_t)max)
		return -1;
	*out = (int)v;
	return 0;
}

static int cmd_port(struct vsg_engine *eng, char **w, int n)
{
	const char *ns, *ifname, *raw;
	char err[VSG_ERR_MAX] = "", path[128];
	struct vsg_port *port;
	uint64_t raw_cap = 0;
	int idx;

	if (n < 2 || parse_index(w[1], VSG_MAX_PORTS, &idx)) {
		vsg_error("port: expected an index 0..%d", VSG_MAX_PORTS - 1);
		return -1;
	}
	ns = value_of(w + 2, n - 2, "netns");
	ifname = value_of(w + 2, n - 2, "ifname");
	raw = value_of(w + 2, n - 2, "raw");
	if (raw && (vsg_parse_u64(raw, &raw_cap) || raw_cap > VSG_MAX_RAW)) {
		vsg_error("port: raw must be 0..%u latencies", VSG_MAX_RAW);
		return -1;
	}
	if (!ns || !ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE || strlen(ns) >= VSG_NAME_MAX ||
	    strchr(ns, '/')) {
		vsg_error("port: expected netns=NAME|- ifname=IF (an interface name of at most %d characters)",
			  IF_NAMESIZE - 1);
		return -1;
	}
	port = &eng->ports[idx];
	if (port->defined) {
		vsg_error("port %d is already open", idx);
		return -1;
	}
	memset(port, 0, sizeof(*port));
	port->index = idx;
	port->link_fd = -1;
	port->ctl_sock = -1;
	snprintf(port->ifname, sizeof(port->ifname), "%s", ifname);
	if (strcmp(ns, "-")) {
		snprintf(port->netns, sizeof(port->netns), "%s", ns);
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
		port->ns_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (port->ns_fd < 0) {
			vsg_error("unknown network namespace %s (%s)", ns, strerror(errno));
			return -1;
		}
	} else {
		port->ns_fd = fcntl(eng->own_ns_fd, F_DUPFD_CLOEXEC, 0);
	}
	if (vsg_port_open(eng, port, (uint32_t)raw_cap, err)) {
		vsg_error("%s", err);
		vsg_port_close(port);
		return -1;
	}
	port->defined = 1;
	vsg_emit("{\"ev\":\"ok\",\"cmd\":\"port\",\"port\":%d,\"ifindex\":%d,\"mtu\":%d,\"rx_mode\":\"%s\"}", idx,
		 port->ifindex, port->mtu, port->rx_mode);
	return 0;
}

/* A frame mix's lengths "L,L,..." into `d` (after its template): each long enough for the
 * signature, at most the template's length. */
static int parse_sizes(const char *text, struct vsg_dir *d)
{
	size_t low = (size_t)d->l3 + VSG_IP_LEN + VSG_L4_LEN + VSG_SIG_LEN;
	const char *s = text;

	if (low < VSG_MIN_FRAME)
		low = VSG_MIN_FRAME;
	d->mix_len = 0;
	while (*s) {
		char *end;
		unsigned long len = strtoul(s, &end, 10);

		if (end == s || (*end && *end != ',') || d->mix_len == VSG_MIX_MAX || len < low || len > d->len) {
			vsg_error("dir: sizes must be 1..%d frame lengths of %zu..%zu bytes (without FCS), comma separated",
				  VSG_MIX_MAX, low, d->len);
			return -1;
		}
		d->mix[d->mix_len++] = (uint32_t)len;
		s = *end ? end + 1 : end;
	}
	if (!d->mix_len) {
		vsg_error("dir: sizes is empty");
		return -1;
	}
	return 0;
}

static int cmd_dir(struct vsg_engine *eng, char **w, int n)
{
	static const char *const varies[] = {"none", "mac", "ip", "udp", "smac"};
	const char *tx = value_of(w + 2, n - 2, "tx"), *rx = value_of(w + 2, n - 2, "rx");
	const char *streams = value_of(w + 2, n - 2, "streams"), *vary = value_of(w + 2, n - 2, "vary");
	const char *base = value_of(w + 2, n - 2, "base"), *l3 = value_of(w + 2, n - 2, "l3");
	const char *frame = value_of(w + 2, n - 2, "frame"), *sizes = value_of(w + 2, n - 2, "sizes");
	struct vsg_dir d;
	uint64_t s, b, l;
	int id, limit;

	memset(&d, 0, sizeof(d));
	if (n < 2 || parse_index(w[1], VSG_MAX_DIRS, &id)) {
		vsg_error("dir: expected an index 0..%d", VSG_MAX_DIRS - 1);
		return -1;
	}
	if (!tx || !rx || parse_index(tx, VSG_MAX_PORTS, &d.tx_port) || parse_index(rx, VSG_MAX_PORTS, &d.rx_port) ||
	    !eng->ports[d.tx_port].defined || !eng->ports[d.rx_port].defined || d.tx_port == d.rx_port) {
		vsg_error("dir: tx= and rx= must name two different open ports");
		return -1;
	}
	if (!streams || vsg_parse_u64(streams, &s) || s < 1 || s > (1u << 24)) {
		vsg_error("dir: streams must be 1..%u", 1u << 24);
		return -1;
	}
	d.vary = -1;
	for (int i = 0; vary && i < 5; i++)
		if (!strcmp(vary, varies[i]))
			d.vary = i;
	if (d.vary < 0) {
		vsg_error("dir: vary must be none, mac, ip, udp or smac");
		return -1;
	}
	limit = d.vary == VSG_VARY_UDP ? 0xffff : -1;
	if (!base || vsg_parse_u64(base, &b) || b > 0xffffffffull || (limit > 0 && b + s - 1 > (uint64_t)limit) ||
	    b + s - 1 > 0xffffffffull) {
		vsg_error("dir: base must be a number such that base + streams - 1 fits the varied field");
		return -1;
	}
	if (!l3 || vsg_parse_u64(l3, &l) ||
	    (l != VSG_L3_PLAIN && l != VSG_L3_TAGGED && l != VSG_L3_GRE && l != VSG_L3_GRE_KEY &&
	     l != VSG_L3_GRE_KEY_TAGGED && l != VSG_L3_UDP_TUNNEL && l != VSG_L3_UDP_TUNNEL_TAGGED)) {
		vsg_error("dir: l3 must be 14 (untagged), 18 (802.1Q), or 52, 56, 60, 64, 68 (behind a tunnel)");
		return -1;
	}
	if (!frame || vsg_hex_decode(frame, d.frame, sizeof(d.frame), &d.len)) {
		vsg_error("dir: frame must be the frame in hex, at most %d bytes", VSG_MAX_FRAME);
		return -1;
	}
	d.streams = (uint32_t)s;
	d.base = (uint32_t)b;
	d.l3 = (int)l;
	if (d.len < VSG_MIN_FRAME || d.len < (size_t)d.l3 + VSG_IP_LEN + VSG_L4_LEN + VSG_SIG_LEN) {
		vsg_error("dir: frame of %zu bytes is too short (at least %d without FCS)", d.len, VSG_MIN_FRAME);
		return -1;
	}
	if ((d.l3 == 14 && (d.frame[12] != 0x08 || d.frame[13] != 0x00)) ||
	    (d.l3 == 18 && (d.frame[12] != 0x81 || d.frame[13] != 0x00 || d.frame[16] != 0x08 || d.frame[17] != 0)) ||
	    (d.l3 > 18 && (d.frame[12] != 0x08 || d.frame[13] != 0x00 || d.frame[d.l3 - 2] != 0x08 ||
			   d.frame[d.l3 - 1] != 0x00))) {
		vsg_error("dir: frame is not IPv4%s", d.l3 == 18 ? " behind an 802.1Q tag" :
			  d.l3 > 18 ? " inside IPv4" : "");
		return -1;
	}
	if (eng->ports[d.tx_port].mtu > 0 && d.len - VSG_L3_PLAIN > (size_t)eng->ports[d.tx_port].mtu) {
		vsg_error("dir: a frame of %zu bytes does not fit the MTU %d of %s", d.len + 4,
			  eng->ports[d.tx_port].mtu, eng->ports[d.tx_port].ifname);
		return -1;
	}
	if (sizes && parse_sizes(sizes, &d))
		return -1;
	d.defined = 1;
	eng->dirs[id] = d;
	vsg_emit("{\"ev\":\"ok\",\"cmd\":\"dir\",\"dir\":%d,\"len\":%zu}", id, d.len);
	return 0;
}

static void dispatch(struct vsg_engine *eng, char *line, int *quit)
{
	char *w[MAX_WORDS];
	int n = split(line, w);

	if (!n)
		return;
	if (!strcmp(w[0], "port"))
		cmd_port(eng, w, n);
	else if (!strcmp(w[0], "dir"))
		cmd_dir(eng, w, n);
	else if (!strcmp(w[0], "run"))
		vsg_run(eng, w + 1, n - 1);
	else if (!strcmp(w[0], "ping"))
		vsg_emit("{\"ev\":\"ok\",\"cmd\":\"ping\"}");
	else if (!strcmp(w[0], "stop"))
		vsg_emit("{\"ev\":\"ok\",\"cmd\":\"stop\",\"running\":false}");
	else if (!strcmp(w[0], "quit"))
		*quit = 1;
	else
		vsg_error("unknown command '%s' (port, dir, run, stop, ping, quit)", w[0]);
}

static void shutdown_engine(struct vsg_engine *eng)
{
	for (int i = 0; i < VSG_MAX_PORTS; i++)
		if (eng->ports[i].defined || eng->ports[i].obj)
			vsg_port_close(&eng->ports[i]);
	if (eng->own_ns_fd >= 0)
		close(eng->own_ns_fd);
	free(eng->lbuf);
	free(eng->line);
}

int main(int argc, char **argv)
{
	static struct vsg_engine eng;
	struct sigaction sa;
	struct utsname u;
	const char *control = NULL;
	int quit = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--version")) {
			printf("vsgen-engine %s\n", VSG_VERSION);
			return 0;
		} else if (!strcmp(argv[i], "--control") && i + 1 < argc) {
			control = argv[++i];
		} else {
			fprintf(stderr, "vsgen-engine: unknown argument '%s' (--control PATH, --version)\n", argv[i]);
			return 2;
		}
	}
	if (geteuid() != 0) {
		fprintf(stderr, "vsgen-engine: needs root (BPF programs, raw sockets, network namespaces)\n");
		return 2;
	}
	/* Die with vsperf: a generator must never outlive the run that started it. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1) {
		fprintf(stderr, "vsgen-engine: parent exited before the engine started\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	g_engine = &eng;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	eng.own_ns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	eng.ctl_fd = control ? open(control, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (eng.ctl_fd < 0 || eng.own_ns_fd < 0) {
		fprintf(stderr, "vsgen-engine: cannot open %s: %s\n", control ? control : "namespace", strerror(errno));
		return 2;
	}
	/* The run tag (IPv4 identification) tells this session's frames from anyone else's. */
	if (getrandom(&eng.run_tag, sizeof(eng.run_tag), 0) != sizeof(eng.run_tag) || !eng.run_tag)
		eng.run_tag = (uint16_t)(getpid() | 1);
	uname(&u);
	vsg_emit("{\"ev\":\"hello\",\"version\":\"%s\",\"run_tag\":%u,\"kernel\":\"%s\",\"pid\":%d}", VSG_VERSION,
		 eng.run_tag, u.release, getpid());
	while (!quit && !atomic_load(&eng.stop_all)) {
		char *line = NULL;
		int rc = vsg_ctl_readline(&eng, -1, &line);

		if (rc < 0)
			break;
		if (rc > 0)
			dispatch(&eng, line, &quit);
	}
	shutdown_engine(&eng);
	vsg_emit("{\"ev\":\"bye\"}");
	return 0;
}
