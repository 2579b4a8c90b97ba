/* vsgen engine: the veth counters that tell whether the peer takes XDP frames.
 *
 * A veth hands XDP-redirected frames straight to its peer's NAPI ring. If the peer has no
 * NAPI (no XDP program and GRO off) the frames vanish without a trace except that the
 * sender's "tx_queue_N_xdp_xmit" counter does not move; a full ring (the device under test
 * not keeping up) counts them in "tx_queue_N_xdp_xmit_errors" instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"

static int ethtool(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

/* The driver of `ifname` ("veth", ...) into `out`; the socket decides the namespace. */
int vsg_driver_name(int fd, const char *ifname, char *out, size_t max)
{
	struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};

	if (ethtool(fd, ifname, &info))
		return -1;
	snprintf(out, max, "%s", info.driver);
	return 0;
}

/* Receive queues of `ifname` (ethtool channels: rx or combined), 1 when it does not say. */
uint32_t vsg_rx_queues(int fd, const char *ifname)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	uint32_t n;

	if (ethtool(fd, ifname, &ch))
		return 1;
	n = ch.rx_count > ch.combined_count ? ch.rx_count : ch.combined_count;
	return n ? n : 1;
}

int vsg_veth_xmit(int fd, const char *ifname, struct vsg_xmit *out)
{
	struct {
		struct ethtool_sset_info hdr;
		__u32 len;
	} sset = {.hdr = {.cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_STATS}};
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *stats = NULL;
	__u32 n;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (ethtool(fd, ifname, &sset) || !sset.hdr.sset_mask)
		return -1;
	n = sset.len;
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	stats = calloc(1, sizeof(*stats) + (size_t)n * sizeof(__u64));
	if (!names || !stats)
		goto out;
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = n;
	stats->cmd = ETHTOOL_GSTATS;
	stats->n_stats = n;
	if (ethtool(fd, ifname, names) || ethtool(fd, ifname, stats))
		goto out;
	for (__u32 i = 0; i < n && i < stats->n_stats; i++) {
		const char *name = (const char *)names->data + (size_t)i * ETH_GSTRING_LEN;
		unsigned q;
		char tail[ETH_GSTRING_LEN];

		if (sscanf(name, "tx_queue_%u_xdp_xmi%31s", &q, tail) != 2)
			continue;
		if (!strcmp(tail, "t"))
			out->xmit += stats->data[i];
		else if (!strcmp(tail, "t_errors"))
			out->errors += stats->data[i];
	}
	rc = 0;
out:
	free(names);
	free(stats);
	return rc;
}
