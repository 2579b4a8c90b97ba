/* vsgen engine: the AF_XDP socket transmit path (path=afxdp), for ports whose driver takes no
 * XDP live frames (BPF_PROG_RUN redirects need the peer's XDP support; an AF_XDP socket works on
 * any netdev, in copy mode everywhere, zero copy where the driver has it).
 *
 * One socket per transmit thread, bound to queue `thread` of the port (a queue takes one socket:
 * a port needs as many queues as threads). Its UMEM holds VSG_XSK_FRAMES copies of the
 * direction's frame; each frame is stamped in place (the same fields every time) and put on the
 * TX ring; completed frames come back through the completion ring and are reused. The socket
 * loads no XDP program (the port keeps vsgen's receive program): it only transmits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_xdp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

#define VSG_XSK_FRAMES 4096u
#define VSG_XSK_FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define VSG_XSK_RING 2048u

int vsg_afxdp_open(struct vsg_afxdp *x, const struct vsg_port *port, const struct vsg_dir *d, uint32_t queue,
		   char *err)
{
	struct xsk_umem_config ucfg = {
		.fill_size = VSG_XSK_RING, .comp_size = VSG_XSK_RING, .frame_size = VSG_XSK_FRAME_SIZE,
		.frame_headroom = 0, .flags = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = VSG_XSK_RING, .tx_size = VSG_XSK_RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, .xdp_flags = 0, .bind_flags = 0,
	};
	int rc;

	memset(x, 0, sizeof(*x));
	if (d->len > VSG_XSK_FRAME_SIZE - XDP_PACKET_HEADROOM) {
		snprintf(err, VSG_ERR_MAX, "AF_XDP frames carry at most %u bytes; use path=packet",
			 VSG_XSK_FRAME_SIZE - XDP_PACKET_HEADROOM);
		return -1;
	}
	x->len = (uint32_t)d->len;
	x->area_len = (size_t)VSG_XSK_FRAMES * VSG_XSK_FRAME_SIZE;
	x->area = mmap(NULL, x->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		snprintf(err, VSG_ERR_MAX, "cannot allocate the AF_XDP frame area: %s", strerror(errno));
		return -1;
	}
	x->free_addrs = malloc(VSG_XSK_FRAMES * sizeof(uint64_t));
	if (!x->free_addrs) {
		snprintf(err, VSG_ERR_MAX, "out of memory");
		vsg_afxdp_close(x);
		return -1;
	}
	for (uint32_t i = 0; i < VSG_XSK_FRAMES; i++) {
		memcpy((unsigned char *)x->area + (size_t)i * VSG_XSK_FRAME_SIZE, d->frame, d->len);
		x->free_addrs[i] = (uint64_t)i * VSG_XSK_FRAME_SIZE;
	}
	x->nfree = VSG_XSK_FRAMES;
	rc = xsk_umem__create(&x->umem, x->area, x->area_len, &x->fq, &x->cq, &ucfg);
	if (rc) {
		snprintf(err, VSG_ERR_MAX, "cannot register AF_XDP memory for %s: %s", port->ifname, strerror(-rc));
		vsg_afxdp_close(x);
		return -1;
	}
	/* Copy mode first would be safe everywhere; ask for nothing and let the kernel pick. */
	rc = xsk_socket__create(&x->xsk, port->ifname, queue, x->umem, NULL, &x->tx, &scfg);
	if (rc) {
		snprintf(err, VSG_ERR_MAX, "cannot bind an AF_XDP socket to %s queue %u: %s (a port needs as many "
			 "queues as transmit threads)", port->ifname, queue, strerror(-rc));
		vsg_afxdp_close(x);
		return -1;
	}
	return 0;
}

/* Take back the frames the kernel has sent. */
static void reclaim(struct vsg_afxdp *x)
{
	uint32_t idx = 0, n = xsk_ring_cons__peek(&x->cq, VSG_XSK_RING, &idx);

	for (uint32_t i = 0; i < n; i++)
		x->free_addrs[x->nfree++] = *xsk_ring_cons__comp_addr(&x->cq, idx + i);
	if (n)
		xsk_ring_cons__release(&x->cq, n);
}

static int kick(struct vsg_afxdp *x, const struct vsg_port *port, char *err)
{
	if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	if (errno == EAGAIN || errno == EBUSY || errno == ENOBUFS || errno == ENETDOWN || errno == EINTR)
		return 0;
	snprintf(err, VSG_ERR_MAX, "AF_XDP transmission on %s failed: %s", port->ifname, strerror(errno));
	return -1;
}

/* Kick until the kernel has taken every descriptor of the TX ring (in copy mode a kick sends a
 * few dozen frames), so frames leave when they are due; a ring that stops moving (a busy or down
 * link) is left for the next call and the final drain. */
static int push(struct vsg_afxdp *x, const struct vsg_port *port, char *err)
{
	uint32_t stalled = 0, seen = __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);

	while (seen != x->tx.cached_prod && stalled < 64) {
		uint32_t now;

		if (kick(x, port, err))
			return -1;
		reclaim(x);
		now = __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
		stalled = now == seen ? stalled + 1 : 0;
		seen = now;
	}
	return 0;
}

long vsg_afxdp_send(struct vsg_afxdp *x, const struct vsg_port *port, const struct vsg_dir *d, uint16_t tag,
		    const struct vsg_job *job, uint64_t first, uint32_t n, char *err)
{
	uint32_t done = 0;

	while (done < n) {
		uint32_t want = n - done, idx = 0, got;
		struct timespec ts;

		reclaim(x);
		if (want > x->nfree)
			want = x->nfree;
		if (want > VSG_XSK_RING)
			want = VSG_XSK_RING;
		got = want ? xsk_ring_prod__reserve(&x->tx, want, &idx) : 0;
		if (!got) {
			/* Ring or frames all in flight: let the kernel send (a kick sends a few dozen
			 * frames in copy mode), then take them back. */
			if (kick(x, port, err))
				return -1;
			reclaim(x);
			if (!x->nfree)
				sched_yield();
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (uint32_t i = 0; i < got; i++) {
			struct xdp_desc *desc = xsk_ring_prod__tx_desc(&x->tx, idx + i);
			uint64_t addr = x->free_addrs[--x->nfree], k = first + done + i;
			unsigned char *frame = (unsigned char *)xsk_umem__get_data(x->area, addr);
			uint32_t len = d->mix_len ? d->mix[k % d->mix_len] : x->len; /* a frame mix: its length */

			if (d->mix_len)
				vsg_set_len(frame, d->l3, len);
			vsg_stamp(frame, d->l3, (__u8)d->vary, d->base, (uint8_t)job->dir_id,
				  (uint32_t)job->thread + (uint32_t)job->nthreads * (uint32_t)(k % job->nstreams),
				  tag, (uint32_t)(k / job->nstreams),
				  (uint32_t)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec));
			desc->addr = addr;
			desc->len = len;
			desc->options = 0;
		}
		xsk_ring_prod__submit(&x->tx, got);
		if (push(x, port, err))
			return -1;
		done += got;
	}
	return (long)done;
}

/* Kick (for at most `timeout_s`) until the kernel has taken every frame of the TX ring: then
 * every frame has left (copy mode transmits in the kick); their completions need no wait. */
void vsg_afxdp_drain(struct vsg_afxdp *x, const struct vsg_port *port, double timeout_s)
{
	char err[VSG_ERR_MAX];
	double until = vsg_now() + timeout_s;

	while (x->xsk && __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE) != x->tx.cached_prod &&
	       vsg_now() < until) {
		if (kick(x, port, err))
			return;
		reclaim(x);
		sched_yield();
	}
}

void vsg_afxdp_close(struct vsg_afxdp *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, x->area_len);
	free(x->free_addrs);
	memset(x, 0, sizeof(*x));
}
