/* vsgen engine: a port's BPF object (loaded from the copy embedded in the binary), its maps
 * mapped into the engine, and the receive program attached through a bpf_link.
 *
 * A bpf_link belongs to the engine process: when the process exits for any reason (even
 * SIGKILL) the kernel detaches the program. Nothing is pinned, nothing outlives the engine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"

extern const unsigned char vsg_bpf_obj[];
extern const unsigned char vsg_bpf_obj_end[];

static const char *const MAP_NAMES[VSG_NMAPS] = {"vsg_cfg_map", "vsg_tx_map", "vsg_rx_map", "vsg_stream_map",
						  "vsg_hist_map", "vsg_mix_map", "vsg_size_map", "vsg_raw_map"};

/* libbpf's messages, kept so that a failure can be told in one line. */
static char libbpf_last[VSG_ERR_MAX];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[VSG_ERR_MAX];
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
		line[--n] = '\0';
	if (n)
		snprintf(libbpf_last, sizeof(libbpf_last), "%s", line);
	return 0;
}

static void unmap_all(struct vsg_port *port)
{
	for (int i = 0; i < VSG_NMAPS; i++) {
		if (port->map_mem[i])
			munmap(port->map_mem[i], port->map_len[i]);
		port->map_mem[i] = NULL;
	}
	port->mix = NULL;
	port->sizes = NULL;
	port->raw = NULL;
	port->cfg = NULL;
	port->tx = NULL;
	port->rx = NULL;
	port->streams = NULL;
	port->hist = NULL;
}

struct loaded {
	struct bpf_object *obj;
	int tx_fd, rx_fd;
	void *mem[VSG_NMAPS];
	size_t len[VSG_NMAPS];
};

static void loaded_free(struct loaded *l)
{
	for (int i = 0; i < VSG_NMAPS; i++)
		if (l->mem[i])
			munmap(l->mem[i], l->len[i]);
	if (l->obj)
		bpf_object__close(l->obj);
	memset(l, 0, sizeof(*l));
}

static int load(struct loaded *l, uint32_t stream_cap, uint32_t hist_slices, uint32_t raw_cap, char *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "vsgen");
	long page = sysconf(_SC_PAGESIZE);
	struct bpf_program *prog;

	memset(l, 0, sizeof(*l));
	libbpf_set_print(libbpf_print);
	libbpf_last[0] = '\0';
	l->obj = bpf_object__open_mem(vsg_bpf_obj, (size_t)(vsg_bpf_obj_end - vsg_bpf_obj), &opts);
	if (!l->obj) {
		snprintf(err, VSG_ERR_MAX, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	if (bpf_map__set_max_entries(bpf_object__find_map_by_name(l->obj, "vsg_stream_map"), stream_cap)) {
		snprintf(err, VSG_ERR_MAX, "cannot size the stream map to %u entries", stream_cap);
		goto fail;
	}
	if (bpf_map__set_max_entries(bpf_object__find_map_by_name(l->obj, "vsg_hist_map"),
				     VSG_HIST_BUCKETS * hist_slices)) {
		snprintf(err, VSG_ERR_MAX, "cannot size the histogram map to %u slices", hist_slices);
		goto fail;
	}
	if (bpf_map__set_max_entries(bpf_object__find_map_by_name(l->obj, "vsg_raw_map"), raw_cap ? raw_cap : 1)) {
		snprintf(err, VSG_ERR_MAX, "cannot size the raw latency map to %u entries", raw_cap);
		goto fail;
	}
	if (bpf_object__load(l->obj)) {
		snprintf(err, VSG_ERR_MAX, "the kernel refused vsgen's BPF programs (%s): %s", strerror(errno),
			 libbpf_last[0] ? libbpf_last : "no detail");
		goto fail;
	}
	prog = bpf_object__find_program_by_name(l->obj, "vsg_xdp");
	if (!prog) {
		snprintf(err, VSG_ERR_MAX, "the embedded BPF object lacks vsg_xdp");
		goto fail;
	}
	/* The same program transmits (BPF_PROG_RUN) and receives (attached). */
	l->tx_fd = l->rx_fd = bpf_program__fd(prog);
	for (int i = 0; i < VSG_NMAPS; i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(l->obj, MAP_NAMES[i]);
		size_t value = (bpf_map__value_size(map) + 7) & ~(size_t)7;
		size_t len = value * bpf_map__max_entries(map);

		len = (len + (size_t)page - 1) & ~((size_t)page - 1);
		l->mem[i] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
		if (l->mem[i] == MAP_FAILED) {
			l->mem[i] = NULL;
			snprintf(err, VSG_ERR_MAX, "cannot map %s: %s", MAP_NAMES[i], strerror(errno));
			goto fail;
		}
		l->len[i] = len;
	}
	return 0;
fail:
	loaded_free(l);
	return -1;
}

static void adopt(struct vsg_port *port, struct loaded *l, uint32_t cap)
{
	unmap_all(port);
	if (port->obj)
		bpf_object__close(port->obj);
	port->obj = l->obj;
	port->tx_prog_fd = l->tx_fd;
	port->rx_prog_fd = l->rx_fd;
	for (int i = 0; i < VSG_NMAPS; i++) {
		port->map_mem[i] = l->mem[i];
		port->map_len[i] = l->len[i];
	}
	port->cfg = l->mem[0];
	port->tx = l->mem[1];
	port->rx = l->mem[2];
	port->streams = l->mem[3];
	port->hist = l->mem[4];
	port->mix = l->mem[5];
	port->sizes = l->mem[6];
	port->raw = l->mem[7];
	port->stream_cap = cap;
	port->cfg->hist_slices = port->hist_slices;
	memset(l, 0, sizeof(*l));
}

static int read_mtu(int fd, const char *ifname)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	return ioctl(fd, SIOCGIFMTU, &ifr) == 0 ? ifr.ifr_mtu : -1;
}

/* Resolve the interface in its namespace, load the BPF object and attach the receive program. */
int vsg_port_open(struct vsg_engine *eng, struct vsg_port *port, uint32_t raw_cap, char *err)
{
	struct loaded l;
	int rc = -1;

	if (vsg_enter_ns(port->ns_fd, err))
		return -1;
	port->ifindex = (int)if_nametoindex(port->ifname);
	if (!port->ifindex) {
		snprintf(err, VSG_ERR_MAX, "unknown interface %s in namespace %s", port->ifname,
			 port->netns[0] ? port->netns : "(own)");
		goto out;
	}
	port->ctl_sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (port->ctl_sock < 0) {
		snprintf(err, VSG_ERR_MAX, "cannot open a socket in namespace %s: %s", port->netns, strerror(errno));
		goto out;
	}
	port->mtu = read_mtu(port->ctl_sock, port->ifname);
	{
		char driver[32] = "";

		port->is_veth = !vsg_driver_name(port->ctl_sock, port->ifname, driver, sizeof(driver)) &&
				!strcmp(driver, "veth");
	}
	/* A histogram slice per receive queue: queues on different CPUs never share a bucket's
	 * cache line (with a shared histogram and shared stream lines, two threads sent ~15 %
	 * fewer frames per CPU second than one here). */
	port->hist_slices = vsg_rx_queues(port->ctl_sock, port->ifname);
	if (port->hist_slices > VSG_MAX_RXQ)
		port->hist_slices = VSG_MAX_RXQ;
	port->raw_cap = raw_cap;
	if (load(&l, VSG_MIN_STREAM_CAP, port->hist_slices, port->raw_cap, err))
		goto out;
	static const struct {
		__u32 flags;
		const char *name;
	} modes[] = {{XDP_FLAGS_DRV_MODE, "native"}, {XDP_FLAGS_SKB_MODE, "generic"}};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = modes[i].flags);

		port->link_fd = bpf_link_create(l.rx_fd, port->ifindex, BPF_XDP, &lopts);
		if (port->link_fd >= 0) {
			port->rx_mode = modes[i].name;
			break;
		}
		if (errno == EBUSY || errno == EEXIST) {
			snprintf(err, VSG_ERR_MAX, "%s already has an XDP program; vsgen counts frames with its own",
				 port->ifname);
			break;
		}
	}
	if (port->link_fd < 0) {
		if (!err[0])
			snprintf(err, VSG_ERR_MAX, "cannot attach the receive program to %s: %s", port->ifname,
				 strerror(errno));
		loaded_free(&l);
		goto out;
	}
	adopt(port, &l, VSG_MIN_STREAM_CAP);
	port->xdp_tx = -1;
	rc = 0;
out:
	if (vsg_enter_ns(eng->own_ns_fd, err))
		rc = -1;
	return rc;
}

/* Make room for `streams` receive streams: a larger object replaces the old one, and the
 * link switches to its receive program atomically (no moment without a program). */
int vsg_port_ensure_streams(struct vsg_engine *eng, struct vsg_port *port, uint32_t streams, char *err)
{
	struct loaded l;
	uint32_t cap = port->stream_cap;

	(void)eng;
	if (streams <= cap)
		return 0;
	while (cap < streams)
		cap *= 2;
	if (load(&l, cap, port->hist_slices, port->raw_cap, err))
		return -1;
	if (bpf_link_update(port->link_fd, l.rx_fd, NULL)) {
		snprintf(err, VSG_ERR_MAX, "cannot replace the receive program of %s: %s", port->ifname,
			 strerror(errno));
		loaded_free(&l);
		return -1;
	}
	adopt(port, &l, cap);
	port->xdp_tx = -1;
	return 0;
}

void vsg_port_close(struct vsg_port *port)
{
	if (port->link_fd > 0)
		close(port->link_fd);
	port->link_fd = -1;
	unmap_all(port);
	if (port->obj)
		bpf_object__close(port->obj);
	port->obj = NULL;
	if (port->ns_fd >= 0)
		close(port->ns_fd);
	port->ns_fd = -1;
	if (port->ctl_sock >= 0)
		close(port->ctl_sock);
	port->ctl_sock = -1;
	port->defined = 0;
}
