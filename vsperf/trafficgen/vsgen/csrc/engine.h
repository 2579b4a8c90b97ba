/* vsgen engine: shared declarations of the user-space side. */
#ifndef VSGEN_ENGINE_H
#define VSGEN_ENGINE_H

#include <net/if.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <xdp/xsk.h>

#include "vsgen_shared.h"

#define VSG_VERSION "1.0"
#define VSG_MAX_PORTS 16
#define VSG_MAX_FRAME 9014 /* 9018-byte frame without its FCS */
#define VSG_NAME_MAX 64
#define VSG_ERR_MAX 512
#define VSG_MIN_STREAM_CAP 1024u
#define VSG_MAX_JOBS (VSG_MAX_DIRS * VSG_MAX_THREADS)
#define VSG_NMAPS 8
#define VSG_MAX_RAW (1u << 24) /* latencies a port may keep raw (port ... raw=N) */

enum vsg_path { VSG_PATH_AUTO = 0, VSG_PATH_XDP, VSG_PATH_PACKET, VSG_PATH_AFXDP };
enum vsg_mode { VSG_MODE_RATE = 0, VSG_MODE_BURST, VSG_MODE_CONT };

/* A veth's XDP transmit counters (summed over queues). */
struct vsg_xmit {
	uint64_t xmit;   /* frames the peer took */
	uint64_t errors; /* frames its full ring refused */
};

/* One generator port: an interface in a network namespace, with its BPF object. */
struct vsg_port {
	int defined;
	int index;
	char netns[VSG_NAME_MAX]; /* "" : the engine's own namespace */
	char ifname[IF_NAMESIZE];
	int ns_fd;
	int ifindex;
	int mtu;
	/* BPF */
	struct bpf_object *obj;
	int tx_prog_fd;
	int rx_prog_fd;
	int link_fd;
	const char *rx_mode; /* "native" or "generic" */
	uint32_t stream_cap;
	uint32_t hist_slices; /* latency histogram slices (vsg_cfg.hist_slices): one per rx queue */
	struct vsg_cfg *cfg;
	struct vsg_txstate *tx; /* VSG_MAX_THREADS slots, one per transmit thread */
	struct vsg_rxstat *rx; /* VSG_MAX_RXQ slots, one per receive queue: vsg_rx_sum adds them */
	struct vsg_rxstream *streams;
	uint64_t *hist;
	uint64_t *mix;   /* the transmitted direction's frame lengths (vsg_mix_map) */
	uint64_t *sizes; /* frames received per length (vsg_size_map) */
	uint64_t *raw;   /* latencies kept raw (vsg_raw_map), raw_cap of them */
	uint32_t raw_cap;
	size_t map_len[VSG_NMAPS];
	void *map_mem[VSG_NMAPS];
	int xdp_tx; /* -1 unknown, 0 the peer cannot take XDP frames, 1 works */
	char xdp_note[VSG_ERR_MAX]; /* why not, when xdp_tx is 0 */
	int ctl_sock; /* a socket in the port's namespace, for ethtool */
	int is_veth;
};

/* One direction: the frames one port sends to another. */
struct vsg_dir {
	int defined;
	int tx_port;
	int rx_port;
	uint32_t streams;
	int vary;
	uint32_t base;
	int l3;
	size_t len; /* the template's length: the mix's largest frame */
	unsigned char frame[VSG_MAX_FRAME];
	uint32_t mix_len; /* a frame mix: frame i is mix[i % mix_len] bytes long (0: every frame len) */
	uint32_t mix[VSG_MIX_MAX];
};

/* A transmit thread's job and what it measured. A direction sent by N threads has N jobs:
 * thread t sends streams t, t+N, t+2N, ... (each stream's frames from one thread, in order). */
struct vsg_job {
	struct vsg_engine *eng;
	int dir_id;
	int thread;        /* t: the thread's index in its direction, its transmit slot */
	int nthreads;      /* N: the direction's transmit threads */
	uint32_t nstreams; /* streams this thread sends: t, t+N, ... below the direction's streams */
	int idle;          /* a count so small that this thread has no frame to send: not started */
	enum vsg_path path;
	double rate_fps;   /* this thread's share of the direction's rate; 0: as fast as possible */
	uint64_t frames;   /* this thread's share of the direction's frames; 0: until stopped */
	double rate2_fps;  /* two-rate run: the rate after `frames` frames (0: one rate) */
	uint64_t frames2;  /* two-rate run: frames sent at rate2_fps */
	uint64_t warm_frames; /* warm start: frames sent first, tagged apart (0: none) */
	double warm_rate;  /* its rate (a ramp's first rate) */
	double warm_rate2; /* a ramp's last rate (== warm_rate: a lead-in) */
	atomic_int in_warm; /* sending the warm start (ticks count nothing yet) */
	uint64_t warm_sent;
	int cpu;           /* -1: not pinned */
	atomic_int *stop;
	atomic_int *ready; /* threads set up and waiting for `go` */
	_Atomic double *go; /* when every thread of the run starts (0: not yet) */
	/* results */
	atomic_int done;
	_Atomic uint64_t sent;
	double t_start;
	double t_end;
	uint64_t sent1;    /* frames sent before the rate change (all of them in a one-rate run) */
	double t_drop;     /* when the second rate's schedule started (0: no rate change) */
	double cpu_s;
	int failed;
	char err[VSG_ERR_MAX];
	int have_xmit; /* xmit0/xmit1 were read (a veth on the XDP path) */
	struct vsg_xmit xmit0, xmit1;
};

/* One run's arguments (run.c parses them). */
struct run_args {
	enum vsg_mode mode;
	int dirs[VSG_MAX_DIRS];
	int ndirs;
	double rate;
	double rate2; /* rate mode only: after frames[i], frames2 more at rate2 (0: one rate) */
	uint64_t frames2;
	uint64_t frames[VSG_MAX_DIRS];
	int nframes;
	enum vsg_path path;
	double residual;
	uint64_t detail;
	int cpus[VSG_MAX_JOBS];
	int ncpus;
	double tick;
	int threads; /* transmit threads per direction (at most one per stream) */
	uint64_t warm[VSG_MAX_DIRS]; /* warm start frames per direction (one value: each) */
	int nwarm;
	double warm_rate, warm_rate2; /* per direction: the warm start's first and last rate */
	int hist_off;     /* 1: no latency histogram (its cost measured) */
	int count_sizes;  /* 1: count received frames per length */
	int raw;          /* 1: keep each latency raw (ports opened with raw=N) */
	uint64_t pass; /* test frames each receive queue passes to the kernel (a capture), per trial */
	/* the jobs of direction dirs[i]: jobs[job0[i]] .. jobs[job0[i] + njobs[i] - 1] */
	int job0[VSG_MAX_DIRS];
	int njobs[VSG_MAX_DIRS];
};

struct vsg_engine {
	int own_ns_fd;
	uint16_t run_tag;
	uint16_t trial_tag;
	struct vsg_port ports[VSG_MAX_PORTS];
	struct vsg_dir dirs[VSG_MAX_DIRS];
	int ctl_fd;
	atomic_int stop_all; /* a signal asked the engine to stop */
	char *lbuf;          /* control input not yet split into lines */
	size_t llen, lcap;
	char *line;          /* the last line returned by vsg_ctl_readline */
	size_t line_cap;
};

/* One transmit thread's AF_XDP socket and its frames (afxdp.c). */
struct vsg_afxdp {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_ring_prod tx;
	void *area;
	size_t area_len;
	uint64_t *free_addrs; /* frames not in the kernel's hands (a stack) */
	uint32_t nfree;
	uint32_t len;
};

/* afxdp.c */
int vsg_afxdp_open(struct vsg_afxdp *x, const struct vsg_port *port, const struct vsg_dir *d, uint32_t queue,
		   char *err);
long vsg_afxdp_send(struct vsg_afxdp *x, const struct vsg_port *port, const struct vsg_dir *d, uint16_t tag,
		    const struct vsg_job *job, uint64_t first, uint32_t n, char *err);
void vsg_afxdp_drain(struct vsg_afxdp *x, const struct vsg_port *port, double timeout_s);
void vsg_afxdp_close(struct vsg_afxdp *x);

/* util.c */
double vsg_now(void);
double vsg_thread_cpu(void);
int vsg_enter_ns(int ns_fd, char *err);
void vsg_emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vsg_json_escape(const char *in, char *out, size_t max);
void vsg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vsg_parse_u64(const char *s, uint64_t *out);
int vsg_parse_double(const char *s, double *out);
int vsg_hex_decode(const char *hex, unsigned char *out, size_t max, size_t *len);

/* ethtool.c */
int vsg_driver_name(int fd, const char *ifname, char *out, size_t max);
uint32_t vsg_rx_queues(int fd, const char *ifname);
int vsg_veth_xmit(int fd, const char *ifname, struct vsg_xmit *out);

/* port.c */
int vsg_port_open(struct vsg_engine *eng, struct vsg_port *port, uint32_t raw_cap, char *err);
int vsg_port_ensure_streams(struct vsg_engine *eng, struct vsg_port *port, uint32_t streams, char *err);
void vsg_port_close(struct vsg_port *port);

/* tx.c */
void *vsg_tx_thread(void *arg);
int vsg_xdp_probe(struct vsg_engine *eng, struct vsg_port *port, const struct vsg_dir *d, int dir_id, char *err);
void vsg_set_tx_cfg(struct vsg_port *port, const struct vsg_dir *d, int dir_id);

/* main.c */
int vsg_ctl_readline(struct vsg_engine *eng, int timeout_ms, char **line);

/* report.c */
void vsg_emit_tick(struct vsg_engine *eng, struct run_args *a, struct vsg_job *jobs, double t);
uint64_t vsg_job_sent(struct vsg_engine *eng, struct vsg_job *job);
double vsg_process_cpu(void);
void vsg_emit_result(struct vsg_engine *eng, struct run_args *a, struct vsg_job *jobs, double elapsed,
		     double cpu, const char *stopped_by);

/* run.c */
int vsg_run(struct vsg_engine *eng, char **kv, int nkv);

#endif
