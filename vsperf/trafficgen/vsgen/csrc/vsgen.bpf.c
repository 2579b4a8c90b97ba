// SPDX-License-Identifier: GPL-2.0
/* vsgen BPF programs, loaded once per generator port.
 *
 * One program, vsg_xdp, in two roles:
 * transmit: run by the engine through BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES; each run
 *   stamps the next frame (stream, sequence, time) and redirects it out of the port.
 * receive: attached to the port (XDP, through a bpf_link owned by the engine process, so it
 *   goes away with the process); counts this trial's frames per stream, analyses sequence
 *   numbers and records latency, then drops them; every other frame passes untouched.
 *
 * A frame mix (IMIX): the template is the mix's largest frame; the transmit program cuts each
 * frame to its length in the mix's sending pattern (vsg_mix_map) with bpf_xdp_adjust_tail and
 * writes the IPv4/UDP lengths. The receive program can count frames per length (vsg_size_map)
 * and keep every latency (vsg_raw_map, for tests). A warm start's frames (tag | VSG_WARM_TAG)
 * are counted apart and dropped.
 *
 * All per-port state lives in mmapable array maps the engine reads directly. A port's receive
 * queues run in parallel: each queue has its own counters (vsg_rx_map slot) and histogram slice
 * (updated atomically: queues beyond the slices share one), and a stream's state is only touched by the queue its frames arrive on
 * (a stream is sent by one transmit thread, pinned to one CPU, and a veth hands the frames a
 * CPU sends to one queue of its peer), so plain updates are exact there.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

#include "vsgen_shared.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vsg_cfg);
} vsg_cfg_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VSG_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct vsg_txstate);
} vsg_tx_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VSG_MAX_RXQ);
	__type(key, __u32);
	__type(value, struct vsg_rxstat);
} vsg_rx_map SEC(".maps");

/* max_entries is set by the engine before loading: the streams this port receives. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vsg_rxstream);
} vsg_stream_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VSG_HIST_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} vsg_hist_map SEC(".maps");

/* max_entries are set by the engine before loading: a frame mix's pattern (VSG_MIX_MAX), the
 * receive counts per frame length (VSG_SIZE_SLOTS) and the raw latencies kept (1: none). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VSG_MIX_MAX);
	__type(key, __u32);
	__type(value, __u64); /* an array map's values are 8-byte aligned in the engine's mapping */
} vsg_mix_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VSG_SIZE_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} vsg_size_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} vsg_raw_map SEC(".maps");

/* Cut the frame to its length in the mix (the slot's frame number `n`); 0, or -1 when it cannot be. */
static __always_inline int tx_cut(struct xdp_md *ctx, struct vsg_cfg *cfg, __u64 n)
{
	__u32 i = (__u32)(n % cfg->tx_mix_len);
	__u64 *want = bpf_map_lookup_elem(&vsg_mix_map, &i);
	long have = (long)ctx->data_end - (long)ctx->data;

	if (!want)
		return -1;
	if ((long)*want != have && bpf_xdp_adjust_tail(ctx, (int)((long)*want - have)))
		return -1;
	return 0;
}

static __always_inline int tx_frame(struct xdp_md *ctx, const int l3)
{
	__u8 *p, *end, *meta = (__u8 *)(long)ctx->data_meta;
	__u32 k = 0, slot = 0;
	struct vsg_cfg *cfg = bpf_map_lookup_elem(&vsg_cfg_map, &k);
	struct vsg_txstate *st;
	__u32 stream;
	__u16 tag;

	/* The transmit thread's slot: in the metadata its BPF_PROG_RUN call gave (kept as given
	 * for every frame of the call), none for a single thread. */
	if (meta + sizeof(__u32) <= (__u8 *)(long)ctx->data)
		slot = *(__u32 *)meta & (VSG_MAX_THREADS - 1);
	st = bpf_map_lookup_elem(&vsg_tx_map, &slot);
	if (!cfg || !st)
		return XDP_ABORTED;
	if (cfg->tx_mix_len && tx_cut(ctx, cfg, st->sent))
		return XDP_ABORTED;
	p = (__u8 *)(long)ctx->data;
	end = (__u8 *)(long)ctx->data_end;
	/* the frame holds the signature (a tunnel's frame is longer than the shortest one) */
	if (p + VSG_MIN_FRAME > end || p + l3 + VSG_IP_LEN + VSG_L4_LEN + VSG_SIG_LEN > end)
		return XDP_ABORTED;
	if (cfg->tx_mix_len)
		vsg_set_len(p, l3, (__u32)(end - p));
	stream = st->stream;
	tag = st->warm ? cfg->trial_tag | VSG_WARM_TAG : cfg->trial_tag;
	vsg_stamp(p, l3, cfg->tx_vary, cfg->tx_dst_base, cfg->tx_dir, stream, tag, st->round,
		  (__u32)bpf_ktime_get_ns());
	stream += st->step ? st->step : 1;
	if (stream >= cfg->tx_streams) {
		stream = st->first;
		st->round++;
	}
	st->stream = stream;
	st->sent++;
	return bpf_redirect(cfg->tx_ifindex, 0);
}

static __always_inline int vsg_tx(struct xdp_md *ctx, struct vsg_cfg *cfg)
{
	/* One copy per offset, each a constant: the verifier checks packet bounds on constants. */
	switch (cfg->tx_l3_off) {
	case VSG_L3_TAGGED:
		return tx_frame(ctx, VSG_L3_TAGGED);
	case VSG_L3_GRE:
		return tx_frame(ctx, VSG_L3_GRE);
	case VSG_L3_GRE_KEY:
		return tx_frame(ctx, VSG_L3_GRE_KEY);
	case VSG_L3_GRE_KEY_TAGGED:
		return tx_frame(ctx, VSG_L3_GRE_KEY_TAGGED);
	case VSG_L3_UDP_TUNNEL:
		return tx_frame(ctx, VSG_L3_UDP_TUNNEL);
	case VSG_L3_UDP_TUNNEL_TAGGED:
		return tx_frame(ctx, VSG_L3_UDP_TUNNEL_TAGGED);
	}
	return tx_frame(ctx, VSG_L3_PLAIN);
}

static __always_inline __u32 be32_at(const __u8 *b)
{
	return ((__u32)b[0] << 24) | ((__u32)b[1] << 16) | ((__u32)b[2] << 8) | b[3];
}

static __always_inline void sequence(struct vsg_rxstat *st, struct vsg_rxstream *rs, __u32 seq)
{
	__s32 ahead = (__s32)(seq - rs->next);

	rs->rx++;
	if (ahead >= 0) {
		__u32 shift = (__u32)ahead + 1;

		/* Frames next..seq-1 are missing (until one of them arrives late, a reorder). */
		if (ahead > 0)
			rs->last_gap = seq;

		rs->window = shift >= 64 ? 1 : (rs->window << shift) | 1;
		rs->next = seq + 1;
		return;
	}
	/* Behind the highest sequence number seen: a duplicate or a reordered frame. */
	__u32 back = (__u32)(-ahead) - 1;
	if (back < 64) {
		__u64 bit = 1ULL << back;

		if (rs->window & bit) {
			rs->dup++;
			st->dup++;
		} else {
			rs->window |= bit;
			rs->reorder++;
			st->reorder++;
		}
	} else {
		rs->reorder++;
		st->late++;
	}
}

static __always_inline int rx_frame(struct xdp_md *ctx, struct vsg_cfg *cfg, struct vsg_rxstat *st,
				    const int l3, __u64 now)
{
	__u8 *p = (__u8 *)(long)ctx->data;
	__u8 *end = (__u8 *)(long)ctx->data_end;
	__u8 *ip = p + l3;
	__u8 *sig = ip + VSG_IP_LEN + VSG_L4_LEN;
	__u32 dir, stream, slot, lat, bucket, seq, split, tag;
	struct vsg_rxstream *rs;
	__u64 *h;

	if (sig + VSG_SIG_LEN > end)
		goto other;
	/* IPv4 without options, UDP, to 198.18.0.0/15, with this session's identification. */
	if (ip[0] != 0x45 || ip[9] != 17 || ip[16] != 198 || (ip[17] & 0xfe) != 18)
		goto other;
	if ((((__u16)ip[4] << 8) | ip[5]) != cfg->run_tag)
		goto other;
	tag = ((__u32)sig[0] << 8) | sig[1];
	if (tag != cfg->trial_tag) {
		if (tag == (cfg->trial_tag | VSG_WARM_TAG))
			st->warm++;
		else
			st->stale++;
		return XDP_DROP;
	}
	dir = sig[2];
	stream = ((__u32)sig[3] << 16) | ((__u32)sig[4] << 8) | sig[5];
	if (dir >= VSG_MAX_DIRS || stream >= cfg->rx_streams[dir & (VSG_MAX_DIRS - 1)]) {
		st->foreign++;
		return XDP_DROP;
	}
	slot = cfg->rx_offset[dir & (VSG_MAX_DIRS - 1)] + stream;
	rs = bpf_map_lookup_elem(&vsg_stream_map, &slot);
	if (!rs) {
		st->foreign++;
		return XDP_DROP;
	}
	st->frames++;
	/* an 802.1Q tag before the IPv4 header (at 18 the header may follow an MPLS label instead) */
	if ((l3 == VSG_L3_TAGGED && p[12] == 0x81) || l3 == VSG_L3_GRE_KEY_TAGGED || l3 == VSG_L3_UDP_TUNNEL_TAGGED)
		st->tagged++;
	if (st->last_ns) {
		if (now - st->last_ns > st->gap_max_ns) {
			st->gap_max_ns = now - st->last_ns;
			st->gap_end_ns = now;
		}
	} else {
		st->first_ns = now;
	}
	st->last_ns = now;
	seq = be32_at(sig + 6);
	split = cfg->rx_split[dir & (VSG_MAX_DIRS - 1)];
	if (split && (__u64)seq * cfg->rx_streams[dir & (VSG_MAX_DIRS - 1)] + stream >= split)
		rs->rx2++;
	sequence(st, rs, seq);
	lat = (__u32)now - be32_at(sig + 10);
	st->lat_sum_ns += lat;
	if (lat < st->lat_min_ns)
		st->lat_min_ns = lat;
	if (lat > st->lat_max_ns)
		st->lat_max_ns = lat;
	if (cfg->count_sizes) { /* the test frame's length, a tunnel's outer headers not counted */
		__u32 len = (__u32)(end - p) - (__u32)vsg_tunnel_bytes(l3);

		h = bpf_map_lookup_elem(&vsg_size_map, &len);
		if (h)
			__sync_fetch_and_add(h, 1);
	}
	if (cfg->raw_cap) {
		__u32 i = __sync_fetch_and_add(&cfg->raw_next, 1);
		__u64 *raw;

		if (i < cfg->raw_cap) {
			raw = bpf_map_lookup_elem(&vsg_raw_map, &i);
			if (raw)
				*raw = lat;
		}
	}
	if (!cfg->hist_off) {
		bucket = vsg_bucket(lat);
		if (cfg->hist_slices > 1)
			bucket += (ctx->rx_queue_index % cfg->hist_slices) * VSG_HIST_BUCKETS;
		h = bpf_map_lookup_elem(&vsg_hist_map, &bucket);
		if (h)
			__sync_fetch_and_add(h, 1);
	}
	if (st->passed < cfg->rx_pass) { /* for a packet capture on the port */
		st->passed++;
		return XDP_PASS;
	}
	return XDP_DROP;
other:
	st->other++;
	return XDP_PASS;
}

/* The inner IPv4 header's offset of an IPv4 frame that carries a tunnel (VXLAN or GENEVE without
 * options on their UDP ports, GRE of Ethernet with or without a key), inner frame untagged or
 * 802.1Q-tagged; 0 for any other frame (its own IPv4 header is the test frame's). */
static __always_inline int tunnel_l3(const __u8 *p, const __u8 *end)
{
	const __u8 *ip = p + VSG_L3_PLAIN;
	__u16 dport;

	if (p + VSG_L3_UDP_TUNNEL_TAGGED + 1 > end || ip[0] != 0x45)
		return 0;
	if (ip[9] == 17) { /* UDP: VXLAN (flags I set) or GENEVE (no options, Ethernet payload) */
		dport = ((__u16)ip[22] << 8) | ip[23];
		if (dport == VSG_UDP_VXLAN && (ip[28] & 0x08)) {
			/* inner Ethernet at 50 */
		} else if (dport == VSG_UDP_GENEVE && (ip[28] & 0x3f) == 0 && ip[30] == 0x65 && ip[31] == 0x58) {
		} else {
			return 0;
		}
		if (p[62] == 0x08 && p[63] == 0x00)
			return VSG_L3_UDP_TUNNEL;
		if (p[62] == 0x81 && p[63] == 0x00 && p[66] == 0x08 && p[67] == 0x00)
			return VSG_L3_UDP_TUNNEL_TAGGED;
		return 0;
	}
	if (ip[9] == 47 && ip[22] == 0x65 && ip[23] == 0x58 && !(ip[20] & 0xd0)) { /* GRE, no checksum/sequence */
		if (!(ip[20] & 0x20))
			return p[50] == 0x08 && p[51] == 0x00 ? VSG_L3_GRE : 0;
		if (p[54] == 0x08 && p[55] == 0x00)
			return VSG_L3_GRE_KEY;
		if (p[54] == 0x81 && p[55] == 0x00 && p[58] == 0x08 && p[59] == 0x00)
			return VSG_L3_GRE_KEY_TAGGED;
	}
	return 0;
}

static __always_inline int vsg_rx(struct xdp_md *ctx, struct vsg_cfg *cfg)
{
	__u64 now = bpf_ktime_get_ns();
	__u8 *p = (__u8 *)(long)ctx->data;
	__u8 *end = (__u8 *)(long)ctx->data_end;
	__u32 q = ctx->rx_queue_index & (VSG_MAX_RXQ - 1);
	struct vsg_rxstat *st = bpf_map_lookup_elem(&vsg_rx_map, &q);

	if (!st)
		return XDP_PASS;
	if (p + VSG_MIN_FRAME > end) {
		st->other++;
		return XDP_PASS;
	}
	if (p[12] == 0x08 && p[13] == 0x00) {
		int l3 = tunnel_l3(p, end);

		if (l3 == VSG_L3_GRE)
			return rx_frame(ctx, cfg, st, VSG_L3_GRE, now);
		if (l3 == VSG_L3_GRE_KEY)
			return rx_frame(ctx, cfg, st, VSG_L3_GRE_KEY, now);
		if (l3 == VSG_L3_GRE_KEY_TAGGED)
			return rx_frame(ctx, cfg, st, VSG_L3_GRE_KEY_TAGGED, now);
		if (l3 == VSG_L3_UDP_TUNNEL)
			return rx_frame(ctx, cfg, st, VSG_L3_UDP_TUNNEL, now);
		if (l3 == VSG_L3_UDP_TUNNEL_TAGGED)
			return rx_frame(ctx, cfg, st, VSG_L3_UDP_TUNNEL_TAGGED, now);
		return rx_frame(ctx, cfg, st, VSG_L3_PLAIN, now);
	}
	if (p[12] == 0x81 && p[13] == 0x00 && p[16] == 0x08 && p[17] == 0x00)
		return rx_frame(ctx, cfg, st, VSG_L3_TAGGED, now);
	/* one MPLS label (bottom of stack) over IPv4: a switch's push_mpls */
	if (p[12] == 0x88 && p[13] == 0x47 && (p[16] & 1) && (p[18] & 0xf0) == 0x40)
		return rx_frame(ctx, cfg, st, VSG_L3_TAGGED, now);
	st->other++;
	return XDP_PASS;
}

/* One program for both roles. BPF_PROG_RUN runs it on the namespace's loopback device
 * (ifindex 1, never a generator port): transmit. Attached to the port: receive. Being the
 * attached program also keeps it in the kernel's XDP dispatcher, so each BPF_PROG_RUN call
 * skips the dispatcher update (and its RCU grace period, ~24 ms here). */
SEC("xdp.frags")
int vsg_xdp(struct xdp_md *ctx)
{
	__u32 k = 0;
	struct vsg_cfg *cfg = bpf_map_lookup_elem(&vsg_cfg_map, &k);

	if (!cfg)
		return XDP_PASS;
	if (ctx->ingress_ifindex == VSG_LOOPBACK_IFINDEX)
		return vsg_tx(ctx, cfg);
	return vsg_rx(ctx, cfg);
}

char LICENSE[] SEC("license") = "GPL";
