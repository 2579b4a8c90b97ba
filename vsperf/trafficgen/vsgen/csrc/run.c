/* vsgen engine: one trial (rate, burst or continuous) from arming the counters to the result.
 *
 *   run mode=rate|burst|cont dirs=0,1 [rate=FPS] [frames=N[,N...]] [path=auto|xdp|afxdp|packet]
 *       [residual=S] [detail=K] [cpus=C[,C...]] [tick=S] [rate2=FPS frames2=N] [threads=N] [pass=N]
 *       [warm=N[,N...] warm_rate=FPS [warm_rate2=FPS]] [hist=0|1] [sizes=0|1] [raw=0|1]
 *
 * warm: a warm start, per direction: N frames sent first, paced from warm_rate (to warm_rate2:
 * a ramp; without it a lead-in at warm_rate), tagged apart (trial tag | VSG_WARM_TAG): the
 * receivers count them apart and never as the trial's; the trial's frames follow without a pause
 * (their rate and time start after the warm start). hist=0: no latency histogram (to measure what
 * it costs). sizes=1: count received frames per length (a frame mix). raw=1: keep every latency
 * (ports opened with raw=N keep the first N).
 *
 * pass=N: each receive queue of a port passes its first N test frames of the trial to the kernel
 * (counted as usual) instead of dropping them, for a packet capture on the port.
 * rate and frames are per direction. threads=N: each direction transmits from N threads (at most
 * one per stream; see tx.c for how streams, frames and rate are shared), transmit thread j (all
 * directions' threads in order, direction by direction) on cpus[j % count]. rate2/frames2 (rate mode): after its `frames` frames, each
 * direction goes on without a pause with frames2 frames at rate2 (RFC 2544 system recovery);
 * sequence numbers continue, and the receiver counts apart the frames sent after the change. The engine emits a "tick" line every `tick` seconds
 * while transmitting (cumulative counters), then waits `residual` seconds so that every frame
 * in flight arrives, reads the receive counters and emits one "result" line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

/* BPF_PROG_RUN live frames: one page per frame, headroom and skb_shared_info excluded. */
#define XDP_LIVE_MAX_FRAME 3500u

static int parse_list(const char *s, uint64_t *out, int max)
{
	char buf[256], *save = NULL, *tok;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || vsg_parse_u64(tok, &out[n]))
			return -1;
		n++;
	}
	return n;
}

/* The value `v` of key `k`, a list of 1..max numbers, into the ints `out`: their count, or -1
 * after saying what is wrong. */
static int int_list_arg(const char *k, const char *v, int *out, int max)
{
	uint64_t list[VSG_MAX_JOBS];
	int n = parse_list(v, list, max);

	if (n <= 0) {
		vsg_error("run: bad %s '%s'", k, v);
		return -1;
	}
	for (int j = 0; j < n; j++)
		out[j] = (int)list[j];
	return n;
}

static int parse_args(char **kv, int nkv, struct run_args *a)
{
	uint64_t threads;

	memset(a, 0, sizeof(*a));
	a->mode = -1;
	a->threads = 1;
	a->residual = 2.0;
	a->detail = 64;
	a->tick = 1.0;
	for (int i = 0; i < nkv; i++) {
		char *k = kv[i], *v = strchr(k, '=');

		if (!v) {
			vsg_error("run: expected key=value, got '%s'", k);
			return -1;
		}
		*v++ = '\0';
		if (!strcmp(k, "mode")) {
			a->mode = !strcmp(v, "rate") ? VSG_MODE_RATE : !strcmp(v, "burst") ? VSG_MODE_BURST
				  : !strcmp(v, "cont") ? VSG_MODE_CONT : -1;
			if ((int)a->mode < 0) {
				vsg_error("run: mode must be rate, burst or cont, got '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "dirs")) {
			a->ndirs = int_list_arg(k, v, a->dirs, VSG_MAX_DIRS);
			if (a->ndirs < 0)
				return -1;
		} else if (!strcmp(k, "cpus")) {
			a->ncpus = int_list_arg(k, v, a->cpus, VSG_MAX_JOBS);
			if (a->ncpus < 0)
				return -1;
		} else if (!strcmp(k, "rate")) {
			if (vsg_parse_double(v, &a->rate) || a->rate <= 0) {
				vsg_error("run: rate must be a positive number of frames/s, got '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "rate2")) {
			if (vsg_parse_double(v, &a->rate2) || a->rate2 <= 0) {
				vsg_error("run: rate2 must be a positive number of frames/s, got '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "frames2")) {
			if (vsg_parse_u64(v, &a->frames2) || !a->frames2 || a->frames2 > 0xffffffffull) {
				vsg_error("run: frames2 must be 1..4294967295, got '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "frames")) {
			a->nframes = parse_list(v, a->frames, VSG_MAX_DIRS);
			if (a->nframes <= 0) {
				vsg_error("run: bad frames '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "path")) {
			a->path = !strcmp(v, "auto") ? VSG_PATH_AUTO : !strcmp(v, "xdp") ? VSG_PATH_XDP
				  : !strcmp(v, "packet") ? VSG_PATH_PACKET : !strcmp(v, "afxdp") ? VSG_PATH_AFXDP : -1;
			if ((int)a->path < 0) {
				vsg_error("run: path must be auto, xdp, afxdp or packet, got '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "residual")) {
			if (vsg_parse_double(v, &a->residual) || a->residual < 0 || a->residual > 60) {
				vsg_error("run: residual must be 0..60 s, got '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "tick")) {
			if (vsg_parse_double(v, &a->tick) || a->tick < 0.05) {
				vsg_error("run: tick must be >= 0.05 s, got '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "detail")) {
			if (vsg_parse_u64(v, &a->detail)) {
				vsg_error("run: bad detail '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "warm")) {
			a->nwarm = parse_list(v, a->warm, VSG_MAX_DIRS);
			if (a->nwarm <= 0) {
				vsg_error("run: bad warm '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "warm_rate") || !strcmp(k, "warm_rate2")) {
			double *rate = !strcmp(k, "warm_rate") ? &a->warm_rate : &a->warm_rate2;

			if (vsg_parse_double(v, rate) || *rate <= 0) {
				vsg_error("run: %s must be a positive number of frames/s, got '%s'", k, v);
				return -1;
			}
		} else if (!strcmp(k, "hist") || !strcmp(k, "sizes") || !strcmp(k, "raw")) {
			int *flag = !strcmp(k, "hist") ? &a->hist_off : !strcmp(k, "sizes") ? &a->count_sizes : &a->raw;

			if (strcmp(v, "0") && strcmp(v, "1")) {
				vsg_error("run: %s must be 0 or 1, got '%s'", k, v);
				return -1;
			}
			*flag = !strcmp(k, "hist") ? !strcmp(v, "0") : !strcmp(v, "1");
		} else if (!strcmp(k, "pass")) {
			if (vsg_parse_u64(v, &a->pass) || a->pass > 1000000) {
				vsg_error("run: pass must be 0..1000000 frames, got '%s'", v);
				return -1;
			}
		} else if (!strcmp(k, "threads")) {
			if (vsg_parse_u64(v, &threads) || !threads || threads > VSG_MAX_THREADS) {
				vsg_error("run: threads must be 1..%d, got '%s'", VSG_MAX_THREADS, v);
				return -1;
			}
			a->threads = (int)threads;
		} else {
			vsg_error("run: unknown key '%s'", k);
			return -1;
		}
	}
	if ((int)a->mode < 0 || !a->ndirs) {
		vsg_error("run: mode and dirs are required");
		return -1;
	}
	if (a->mode != VSG_MODE_BURST && a->rate <= 0) {
		vsg_error("run: a %s run needs rate > 0", a->mode == VSG_MODE_RATE ? "rate" : "cont");
		return -1;
	}
	if ((a->rate2 > 0) != (a->frames2 > 0) || (a->frames2 && a->mode != VSG_MODE_RATE)) {
		vsg_error("run: rate2 and frames2 go together, in rate mode only");
		return -1;
	}
	if (a->frames2 && a->threads > 1) {
		/* the receiver splits a direction's frames at one index of the global order */
		vsg_error("run: a two-rate run (rate2, frames2) transmits from one thread per direction");
		return -1;
	}
	for (int j = 0; a->frames2 && j < a->nframes; j++)
		if (a->frames[j] > 0xffffffffull) {
			vsg_error("run: a two-rate run sends at most 4294967295 frames before the change");
			return -1;
		}
	if (a->nwarm && (a->warm_rate <= 0 || (a->nwarm != 1 && a->nwarm != a->ndirs))) {
		vsg_error("run: warm needs warm_rate, and one count or one per direction");
		return -1;
	}
	if (!a->warm_rate2)
		a->warm_rate2 = a->warm_rate;
	if (a->mode != VSG_MODE_CONT && a->nframes != 1 && a->nframes != a->ndirs) {
		vsg_error("run: frames needs one count, or one per direction");
		return -1;
	}
	for (int j = 0; a->mode != VSG_MODE_CONT && j < a->nframes; j++)
		if (!a->frames[j]) {
			vsg_error("run: frames must be > 0");
			return -1;
		}
	return 0;
}

static int check_dirs(struct vsg_engine *eng, struct run_args *a)
{
	int tx_used[VSG_MAX_PORTS] = {0};

	for (int i = 0; i < a->ndirs; i++) {
		int id = a->dirs[i];
		struct vsg_dir *d;

		if (id < 0 || id >= VSG_MAX_DIRS || !eng->dirs[id].defined) {
			vsg_error("run: direction %d is not defined", id);
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (a->dirs[j] == id) {
				vsg_error("run: direction %d listed twice", id);
				return -1;
			}
		d = &eng->dirs[id];
		if (tx_used[d->tx_port]++) {
			vsg_error("run: port %d would transmit two directions at once", d->tx_port);
			return -1;
		}
	}
	return 0;
}

/* Arm every port for a new trial: new tag, receive slots per direction, counters zeroed. */
static int arm(struct vsg_engine *eng, struct run_args *a)
{
	char err[VSG_ERR_MAX] = "";

	/* Tags 1..0x7fff: VSG_WARM_TAG marks a warm start's frames. */
	if (++eng->trial_tag >= VSG_WARM_TAG)
		eng->trial_tag = 1;
	for (int p = 0; p < VSG_MAX_PORTS; p++) {
		struct vsg_port *port = &eng->ports[p];
		uint32_t cum = 0, off[VSG_MAX_DIRS] = {0}, cnt[VSG_MAX_DIRS] = {0};

		if (!port->defined)
			continue;
		for (int i = 0; i < a->ndirs; i++) {
			struct vsg_dir *d = &eng->dirs[a->dirs[i]];

			if (d->rx_port != p)
				continue;
			off[a->dirs[i]] = cum;
			cnt[a->dirs[i]] = d->streams;
			cum += d->streams;
		}
		if (vsg_port_ensure_streams(eng, port, cum, err)) {
			vsg_error("%s", err);
			return -1;
		}
		/* Tag first: a frame of the previous trial arriving now is stale, not counted. */
		port->cfg->trial_tag = eng->trial_tag;
		port->cfg->run_tag = eng->run_tag;
		memcpy(port->cfg->rx_offset, off, sizeof(off));
		memcpy(port->cfg->rx_streams, cnt, sizeof(cnt));
		memset(port->cfg->rx_split, 0, sizeof(port->cfg->rx_split)); /* set at the rate change */
		port->cfg->count_sizes = (uint8_t)a->count_sizes;
		port->cfg->hist_off = (uint8_t)a->hist_off;
		port->cfg->raw_next = 0;
		port->cfg->raw_cap = a->raw ? port->raw_cap : 0;
		port->cfg->tx_mix_len = 0; /* a transmitting port gets its direction's below */
		if (a->count_sizes)
			memset(port->sizes, 0, VSG_SIZE_SLOTS * sizeof(uint64_t));
		port->cfg->rx_pass = (uint32_t)a->pass;
		memset(port->rx, 0, VSG_MAX_RXQ * sizeof(*port->rx));
		for (int q = 0; q < VSG_MAX_RXQ; q++)
			port->rx[q].lat_min_ns = ~0ull;
		memset(port->streams, 0, (size_t)cum * sizeof(struct vsg_rxstream));
		memset(port->hist, 0, (size_t)VSG_HIST_BUCKETS * port->hist_slices * sizeof(uint64_t));
	}
	for (int i = 0; i < a->ndirs; i++) {
		struct vsg_dir *d = &eng->dirs[a->dirs[i]];
		struct vsg_port *port = &eng->ports[d->tx_port];

		vsg_set_tx_cfg(port, d, a->dirs[i]);
		memset(port->tx, 0, VSG_MAX_THREADS * sizeof(*port->tx));
	}
	return 0;
}

static int choose_path(struct vsg_engine *eng, struct run_args *a, int id, enum vsg_path *out)
{
	struct vsg_dir *d = &eng->dirs[id];
	struct vsg_port *port = &eng->ports[d->tx_port];
	char err[VSG_ERR_MAX] = "";

	if (a->path == VSG_PATH_PACKET || a->path == VSG_PATH_AFXDP) {
		*out = a->path; /* AF_XDP refuses a frame too large for its UMEM frames itself */
		return 0;
	}
	if (a->path == VSG_PATH_XDP && d->len <= XDP_LIVE_MAX_FRAME) {
		*out = VSG_PATH_XDP; /* asked for: no probe, the user knows the peer takes XDP frames */
		return 0;
	}
	if (d->len > XDP_LIVE_MAX_FRAME) {
		if (a->path == VSG_PATH_XDP) {
			vsg_error("run: XDP live frames carry at most %u bytes; use path=packet", XDP_LIVE_MAX_FRAME);
			return -1;
		}
		*out = VSG_PATH_PACKET;
		return 0;
	}
	if (port->xdp_tx < 0)
		port->xdp_tx = vsg_xdp_probe(eng, port, d, id, err) == 0;
	if (!port->xdp_tx) {
		if (err[0])
			snprintf(port->xdp_note, sizeof(port->xdp_note), "%s", err);
		*out = VSG_PATH_PACKET;
		return 0;
	}
	*out = VSG_PATH_XDP;
	return 0;
}

/* Wait `seconds`, answering the control input (nothing but "stop" is accepted while busy). */
static void wait_busy(struct vsg_engine *eng, double until, atomic_int *stop, const char **stopped_by)
{
	for (;;) {
		double left = until - vsg_now();
		char *line = NULL;
		int rc;

		if (left <= 0 || atomic_load(&eng->stop_all))
			return;
		rc = vsg_ctl_readline(eng, (int)(left * 1000) + 1, &line);
		if (rc < 0) {
			/* Control input closed: stop the run, then the engine. */
			atomic_store(&eng->stop_all, 1);
			atomic_store(stop, 1);
			*stopped_by = "eof";
			return;
		}
		if (rc > 0) {
			if (!strcmp(line, "stop")) {
				atomic_store(stop, 1);
				*stopped_by = "stop";
			} else if (!strcmp(line, "quit")) {
				/* vsperf is leaving (interrupted): end the run now, then the engine. */
				atomic_store(stop, 1);
				atomic_store(&eng->stop_all, 1);
				*stopped_by = "quit";
			} else if (line[0]) {
				vsg_error("busy: a run is in progress (only 'stop' and 'quit' are accepted)");
			}
		}
	}
}

/* Share direction `i`'s frames, rate and streams among its threads (see tx.c). */
static int plan_jobs(struct vsg_engine *eng, struct run_args *a, int i, struct vsg_job *jobs, int *njobs,
		     atomic_int *stop)
{
	const struct vsg_dir *d = &eng->dirs[a->dirs[i]];
	uint32_t s = d->streams, n = (uint32_t)a->threads < s ? (uint32_t)a->threads : s;
	uint64_t total = a->mode == VSG_MODE_CONT ? 0 : a->frames[a->nframes == 1 ? 0 : i];
	uint64_t per_stream = total / s, extra = total % s; /* streams 0..extra-1 get one more */
	enum vsg_path path;

	if (choose_path(eng, a, a->dirs[i], &path))
		return -1;
	a->job0[i] = *njobs;
	a->njobs[i] = (int)n;
	for (uint32_t t = 0; t < n; t++) {
		struct vsg_job *job = &jobs[(*njobs)++];

		job->eng = eng;
		job->dir_id = a->dirs[i];
		job->thread = (int)t;
		job->nthreads = (int)n;
		job->nstreams = (s - t + n - 1) / n;
		job->path = path;
		job->frames = per_stream * job->nstreams + (extra > t ? (extra - t + n - 1) / n : 0);
		job->idle = total && !job->frames;
		job->rate_fps = a->mode == VSG_MODE_BURST ? 0 : a->rate * job->nstreams / s;
		job->rate2_fps = a->rate2;
		job->frames2 = a->frames2;
		if (a->nwarm) {
			/* the thread's share of the warm start, as of the streams (thread 0: the rest) */
			uint64_t warm = a->warm[a->nwarm == 1 ? 0 : i];

			job->warm_frames = warm * job->nstreams / s; /* thread 0 gets the rest, below */
			job->warm_rate = a->warm_rate * job->nstreams / s;
			job->warm_rate2 = a->warm_rate2 * job->nstreams / s;
		}
		job->cpu = a->ncpus ? a->cpus[(*njobs - 1) % a->ncpus] : -1;
		job->stop = stop;
	}
	if (a->nwarm) {
		uint64_t warm = a->warm[a->nwarm == 1 ? 0 : i], given = 0;

		for (uint32_t t = 0; t < n; t++)
			given += jobs[a->job0[i] + (int)t].warm_frames;
		jobs[a->job0[i]].warm_frames += warm - given;
	}
	return 0;
}

int vsg_run(struct vsg_engine *eng, char **kv, int nkv)
{
	struct run_args a;
	struct vsg_job jobs[VSG_MAX_JOBS];
	pthread_t threads[VSG_MAX_JOBS];
	int running_job[VSG_MAX_JOBS] = {0};
	atomic_int stop = 0, ready = 0;
	_Atomic double go = 0;
	const char *stopped_by = "done";
	double t0, cpu0, next_tick;
	int njobs = 0, started = 0, failed = 0;

	if (parse_args(kv, nkv, &a) || check_dirs(eng, &a))
		return -1;
	memset(jobs, 0, sizeof(jobs));
	for (int i = 0; i < a.ndirs; i++)
		if (plan_jobs(eng, &a, i, jobs, &njobs, &stop))
			return -1;
	if (arm(eng, &a))
		return -1;
	for (int j = 0; j < njobs; j++) {
		struct vsg_txstate *st = &eng->ports[eng->dirs[jobs[j].dir_id].tx_port].tx[jobs[j].thread];

		st->stream = st->first = (uint32_t)jobs[j].thread;
		st->step = (uint32_t)jobs[j].nthreads;
		jobs[j].ready = &ready;
		jobs[j].go = &go;
		if (jobs[j].idle)
			atomic_store(&jobs[j].done, 1);
	}
	cpu0 = vsg_process_cpu();
	t0 = vsg_now();
	for (int j = 0; j < njobs; j++) {
		if (jobs[j].idle)
			continue;
		if (pthread_create(&threads[j], NULL, vsg_tx_thread, &jobs[j])) {
			vsg_error("cannot start a transmit thread: %s", strerror(errno));
			atomic_store(&stop, 1);
			failed = 1;
			break;
		}
		running_job[j] = 1;
		started++;
	}
	/* Every thread set up (its socket open, ...) or failed: then all start at one instant. */
	for (double until = vsg_now() + 5.0; vsg_now() < until; usleep(50)) {
		int alive = 0;

		for (int j = 0; j < njobs; j++)
			alive += running_job[j] && !atomic_load(&jobs[j].done);
		if (atomic_load(&ready) >= alive)
			break;
	}
	t0 = vsg_now() + 100e-6;
	atomic_store(&go, t0);
	next_tick = t0 + a.tick;
	for (;;) {
		int running = 0;

		for (int j = 0; j < njobs; j++)
			running += running_job[j] && !atomic_load(&jobs[j].done);
		if (!running || atomic_load(&stop))
			break;
		wait_busy(eng, next_tick < vsg_now() + 0.01 ? next_tick : vsg_now() + 0.01, &stop, &stopped_by);
		if (atomic_load(&eng->stop_all) && !atomic_load(&stop)) {
			atomic_store(&stop, 1);
			stopped_by = "signal";
		}
		if (vsg_now() >= next_tick) {
			vsg_emit_tick(eng, &a, jobs, next_tick - t0);
			next_tick += a.tick;
		}
	}
	for (int j = 0; j < njobs; j++) {
		if (!running_job[j])
			continue;
		pthread_join(threads[j], NULL);
		if (jobs[j].failed) {
			vsg_error("%s", jobs[j].err);
			failed = 1;
		}
	}
	if (failed || !started)
		return -1;
	if (!atomic_load(&eng->stop_all)) {
		atomic_int ignored = 0;

		wait_busy(eng, vsg_now() + a.residual, &ignored, &stopped_by);
	}
	vsg_emit_result(eng, &a, jobs, vsg_now() - t0, vsg_process_cpu() - cpu0, stopped_by);
	return 0;
}
