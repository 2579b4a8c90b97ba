/* vsgen: definitions shared by the BPF programs (vsgen.bpf.c) and the engine (C, user space).
 *
 * The Python side (vsperf/vsgen/frames.py, vsperf/vsgen/histogram.py) mirrors the signature
 * layout and the histogram buckets defined here; tests/unit/test_vsgen_*.py pin both.
 *
 * Test frame: Ethernet [802.1Q] IPv4 (IHL 5, id = run tag) UDP (checksum 0) then the 14-byte
 * signature right after the UDP header (it fits a 64-byte frame with a VLAN tag):
 *   0..1   trial tag (u16, big endian): changes every trial, so late frames of an earlier
 *          trial are told apart ("stale") from the current trial's frames; a warm start's
 *          frames carry the trial's tag with VSG_WARM_TAG set (received, never counted)
 *   2      direction id (u8, 0..VSG_MAX_DIRS-1)
 *   3..5   stream index within the direction (u24)
 *   6..9   sequence number within the stream (u32; every stream gets one frame per round)
 *   10..13 transmit time, CLOCK_MONOTONIC nanoseconds, low 32 bits (u32)
 */
#ifndef VSGEN_SHARED_H
#define VSGEN_SHARED_H

#include <linux/types.h>

#define VSG_MAX_DIRS 8
#define VSG_MAX_RXQ 8 /* receive counters per port: one slot per receive queue (modulo 8) */
#define VSG_MAX_THREADS 8 /* transmit threads per direction (a power of 2: BPF masks with it) */
#define VSG_SIG_LEN 14
#define VSG_L4_LEN 8
#define VSG_IP_LEN 20
#define VSG_MIN_FRAME 60 /* 64-byte frame without its FCS */
#define VSG_LOOPBACK_IFINDEX 1 /* lo: where BPF_PROG_RUN's frames come from */
#define VSG_WARM_TAG 0x8000u /* trial tags are 1..0x7fff; a warm start's frames set this bit */
#define VSG_MIX_MAX 1024 /* frame sizes in one group of a frame mix (the sending pattern) */
#define VSG_SIZE_SLOTS 9216 /* receive counts per frame length (without FCS), 0..9215 */

/* Offsets of the test frame's IPv4 header: plain (14), 802.1Q (18, or one MPLS label on
 * receive), and behind a tunnel's outer Ethernet + IPv4 headers: GRE (4-byte header, 8 with a
 * key) or VXLAN/GENEVE (UDP + 8 bytes), then the inner Ethernet header (+4 with an inner tag). */
#define VSG_L3_PLAIN 14
#define VSG_L3_TAGGED 18
#define VSG_L3_GRE 52
#define VSG_L3_GRE_KEY 56
#define VSG_L3_GRE_KEY_TAGGED 60
#define VSG_L3_UDP_TUNNEL 64
#define VSG_L3_UDP_TUNNEL_TAGGED 68
#define VSG_UDP_VXLAN 4789
#define VSG_UDP_GENEVE 6081

#define VSG_VARY_NONE 0
#define VSG_VARY_MAC 1 /* destination MAC, low 32 bits + stream */
#define VSG_VARY_IP 2  /* destination IPv4 + stream (header checksum recomputed) */
#define VSG_VARY_UDP 3 /* destination UDP port + stream */
#define VSG_VARY_SMAC 4 /* source MAC, low 32 bits + stream (RFC 2889 learning frames) */

/* Latency histogram: four linear tiers, finer than 1 us below 134 ms.
 *   [0, 2^16) ns        width 16 ns     4096 buckets
 *   [2^16, 2^20) ns     width 64 ns     15360 buckets
 *   [2^20, 2^27) ns     width 512 ns    260096 buckets
 *   [2^27, 2^32) ns     width 65536 ns  63488 buckets */
#define VSG_HIST_T1 4096u
#define VSG_HIST_T2 19456u
#define VSG_HIST_T3 279552u
#define VSG_HIST_BUCKETS 343040u

static inline __attribute__((always_inline)) __u32 vsg_bucket(__u32 ns)
{
	if (ns < (1u << 16))
		return ns >> 4;
	if (ns < (1u << 20))
		return VSG_HIST_T1 + ((ns - (1u << 16)) >> 6);
	if (ns < (1u << 27))
		return VSG_HIST_T2 + ((ns - (1u << 20)) >> 9);
	return VSG_HIST_T3 + ((ns - (1u << 27)) >> 16);
}

/* Per-port configuration, written by the engine before each trial. */
struct vsg_cfg {
	/* transmit: the direction this port sends */
	__u32 tx_ifindex;  /* where the transmit program redirects frames (this port) */
	__u32 tx_streams;  /* >= 1 */
	__u32 tx_dst_base; /* base of the varied field (MAC low 32 bits, IPv4 or UDP port) */
	__u16 tx_l3_off;   /* 14, or 18 with an 802.1Q tag; deeper behind a tunnel's headers (VSG_L3_*) */
	__u8 tx_vary;      /* VSG_VARY_* */
	__u8 tx_dir;       /* direction id written in the signature */
	/* both */
	__u16 trial_tag;   /* signature bytes 0..1 of the current trial */
	__u16 run_tag;     /* IPv4 identification of every frame of this engine session */
	/* receive: where each direction's streams are counted in the rxstream map */
	__u32 rx_offset[VSG_MAX_DIRS];
	__u32 rx_streams[VSG_MAX_DIRS]; /* 0: frames of direction d are not expected here */
	/* two-rate runs: frames of direction d with index (seq * streams + stream) >= rx_split[d]
	 * were sent after the rate change and are also counted in vsg_rxstream.rx2 (0: no split) */
	__u32 rx_split[VSG_MAX_DIRS];
	/* latency histogram slices: receive queue q counts into slice q % hist_slices (queues on
	 * different CPUs then share no histogram cache line); the engine sums the slices */
	__u32 hist_slices;
	/* frame mix: the transmit program sends frame i of a thread at length tx_mix[i % tx_mix_len]
	 * (vsg_mix_map; 0: every frame at the template's length) */
	__u32 tx_mix_len;
	/* receive options of the trial: count frames per length (vsg_size_map), keep no latency
	 * histogram (to measure what it costs), keep each latency in vsg_raw_map (up to raw_cap;
	 * raw_next counts them, past raw_cap too) */
	__u8 count_sizes;
	__u8 hist_off;
	__u16 pad16;
	__u32 raw_cap;
	__u32 raw_next;
	/* test frames each receive queue passes to the kernel (a packet capture sees them) instead
	 * of dropping them, per trial; 0: none */
	__u32 rx_pass;
};

/* Transmit progress of one transmit thread of the port's direction (the transmit program's only
 * state; one 64-byte slot per thread, so threads on different CPUs share no cache line). Thread t
 * of N sends streams t, t+N, t+2N, ... round robin: each stream's sequence numbers come from one
 * thread, in order. The thread's slot index is the first 4 bytes of the XDP metadata of the frame
 * BPF_PROG_RUN is given (no metadata: slot 0). */
struct vsg_txstate {
	__u64 sent;   /* frames produced by the transmit program for this thread */
	__u32 stream; /* stream of the next frame */
	__u32 round;  /* sequence number of the next frame (frames go round robin over streams) */
	__u32 first;  /* the thread's first stream (its index t) */
	__u32 step;   /* the direction's thread count N (0 counts as 1) */
	__u8 warm;    /* 1: the thread sends its warm start (tag | VSG_WARM_TAG) */
	__u8 pad[39];
};

/* Receive counters of one receive queue of a port (slot rx_queue_index % VSG_MAX_RXQ: queues
 * run in parallel on different CPUs, each updates its own 128-byte slot); reset by the engine
 * before each trial and summed by it. */
struct vsg_rxstat {
	__u64 frames;     /* frames of the current trial, duplicates included */
	__u64 dup;        /* duplicates (sequence number already seen, within the window) */
	__u64 reorder;    /* arrived after a later frame of the same stream (within the window) */
	__u64 late;       /* arrived more than 64 frames late: reordered or duplicated, not known */
	__u64 stale;      /* frames of this session but of an earlier trial */
	__u64 foreign;    /* this session's tag but a direction/stream not expected here */
	__u64 other;      /* anything else: ARP, IPv6, other traffic (passed to the stack) */
	__u64 tagged;     /* test frames that carried an 802.1Q tag in the frame data */
	__u64 lat_sum_ns;
	__u64 lat_min_ns; /* reset to ~0 */
	__u64 lat_max_ns;
	/* receive times (bpf_ktime_get_ns, i.e. CLOCK_MONOTONIC) of test frames: the first, the
	 * last, and the longest interval between two consecutive ones (the frame that ended it) */
	__u64 first_ns;
	__u64 last_ns;
	__u64 gap_max_ns;
	__u64 gap_end_ns;
	__u32 warm;       /* frames of this trial's warm start (received, never counted) */
	__u32 passed;     /* test frames passed to the kernel for a capture (cfg rx_pass) */
};

/* Receive state of one stream: sequence analysis over a 64-frame window. One 64-byte slot per
 * stream: neighbouring streams come from different transmit threads, whose frames arrive on
 * different queues and CPUs, so they must not share a cache line. */
struct vsg_rxstream {
	__u64 window; /* bit i set: sequence number next-1-i arrived */
	__u32 next;   /* highest sequence number seen + 1 (0: none yet) */
	__u32 rx;     /* frames, duplicates included */
	__u32 dup;
	__u32 reorder; /* within the window, plus those beyond it */
	__u32 last_gap; /* highest sequence number skipped by a later frame, + 1 (0: none skipped) */
	__u32 rx2;      /* frames sent after the rate change of a two-rate run (see rx_split) */
	__u8 pad[32];
};

static inline __attribute__((always_inline)) __u16 vsg_ip_csum(const __u8 *ip)
{
	__u32 sum = 0;
#ifdef __clang__
#pragma unroll
#endif
	for (int i = 0; i < VSG_IP_LEN; i += 2) {
		if (i == 10)
			continue; /* the checksum field itself */
		sum += ((__u32)ip[i] << 8) | ip[i + 1];
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The bytes a tunnel's outer headers (Ethernet, IPv4, GRE or UDP + VXLAN/GENEVE) add before the
 * test frame whose IPv4 header is at `l3` (VSG_L3_*; an inner 802.1Q tag is the test frame's);
 * 0 without a tunnel. */
static inline __attribute__((always_inline)) int vsg_tunnel_bytes(const int l3)
{
	if (l3 <= VSG_L3_TAGGED)
		return 0;
	if (l3 == VSG_L3_GRE_KEY_TAGGED || l3 == VSG_L3_UDP_TUNNEL_TAGGED)
		return l3 - VSG_L3_TAGGED;
	return l3 - VSG_L3_PLAIN;
}

/* Give the IPv4 header `ip` (and the UDP header after it, when `udp`) the lengths of an IPv4
 * packet of `ip_len` bytes and the header checksum that goes with them. */
static inline __attribute__((always_inline)) void vsg_set_ip_len(__u8 *ip, __u32 ip_len, const int udp)
{
	__u16 csum;

	ip[2] = ip_len >> 8;
	ip[3] = ip_len;
	if (udp) {
		ip[VSG_IP_LEN + 4] = (ip_len - VSG_IP_LEN) >> 8;
		ip[VSG_IP_LEN + 5] = ip_len - VSG_IP_LEN;
	}
	csum = vsg_ip_csum(ip);
	ip[10] = csum >> 8;
	ip[11] = csum;
}

/* Give frame `p` (IPv4 header at `l3`) the IPv4 and UDP lengths of a `len`-byte frame (without
 * FCS) and the header checksum that goes with them: a frame mix sends one template cut to length.
 * Behind a tunnel (l3 > 18) the outer IPv4 header (and the outer UDP header of VXLAN/GENEVE,
 * whose checksum is 0) gets the outer lengths too. */
static inline __attribute__((always_inline)) void vsg_set_len(__u8 *p, const int l3, __u32 len)
{
	vsg_set_ip_len(p + l3, len - (__u32)l3, 1);
	if (l3 > VSG_L3_TAGGED)
		vsg_set_ip_len(p + VSG_L3_PLAIN, len - VSG_L3_PLAIN,
			       l3 == VSG_L3_UDP_TUNNEL || l3 == VSG_L3_UDP_TUNNEL_TAGGED);
}

/* Write stream `stream`'s varied field and the signature into frame `p` (at least
 * VSG_MIN_FRAME bytes, IPv4 header at `l3`). Used for every frame by both transmit paths. */
static inline __attribute__((always_inline)) void
vsg_stamp(__u8 *p, const int l3, __u8 vary, __u32 dst_base, __u8 dir, __u32 stream, __u16 trial_tag,
	  __u32 seq, __u32 ts)
{
	__u32 v = dst_base + stream;
	__u8 *sig = p + l3 + VSG_IP_LEN + VSG_L4_LEN;

	if (vary == VSG_VARY_MAC) {
		p[2] = v >> 24;
		p[3] = v >> 16;
		p[4] = v >> 8;
		p[5] = v;
	} else if (vary == VSG_VARY_IP) {
		__u8 *ip = p + l3;
		__u16 csum;

		ip[16] = v >> 24;
		ip[17] = v >> 16;
		ip[18] = v >> 8;
		ip[19] = v;
		csum = vsg_ip_csum(ip);
		ip[10] = csum >> 8;
		ip[11] = csum;
	} else if (vary == VSG_VARY_SMAC) {
		p[8] = v >> 24;
		p[9] = v >> 16;
		p[10] = v >> 8;
		p[11] = v;
	} else if (vary == VSG_VARY_UDP) {
		p[l3 + VSG_IP_LEN + 2] = v >> 8;
		p[l3 + VSG_IP_LEN + 3] = v;
	}
	sig[0] = trial_tag >> 8;
	sig[1] = trial_tag;
	sig[2] = dir;
	sig[3] = stream >> 16;
	sig[4] = stream >> 8;
	sig[5] = stream;
	sig[6] = seq >> 24;
	sig[7] = seq >> 16;
	sig[8] = seq >> 8;
	sig[9] = seq;
	sig[10] = ts >> 24;
	sig[11] = ts >> 16;
	sig[12] = ts >> 8;
	sig[13] = ts;
}

#endif
