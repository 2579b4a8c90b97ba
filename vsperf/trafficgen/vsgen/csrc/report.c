/* vsgen engine: what a run reports: ticks while it transmits, then its result.
 *
 * The result gives, per direction, what was sent (path, counts, achieved rate, transmit CPU
 * time, frames the peer's full ring refused) and what its receiving port got of it per stream
 * (sequence analysis, loss computed against the frames each stream was sent); per port, the
 * receive counters and the non-empty latency histogram buckets.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "engine.h"

static const char *path_name(enum vsg_path p)
{
	return p == VSG_PATH_XDP ? "xdp-live" : "af_packet";
}

void vsg_emit_tick(struct vsg_engine *eng, struct run_args *a, struct vsg_job *jobs, double t)
{
	char buf[2048];
	size_t o = 0;

	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "{\"ev\":\"tick\",\"t\":%.6f,\"tx\":{", t);
	for (int i = 0; i < a->ndirs; i++) {
		struct vsg_port *port = &eng->ports[eng->dirs[a->dirs[i]].tx_port];
		uint64_t sent = jobs[i].path == VSG_PATH_XDP ? port->tx->sent : atomic_load(&jobs[i].sent);

		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\"%d\":%llu", i ? "," : "", a->dirs[i],
				      (unsigned long long)sent);
	}
	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "},\"rx\":{");
	for (int p = 0, first = 1; p < VSG_MAX_PORTS; p++) {
		if (!eng->ports[p].defined)
			continue;
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\"%d\":%llu", first ? "" : ",", p,
				      (unsigned long long)eng->ports[p].rx->frames);
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

static void result_dir(FILE *f, struct vsg_engine *eng, struct run_args *a, struct vsg_job *job, int i)
{
	int id = a->dirs[i];
	struct vsg_dir *d = &eng->dirs[id];
	struct vsg_port *rxp = &eng->ports[d->rx_port];
	uint64_t sent = atomic_load(&job->sent), base = sent / d->streams, extra = sent % d->streams;
	uint64_t rx = 0, dup = 0, reo = 0, lost = 0, excess = 0, with_loss = 0, max_loss = 0, rx2 = 0;
	int64_t last_lost = -1; /* index (seq * streams + stream) of the last frame lost, -1: none */
	uint32_t off = rxp->cfg->rx_offset[id];
	double span = job->t_end - job->t_start, achieved;
	int detail = d->streams <= a->detail;

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
		   "\"requested_fps\":%.3f,\"frames_requested\":%llu,\"tx\":%llu,\"tx_time_s\":%.9f,"
		   "\"achieved_fps\":%.3f,\"cpu_s\":%.6f,\"t_start_ns\":%.0f,\"rate2_fps\":%.3f,"
		   "\"frames2_requested\":%llu,\"tx1\":%llu,\"t_drop_s\":%.9f",
		i ? "," : "", id, d->tx_port, d->rx_port, path_name(job->path), note,
		job->have_xmit ? (long long)(job->xmit1.errors - job->xmit0.errors) : -1LL, d->streams, a->rate,
		(unsigned long long)job->frames, (unsigned long long)sent, span, achieved, job->cpu_s,
		job->t_start * 1e9, job->rate2_fps, (unsigned long long)job->frames2, (unsigned long long)job->sent1,
		job->t_drop > 0 ? job->t_drop - job->t_start : 0.0);
	if (detail)
		fprintf(f, ",\"detail\":[");
	for (uint32_t s = 0; s < d->streams; s++) {
		const struct vsg_rxstream *rs = &rxp->streams[off + s];
		uint64_t tx = base + (s < extra), uniq = rs->rx - rs->dup, l = tx > uniq ? tx - uniq : 0;

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

static void result_port(FILE *f, struct vsg_port *port, int first)
{
	const struct vsg_rxstat *st = port->rx;
	int nb = 0;

	fprintf(f, "%s{\"port\":%d,\"rx_mode\":\"%s\",\"frames\":%llu,\"dup\":%llu,\"reorder\":%llu,"
		   "\"late\":%llu,\"stale\":%llu,\"foreign\":%llu,\"other\":%llu,\"tagged\":%llu,"
		   "\"lat_sum_ns\":%llu,\"lat_min_ns\":%llu,\"lat_max_ns\":%llu,\"first_ns\":%llu,"
		   "\"last_ns\":%llu,\"gap_max_ns\":%llu,\"gap_end_ns\":%llu,\"hist\":[",
		first ? "" : ",", port->index, port->rx_mode, (unsigned long long)st->frames,
		(unsigned long long)st->dup, (unsigned long long)st->reorder, (unsigned long long)st->late,
		(unsigned long long)st->stale, (unsigned long long)st->foreign, (unsigned long long)st->other,
		(unsigned long long)st->tagged, (unsigned long long)st->lat_sum_ns,
		(unsigned long long)(st->frames ? st->lat_min_ns : 0), (unsigned long long)st->lat_max_ns,
		(unsigned long long)st->first_ns, (unsigned long long)st->last_ns, (unsigned long long)st->gap_max_ns,
		(unsigned long long)st->gap_end_ns);
	for (uint32_t b = 0; b < VSG_HIST_BUCKETS; b++)
		if (port->hist[b])
			fprintf(f, "%s[%u,%llu]", nb++ ? "," : "", b, (unsigned long long)port->hist[b]);
	fprintf(f, "]}");
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
		result_dir(f, eng, a, &jobs[i], i);
	fprintf(f, "],\"ports\":[");
	for (int p = 0, first = 1; p < VSG_MAX_PORTS; p++) {
		if (!eng->ports[p].defined)
			continue;
		result_port(f, &eng->ports[p], first);
		first = 0;
	}
	fprintf(f, "]}");
	fclose(f);
	vsg_emit("%s", text);
	free(text);
}

