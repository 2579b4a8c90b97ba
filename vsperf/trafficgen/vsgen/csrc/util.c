/* vsgen engine: clocks, namespaces, output and parsing helpers. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

double vsg_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double vsg_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Move the calling thread into a network namespace (setns changes only this thread). */
int vsg_enter_ns(int ns_fd, char *err)
{
	if (setns(ns_fd, CLONE_NEWNET) != 0) {
		snprintf(err, VSG_ERR_MAX, "cannot enter network namespace: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* One JSON object per line on stdout: the engine's only output channel for results. */
void vsg_emit(const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	funlockfile(stdout);
}

void vsg_json_escape(const char *in, char *out, size_t max)
{
	size_t o = 0;

	for (; *in && o + 7 < max; in++) {
		unsigned char c = (unsigned char)*in;

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, max - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}

/* A one-line error event; the session goes on. */
void vsg_error(const char *fmt, ...)
{
	char msg[VSG_ERR_MAX], esc[2 * VSG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vsg_json_escape(msg, esc, sizeof(esc));
	vsg_emit("{\"ev\":\"error\",\"msg\":\"%s\"}", esc);
}

int vsg_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int vsg_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int vsg_hex_decode(const char *hex, unsigned char *out, size_t max, size_t *len)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	*len = n / 2;
	return 0;
}
