/* vsgen engine: transmit threads, one or more per direction, each inside its port's namespace.
 *
 * Threads: thread t of a direction's N sends streams t, t+N, t+2N, ... round robin (its own
 * transmit slot, vsg_txstate), so every stream's sequence numbers come from one thread, in
 * order; its share of the frames is what those streams get of the direction's count (frame i
 * of the direction belongs to stream i % streams), and its share of the rate is its share of
 * the streams. The counts add up exactly to the direction's.
 *
 * Paths:
 *  - XDP live frames: BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES runs vsg_tx once per frame
 *    on a page-pool copy of the template; the program stamps the frame and redirects it out
 *    of the port (the veth hands it to its peer's NAPI, no socket or qdisc on the way).
 *  - AF_XDP (afxdp.c): an AF_XDP socket per thread (queue = thread), frames stamped in its UMEM.
 *  - AF_PACKET: sendmmsg() on a raw socket that bypasses the qdisc, frames stamped here.
 *
 * Pacing: frame i (from 0) is due at t0 + i / rate. The thread sleeps (absolute deadlines,
 * 1 ns timer slack) until a chunk of frames is due, then sends every frame due by now, so a
 * late wake-up is made up at once and the count of a trial is exact whatever the jitter.
 * A chunk is about 100 us of traffic (at most 256 frames): smooth enough for any queue.
 * A paced run ends at its planned end (plus 1 % and 50 ms) even when frames remain: a
 * generator that cannot keep the rate sends fewer frames at a lower achieved rate, which
 * vsperf flags, instead of stretching the trial far beyond its duration.
 *
 * Frame mix: the template is the mix's largest frame; frame k of a thread is cut to the length
 * mix[k % mix_len] (by the transmit program on the XDP path, here on the others) with its IPv4
 * and UDP lengths rewritten, so the sizes interleave in the mix's pattern.
 *
 * Warm start: a thread first sends its share of the warm start's frames, paced from warm_rate
 * up to warm_rate2 (a ramp; equal rates: a lead-in) and tagged apart, then at once its trial,
 * whose schedule, sequence numbers and counts start from zero after it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_packet.h>
#include <math.h>
#include <net/ethernet.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"

#define CHUNK_S 100e-6
#define PACED_CHUNK_MAX 256u
#define XDP_UNPACED_CHUNK 65536u
#define XDP_CATCHUP_CHUNK 4096u
#define PKT_BATCH 64u
#define XDP_BATCH 64u
#define PACED_GRACE_S 0.05     /* a paced run may overrun its plan by this much... */
#define PACED_GRACE_SHARE 0.01 /* ...plus this share of it, before it ends short */

static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static uint32_t paced_chunk(double rate)
{
	double c = floor(rate * CHUNK_S);

	if (c < 1)
		return 1;
	return c > PACED_CHUNK_MAX ? PACED_CHUNK_MAX : (uint32_t)c;
}

/* Frames due by time `t` (frame 0 at t0), never more than the total. */
static uint64_t due_by(double t, double t0, double rate, uint64_t total)
{
	double d = floor((t - t0) * rate) + 1.0;
	uint64_t due = d < 1 ? 1 : (uint64_t)d;

	return total && due > total ? total : due;
}

/* Run the transmit program on `n` copies of `data`. With `meta_len` (a thread's slot, 4 bytes
 * before the frame) the program finds its thread's state in the XDP metadata. */
static int xdp_send(struct vsg_port *port, const unsigned char *data, size_t size, uint32_t meta_len, uint32_t n,
		    char *err)
{
	struct xdp_md md = {.data = meta_len, .data_end = (__u32)size};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = (__u32)size, .repeat = n,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = XDP_BATCH);

	if (meta_len) {
		o.ctx_in = &md;
		o.ctx_size_in = sizeof(md);
	}
	if (bpf_prog_test_run_opts(port->tx_prog_fd, &o) && errno != EINTR) {
		snprintf(err, VSG_ERR_MAX, "XDP live-frame transmission on %s failed: %s", port->ifname,
			 strerror(errno));
		return -1;
	}
	return 0;
}

struct pkt_tx {
	int fd;
	unsigned char *bufs;
	struct mmsghdr msgs[PKT_BATCH];
	struct iovec iov[PKT_BATCH];
};

static int pkt_open(struct pkt_tx *p, const struct vsg_port *port, const struct vsg_dir *d, char *err)
{
	struct sockaddr_ll ll;
	int one = 1, sndbuf = 4 << 20;

	memset(p, 0, sizeof(*p));
	/* Protocol 0: this socket never receives, it only sends. */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		snprintf(err, VSG_ERR_MAX, "cannot open a packet socket: %s", strerror(errno));
		return -1;
	}
	memset(&ll, 0, sizeof(ll));
	ll.sll_family = AF_PACKET;
	ll.sll_ifindex = port->ifindex;
	if (bind(p->fd, (struct sockaddr *)&ll, sizeof(ll))) {
		snprintf(err, VSG_ERR_MAX, "cannot bind a packet socket to %s: %s", port->ifname, strerror(errno));
		close(p->fd);
		return -1;
	}
	setsockopt(p->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	setsockopt(p->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	p->bufs = malloc(PKT_BATCH * d->len);
	if (!p->bufs) {
		snprintf(err, VSG_ERR_MAX, "out of memory");
		close(p->fd);
		return -1;
	}
	for (uint32_t i = 0; i < PKT_BATCH; i++) {
		memcpy(p->bufs + i * d->len, d->frame, d->len);
		p->iov[i].iov_base = p->bufs + i * d->len;
		p->iov[i].iov_len = d->len;
		p->msgs[i].msg_hdr.msg_iov = &p->iov[i];
		p->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

/* The length (without FCS) of frame `k` of a thread: its place in the mix, or the template's. */
static uint32_t frame_len(const struct vsg_dir *d, uint64_t k)
{
	return d->mix_len ? d->mix[k % d->mix_len] : (uint32_t)d->len;
}

/* Send `n` frames of thread `job`, numbered (within the thread) from `first`, with trial tag
 * `tag`; returns how many the kernel took (-1: failure). */
static long pkt_send(struct pkt_tx *p, const struct vsg_port *port, const struct vsg_dir *d, uint16_t tag,
		     const struct vsg_job *job, uint64_t first, uint32_t n, char *err)
{
	long total = 0;

	while (n) {
		uint32_t batch = n > PKT_BATCH ? PKT_BATCH : n;
		struct timespec ts;
		int sent;

		for (uint32_t i = 0; i < batch; i++) {
			uint64_t idx = first + (uint64_t)total + i;
			unsigned char *buf = p->bufs + i * d->len;

			if (d->mix_len) {
				p->iov[i].iov_len = frame_len(d, idx);
				vsg_set_len(buf, d->l3, (uint32_t)p->iov[i].iov_len);
			}
			clock_gettime(CLOCK_MONOTONIC, &ts);
			vsg_stamp(buf, d->l3, (__u8)d->vary, d->base, (uint8_t)job->dir_id,
				  (uint32_t)job->thread + (uint32_t)job->nthreads * (uint32_t)(idx % job->nstreams),
				  tag, (uint32_t)(idx / job->nstreams),
				  (uint32_t)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec));
		}
		sent = sendmmsg(p->fd, p->msgs, batch, 0);
		if (sent < 0) {
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
				sched_yield();
				continue;
			}
			snprintf(err, VSG_ERR_MAX, "sending on %s failed: %s", port->ifname, strerror(errno));
			return -1;
		}
		total += sent;
		n -= (uint32_t)sent;
	}
	return total;
}

static uint64_t sent_so_far(struct vsg_job *job, const struct vsg_port *port)
{
	return job->path == VSG_PATH_XDP ? port->tx[job->thread].sent : atomic_load(&job->sent);
}

/* What vsg_emit_tick and the result count as sent by `job` so far. */
uint64_t vsg_job_sent(struct vsg_engine *eng, struct vsg_job *job)
{
	if (job->idle || atomic_load(&job->in_warm))
		return 0;
	return sent_so_far(job, &eng->ports[eng->dirs[job->dir_id].tx_port]);
}

/* Seconds after the warm start began when its frame `k` (from 0) is due: the rate goes linearly
 * from warm_rate to warm_rate2 over the time its frames take (N(t) = r0 t + (r1 - r0) t^2 / 2T). */
static double warm_time(const struct vsg_job *job, double k)
{
	double r0 = job->warm_rate, r1 = job->warm_rate2;
	double span = (double)job->warm_frames / ((r0 + r1) / 2.0), a = (r1 - r0) / (2.0 * span);

	if (a < 1e-12 && a > -1e-12)
		return k / r0;
	return (-r0 + sqrt(r0 * r0 + 4.0 * a * k)) / (2.0 * a);
}

/* Frames of the warm start due `t` seconds after it began (the inverse of warm_time). */
static double warm_time_inverse(const struct vsg_job *job, double t)
{
	double r0 = job->warm_rate, r1 = job->warm_rate2;
	double span = (double)job->warm_frames / ((r0 + r1) / 2.0);

	if (t > span)
		t = span;
	return r0 * t + (r1 - r0) * t * t / (2.0 * span);
}

/* Send the thread's warm start (tagged apart), paced; 0, or -1 on failure. The transmit slot
 * and the counts start from zero for the trial afterwards. */
static int send_warm(struct vsg_job *job, struct vsg_port *port, const struct vsg_dir *d, struct pkt_tx *pkt,
		     struct vsg_afxdp *xsk, const unsigned char *xdp_data, uint32_t meta_len)
{
	struct vsg_txstate *st = &port->tx[job->thread];
	uint64_t total = job->warm_frames, sent = 0;
	double t0 = vsg_now();
	uint16_t tag = (uint16_t)(port->cfg->trial_tag | VSG_WARM_TAG);
	uint32_t chunk = paced_chunk(job->warm_rate2 > job->warm_rate ? job->warm_rate2 : job->warm_rate);

	atomic_store(&job->in_warm, 1);
	st->warm = 1;
	while (sent < total && !atomic_load(job->stop)) {
		uint64_t need = total - sent < chunk ? total - sent : chunk, due;
		double now = vsg_now();

		due = (uint64_t)floor(warm_time_inverse(job, now - t0)) + 1;
		if (due > total)
			due = total;
		if (due < sent + need) {
			sleep_until(t0 + warm_time(job, (double)(sent + need - 1)));
			continue;
		}
		need = due - sent > XDP_CATCHUP_CHUNK ? XDP_CATCHUP_CHUNK : due - sent;
		if (job->path == VSG_PATH_XDP) {
			if (xdp_send(port, xdp_data, meta_len + d->len, meta_len, (uint32_t)need, job->err))
				return -1;
			sent = st->sent;
		} else {
			long m = job->path == VSG_PATH_AFXDP ? vsg_afxdp_send(xsk, port, d, tag, job, sent, (uint32_t)need, job->err)
							     : pkt_send(pkt, port, d, tag, job, sent, (uint32_t)need, job->err);

			if (m < 0)
				return -1;
			sent += (uint64_t)m;
		}
	}
	job->warm_sent = sent;
	st->warm = 0;
	st->sent = 0;
	st->stream = st->first;
	st->round = 0;
	atomic_store(&job->in_warm, 0);
	return 0;
}

void *vsg_tx_thread(void *arg)
{
	struct vsg_job *job = arg;
	struct vsg_engine *eng = job->eng;
	const struct vsg_dir *d = &eng->dirs[job->dir_id];
	struct vsg_port *port = &eng->ports[d->tx_port];
	struct pkt_tx pkt = {.fd = -1};
	struct vsg_afxdp xsk = {0};
	unsigned char *xdp_data = NULL; /* the frame, after the thread's slot when N > 1 */
	uint32_t meta_len = job->nthreads > 1 ? (uint32_t)sizeof(uint32_t) : 0;
	sigset_t all;
	double t0, cpu0, deadline = 0, rate = job->rate_fps;
	uint64_t total = job->frames, sent = 0, base = 0; /* base: frames before the current rate */
	int change_pending = job->frames2 > 0 && rate > 0 && total;
	uint32_t chunk = rate > 0 ? paced_chunk(rate) : (job->path == VSG_PATH_XDP ? XDP_UNPACED_CHUNK : PKT_BATCH);

	/* Signals are the main thread's business; a transmit syscall is never interrupted. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (job->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(job->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	if (vsg_enter_ns(port->ns_fd, job->err))
		goto failed;
	if (job->path == VSG_PATH_PACKET && pkt_open(&pkt, port, d, job->err))
		goto failed;
	if (job->path == VSG_PATH_AFXDP && vsg_afxdp_open(&xsk, port, d, (uint32_t)job->thread, job->err))
		goto failed;
	if (job->path == VSG_PATH_XDP) {
		uint32_t slot = (uint32_t)job->thread;

		xdp_data = malloc(meta_len + d->len);
		if (!xdp_data) {
			snprintf(job->err, VSG_ERR_MAX, "out of memory");
			goto failed;
		}
		memcpy(xdp_data, &slot, meta_len);
		memcpy(xdp_data + meta_len, d->frame, d->len);
	}
	job->have_xmit = job->path == VSG_PATH_XDP && port->is_veth &&
			 !vsg_veth_xmit(port->ctl_sock, port->ifname, &job->xmit0);
	/* Start together: a direction's schedule, and so its rate, counts from one instant. */
	atomic_fetch_add(job->ready, 1);
	while (!(t0 = atomic_load(job->go))) {
		if (atomic_load(job->stop)) {
			t0 = vsg_now();
			break;
		}
		usleep(50);
	}
	sleep_until(t0);
	cpu0 = vsg_thread_cpu();
	if (job->warm_frames) {
		if (send_warm(job, port, d, &pkt, &xsk, xdp_data, meta_len))
			goto failed;
		t0 = vsg_now(); /* the trial follows at once; its schedule starts here */
	}
	job->t_start = t0;
	if (rate > 0 && total)
		deadline = t0 + (double)total / rate * (1.0 + PACED_GRACE_SHARE) + PACED_GRACE_S;
	job->sent1 = 0;
	job->t_drop = 0;
	for (;;) {
		uint64_t want;
		uint32_t n;

		if (atomic_load(job->stop))
			break;
		if (total && sent >= total) {
			if (!change_pending)
				break;
			/* Rate change, without a pause: the new schedule starts where the old one ends
			 * (or now, if the old one ran late); the receiver counts frames from here apart. */
			change_pending = 0;
			job->sent1 = sent;
			t0 = t0 + (double)(total - base) / rate;
			if (vsg_now() > t0)
				t0 = vsg_now();
			job->t_drop = t0;
			eng->ports[d->rx_port].cfg->rx_split[job->dir_id] = (uint32_t)sent;
			base = sent;
			rate = job->rate2_fps;
			total = sent + job->frames2;
			chunk = paced_chunk(rate);
			deadline = t0 + (double)job->frames2 / rate * (1.0 + PACED_GRACE_SHARE) + PACED_GRACE_S;
			continue;
		}
		if (rate > 0) {
			double now = vsg_now();
			uint64_t due = base + due_by(now, t0, rate, total - base);
			uint64_t need = total && total - sent < chunk ? total - sent : chunk;

			if (deadline > 0 && now > deadline) {
				/* behind and out of time: the trial (or its first rate) ends on time, short */
				if (!change_pending)
					break;
				total = sent;
				continue;
			}
			if (due < sent + need) {
				/* Wait until a whole chunk (or the last, smaller one) is due. */
				sleep_until(t0 + (double)(sent + need - 1 - base) / rate);
				continue;
			}
			want = due - sent;
			if (want > XDP_CATCHUP_CHUNK)
				want = XDP_CATCHUP_CHUNK;
		} else {
			want = total ? total - sent : chunk;
			if (want > chunk)
				want = chunk;
		}
		n = (uint32_t)want;
		if (job->path == VSG_PATH_XDP) {
			if (xdp_send(port, xdp_data, meta_len + d->len, meta_len, n, job->err))
				goto failed;
			sent = port->tx[job->thread].sent;
		} else {
			uint16_t tag = port->cfg->trial_tag;
			long m = job->path == VSG_PATH_AFXDP ? vsg_afxdp_send(&xsk, port, d, tag, job, sent, n, job->err)
							     : pkt_send(&pkt, port, d, tag, job, sent, n, job->err);

			if (m < 0)
				goto failed;
			sent += (uint64_t)m;
			atomic_store(&job->sent, sent);
		}
	}
	if (job->path == VSG_PATH_AFXDP)
		vsg_afxdp_drain(&xsk, port, 1.0); /* every frame handed over leaves before the end */
	job->t_end = vsg_now();
	job->cpu_s = vsg_thread_cpu() - cpu0;
	if (!job->t_drop)
		job->sent1 = sent_so_far(job, port);
	if (job->have_xmit && vsg_veth_xmit(port->ctl_sock, port->ifname, &job->xmit1))
		job->have_xmit = 0;
	atomic_store(&job->sent, sent_so_far(job, port));
	goto out;
failed:
	job->failed = 1;
	job->t_end = vsg_now();
out:
	atomic_store(&job->done, 1);
	if (pkt.fd >= 0)
		close(pkt.fd);
	free(pkt.bufs);
	free(xdp_data);
	vsg_afxdp_close(&xsk);
	return NULL;
}

/* Point the port's transmit program at direction `d`. */
void vsg_set_tx_cfg(struct vsg_port *port, const struct vsg_dir *d, int dir_id)
{
	port->cfg->tx_ifindex = (uint32_t)port->ifindex;
	port->cfg->tx_streams = d->streams;
	port->cfg->tx_dst_base = d->base;
	port->cfg->tx_l3_off = (uint16_t)d->l3;
	port->cfg->tx_vary = (uint8_t)d->vary;
	port->cfg->tx_dir = (uint8_t)dir_id;
	for (uint32_t i = 0; i < d->mix_len; i++)
		port->mix[i] = d->mix[i];
	port->cfg->tx_mix_len = d->mix_len;
}

/* Send one frame through XDP and check on the veth's counters that the peer took it.
 * The frame carries trial tag 0 (never a trial's): receivers count it as stale. */
int vsg_xdp_probe(struct vsg_engine *eng, struct vsg_port *port, const struct vsg_dir *d, int dir_id, char *err)
{
	struct vsg_xmit before, after;
	uint16_t tag = port->cfg->trial_tag;
	int rc;

	if (!port->is_veth) {
		snprintf(err, VSG_ERR_MAX, "XDP transmission is checked on veth ports only; %s is not one",
			 port->ifname);
		return -1;
	}
	if (vsg_veth_xmit(port->ctl_sock, port->ifname, &before)) {
		snprintf(err, VSG_ERR_MAX, "cannot read the counters of %s: %s", port->ifname, strerror(errno));
		return -1;
	}
	vsg_set_tx_cfg(port, d, dir_id);
	port->cfg->trial_tag = 0;
	if (vsg_enter_ns(port->ns_fd, err))
		return -1;
	rc = xdp_send(port, d->frame, d->len, 0, 1, err);
	port->cfg->trial_tag = tag;
	if (vsg_enter_ns(eng->own_ns_fd, err) || rc)
		return -1;
	if (vsg_veth_xmit(port->ctl_sock, port->ifname, &after)) {
		snprintf(err, VSG_ERR_MAX, "cannot read the counters of %s: %s", port->ifname, strerror(errno));
		return -1;
	}
	if (after.xmit > before.xmit || after.errors > before.errors)
		return 0;
	snprintf(err, VSG_ERR_MAX, "the peer of %s takes no XDP frames: it needs an XDP program or GRO on "
		 "(ethtool -K PEER gro on)", port->ifname);
	return -1;
}
