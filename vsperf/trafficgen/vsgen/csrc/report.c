/* vsgen engine: what a run reports: ticks while it transmits, then its result.
 *
 * The result gives, per direction, what was sent (path, counts, achieved rate, transmit CPU
 * time, frames the peer's full ring refused) and what its receiving port got of it per stream
 * (sequence analysis, loss computed against the frames each stream was sent) and its warm start's
 * frames (`warm_tx`); per port, the receive counters, the warm start's frames it received
 * (`warm`), the non-empty latency histogram buckets, the frames per length (`sizes`, when
 * counted) and the raw latencies (`raw`, when kept).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "engine.h"

static const char *path_name(enum vsg_path p)
{
	return p == VSG_PATH_XDP ? "xdp-live" : p == VSG_PATH_AFXDP ? "af_xdp" : "af_packet";
}

/* A port's receive counters over its queues. The longest gap is the longest of any one queue
 * (with one receive queue, the port's). */
static void vsg_rx_sum(const struct vsg_port *port, struct vsg_rxstat *out)
{
	memset(out, 0, sizeof(*out));
	out->lat_min_ns = ~0ull;
	for (int q = 0; q < VSG_MAX_RXQ; q++) {
		const struct vsg_rxstat *s = &port->rx[q];

		out->frames += s->frames;
		out->dup += s->dup;
		out->reorder += s->reorder;
		out->late += s->late;
		out->stale += s->stale;
		out->foreign += s->foreign;
		out->other += s->other;
		out->tagged += s->tagged;
		out->warm += s->warm;
		out->lat_sum_ns += s->lat_sum_ns;
		if (s->lat_min_ns < out->lat_min_ns)
			out->lat_min_ns = s->lat_min_ns;
		if (s->lat_max_ns > out->lat_max_ns)
			out->lat_max_ns = s->lat_max_ns;
		if (s->first_ns && (!out->first_ns || s->first_ns < out->first_ns))
			out->first_ns = s->first_ns;
		if (s->last_ns > out->last_ns)
			out->last_ns = s->last_ns;
		if (s->gap_max_ns > out->gap_max_ns) {
			out->gap_max_ns = s->gap_max_ns;
			out->gap_end_ns = s->gap_end_ns;
		}
	}
}

void vsg_emit_tick(struct vsg_engine *eng, struct run_args *a, struct vsg_job *jobs, double t)
{
	char buf[2048];
	size_t o = 0;

	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "{\"ev\":\"tick\",\"t\":%.6f,\"tx\":{", t);
	for (int i = 0; i < a->ndirs; i++) {
		uint64_t sent = 0;

		for (int j = a->job0[i]; j < a->job0[i] + a->njobs[i]; j++)
			sent += vsg_job_sent(eng, &jobs[j]);
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\"%d\":%llu", i ? "," : "", a->dirs[i],
				      (unsigned long long)sent);
	}
	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "},\"rx\":{");
	for (int p = 0, first = 1; p < VSG_MAX_PORTS; p++) {
		uint64_t frames = 0;

		if (!eng->ports[p].defined)
			continue;
		for (int q = 0; q < VSG_MAX_RXQ; q++)
			frames += eng->ports[p].rx[q].frames;
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\"%d\":%llu", first ? "" : ",", p,
				      (unsigned long long)frames);
		first = 0;
	}
	snprintf(buf + o, sizeof(buf) - o, "}}");
	vsg_emit("%s", buf);
}

double vsg_process_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Frames stream `s` was sent: its thread's frames go round robin over the thread's streams. */
static uint64_t stream_tx(const struct vsg_job *jobs, int n, uint32_t s)
{
	const struct vsg_job *job = &jobs[s % (uint32_t)n];
	uint64_t sent = atomic_load(&job->sent), r = s / (uint32_t)n;

	return sent / job->nstreams + (r < sent % job->nstreams);
}

static void result_dir(FILE *f, struct vsg_engine *eng, struct run_args *a, struct vsg_job *jobs, int i)
{
	int id = a->dirs[i], n = a->njobs[i];
	struct vsg_dir *d = &eng->dirs[id];
	struct vsg_port *rxp = &eng->ports[d->rx_port];
	struct vsg_job *job = &jobs[a->job0[i]]; /* thread 0: the one sending when others are idle */
	uint64_t sent = 0, frames = 0, sent1 = 0, warm = 0;
	uint64_t rx = 0, dup = 0, reo = 0, lost = 0, excess = 0, with_loss = 0, max_loss = 0, rx2 = 0;
	int64_t last_lost = -1; /* index (seq * streams + stream) of the last frame lost, -1: none */
	uint32_t off = rxp->cfg->rx_offset[id];
	double t_start = job->t_start, t_end = job->t_end, cpu_s = 0, achieved, span;
	int detail = d->streams <= a->detail;
	long long ring_drops = -1;
	uint64_t xmit0_errors = 0, xmit1_errors = 0;

	/* The direction's threads together: frames summed, from the first start to the last end;
	 * the port's veth counters from the earliest reading to the latest. */
	for (int j = a->job0[i]; j < a->job0[i] + n; j++) {
		const struct vsg_job *t = &jobs[j];

		sent += atomic_load(&t->sent);
		frames += t->frames;
		sent1 += t->sent1;
		warm += t->warm_sent;
		cpu_s += t->cpu_s;
		if (t->idle)
			continue;
		if (t->t_start < t_start)
			t_start = t->t_start;
		if (t->t_end > t_end)
			t_end = t->t_end;
		if (t->have_xmit) {
			if (ring_drops < 0 || t->xmit0.errors < xmit0_errors)
				xmit0_errors = t->xmit0.errors;
			if (ring_drops < 0 || t->xmit1.errors > xmit1_errors)
				xmit1_errors = t->xmit1.errors;
			ring_drops = (long long)(xmit1_errors - xmit0_errors);
		}
	}
	span = t_end - t_start;

	/* Paced: N frames own N slots of 1/rate (the last one ends 1/rate after it is sent). */
	if (a->rate > 0)
		span += 1.0 / a->rate;
	achieved = span > 0 ? (double)sent / span : 0.0;
	const struct vsg_port *txp = &eng->ports[d->tx_port];
	char note[2 * VSG_ERR_MAX] = "";

	if (job->path == VSG_PATH_PACKET && !txp->xdp_tx && txp->xdp_note[0])
		vsg_json_escape(txp->xdp_note, note, sizeof(note));
	fprintf(f, "%s{\"dir\":%d,\"tx_port\":%d,\"rx_port\":%d,\"path\":\"%s\",\"path_note\":\"%s\","
		   "\"ring_drops\":%lld,\"streams\":%u,"
		   "\"threads\":%d,\"requested_fps\":%.3f,\"frames_requested\":%llu,\"tx\":%llu,\"tx_time_s\":%.9f,"
		   "\"achieved_fps\":%.3f,\"cpu_s\":%.6f,\"t_start_ns\":%.0f,\"rate2_fps\":%.3f,"
		   "\"frames2_requested\":%llu,\"tx1\":%llu,\"t_drop_s\":%.9f,\"warm_tx\":%llu",
		i ? "," : "", id, d->tx_port, d->rx_port, path_name(job->path), note,
		ring_drops, d->streams, n, a->rate, (unsigned long long)frames, (unsigned long long)sent, span, achieved,
		cpu_s, t_start * 1e9, job->rate2_fps, (unsigned long long)job->frames2, (unsigned long long)sent1,
		job->t_drop > 0 ? job->t_drop - t_start : 0.0, (unsigned long long)warm);
	if (detail)
		fprintf(f, ",\"detail\":[");
	for (uint32_t s = 0; s < d->streams; s++) {
		const struct vsg_rxstream *rs = &rxp->streams[off + s];
		uint64_t tx = stream_tx(jobs + a->job0[i], n, s), uniq = rs->rx - rs->dup, l = tx > uniq ? tx - uniq : 0;

		/* The last frame lost: skipped by a later frame of its stream, or never followed by one. */
		int64_t miss = rs->last_gap ? (int64_t)rs->last_gap - 1 : -1;

		if (tx && rs->next < tx)
			miss = (int64_t)tx - 1;
		if (miss >= 0 && miss * (int64_t)d->streams + (int64_t)s > last_lost)
			last_lost = miss * (int64_t)d->streams + (int64_t)s;
		rx2 += rs->rx2;
		rx += rs->rx;
		dup += rs->dup;
		reo += rs->reorder;
		lost += l;
		excess += uniq > tx ? uniq - tx : 0;
		with_loss += l > 0;
		if (l > max_loss)
			max_loss = l;
		if (detail)
			fprintf(f, "%s[%u,%llu,%u,%u,%u]", s ? "," : "", s, (unsigned long long)tx, rs->rx, rs->dup,
				rs->reorder);
	}
	if (detail)
		fprintf(f, "]");
	fprintf(f, ",\"rx\":%llu,\"dup\":%llu,\"reorder\":%llu,\"lost\":%llu,\"excess\":%llu,"
		   "\"streams_with_loss\":%llu,\"max_stream_loss\":%llu,\"rx2\":%llu,\"last_lost\":%lld}",
		(unsigned long long)rx, (unsigned long long)dup, (unsigned long long)reo, (unsigned long long)lost,
		(unsigned long long)excess, (unsigned long long)with_loss, (unsigned long long)max_loss,
		(unsigned long long)rx2, (long long)last_lost);
}

static void result_port(FILE *f, struct vsg_port *port, const struct run_args *a, int first)
{
	struct vsg_rxstat sum;
	const struct vsg_rxstat *st = &sum;
	int nb = 0;

	vsg_rx_sum(port, &sum);

	fprintf(f, "%s{\"port\":%d,\"rx_mode\":\"%s\",\"frames\":%llu,\"dup\":%llu,\"reorder\":%llu,"
		   "\"late\":%llu,\"stale\":%llu,\"foreign\":%llu,\"other\":%llu,\"tagged\":%llu,"
		   "\"lat_sum_ns\":%llu,\"lat_min_ns\":%llu,\"lat_max_ns\":%llu,\"first_ns\":%llu,"
		   "\"last_ns\":%llu,\"gap_max_ns\":%llu,\"gap_end_ns\":%llu,\"warm\":%llu,\"hist\":[",
		first ? "" : ",", port->index, port->rx_mode, (unsigned long long)st->frames,
		(unsigned long long)st->dup, (unsigned long long)st->reorder, (unsigned long long)st->late,
		(unsigned long long)st->stale, (unsigned long long)st->foreign, (unsigned long long)st->other,
		(unsigned long long)st->tagged, (unsigned long long)st->lat_sum_ns,
		(unsigned long long)(st->frames ? st->lat_min_ns : 0), (unsigned long long)st->lat_max_ns,
		(unsigned long long)st->first_ns, (unsigned long long)st->last_ns, (unsigned long long)st->gap_max_ns,
		(unsigned long long)st->gap_end_ns, (unsigned long long)st->warm);
	for (uint32_t b = 0; b < VSG_HIST_BUCKETS; b++) {
		uint64_t n = 0;

		for (uint32_t s = 0; s < port->hist_slices; s++) /* one slice per receive queue */
			n += port->hist[(size_t)s * VSG_HIST_BUCKETS + b];
		if (n)
			fprintf(f, "%s[%u,%llu]", nb++ ? "," : "", b, (unsigned long long)n);
	}
	fprintf(f, "]");
	if (a->count_sizes) {
		fprintf(f, ",\"sizes\":[");
		for (uint32_t len = 0, k = 0; len < VSG_SIZE_SLOTS; len++)
			if (port->sizes[len])
				fprintf(f, "%s[%u,%llu]", k++ ? "," : "", len, (unsigned long long)port->sizes[len]);
		fprintf(f, "]");
	}
	if (a->raw && port->raw_cap) {
		uint32_t kept = port->cfg->raw_next < port->raw_cap ? port->cfg->raw_next : port->raw_cap;

		fprintf(f, ",\"raw_seen\":%u,\"raw\":[", port->cfg->raw_next);
		for (uint32_t i = 0; i < kept; i++)
			fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)port->raw[i]);
		fprintf(f, "]");
	}
	fprintf(f, "}");
}

void vsg_emit_result(struct vsg_engine *eng, struct run_args *a, struct vsg_job *jobs, double elapsed,
			double cpu, const char *stopped_by)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	static const char *const modes[] = {"rate", "burst", "cont"};

	if (!f) {
		vsg_error("out of memory");
		return;
	}
	fprintf(f, "{\"ev\":\"result\",\"mode\":\"%s\",\"trial_tag\":%u,\"elapsed_s\":%.6f,\"cpu_s\":%.6f,"
		   "\"residual_s\":%.3f,\"stopped_by\":\"%s\",\"dirs\":[",
		modes[a->mode], eng->trial_tag, elapsed, cpu, a->residual, stopped_by);
	for (int i = 0; i < a->ndirs; i++)
		result_dir(f, eng, a, jobs, i);
	fprintf(f, "],\"ports\":[");
	for (int p = 0, first = 1; p < VSG_MAX_PORTS; p++) {
		if (!eng->ports[p].defined)
			continue;
		result_port(f, &eng->ports[p], a, first);
		first = 0;
	}
	fprintf(f, "]}");
	fclose(f);
	vsg_emit("%s", text);
	free(text);
}

