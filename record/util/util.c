/* util.c - small helpers shared by the recorder: error lines, clocks,
 * number formatting, shell quoting and whole-file reads. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

bool verbose_enabled;

static void print_line(const char *prefix, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s: %s%s\n", PROGRAM_NAME, prefix, msg);
}

void error_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_line("", fmt, ap);
	va_end(ap);
}

void warning_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_line("warning: ", fmt, ap);
	va_end(ap);
}

void verbose_line(const char *fmt, ...)
{
	va_list ap;

	if (!verbose_enabled)
		return;
	va_start(ap, fmt);
	print_line("", fmt, ap);
	va_end(ap);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

const char *format_count(uint64_t n, char *buf, size_t len)
{
	char digits[32];
	int ndigits = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t out = 0;

	for (int i = 0; i < ndigits && out + 2 < len; i++) {
		if (i > 0 && (ndigits - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
	return buf;
}

int text_append(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 64;
		char *p;

		while (cap < t->len + n + 1)
			cap *= 2;
		p = realloc(t->s, cap);
		if (!p)
			return -ENOMEM;
		t->s = p;
		t->cap = cap;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
	return 0;
}

int text_append_str(struct text *t, const char *s)
{
	return text_append(t, s, strlen(s));
}

static bool is_shell_safe(const char *word)
{
	if (!*word)
		return false;
	for (const char *p = word; *p; p++) {
		if (!isalnum((unsigned char)*p) && !strchr("_-./=:,+@%^", *p))
			return false;
	}
	return true;
}

int text_append_shell_word(struct text *t, const char *word)
{
	int err = 0;

	if (is_shell_safe(word))
		return text_append_str(t, word);
	err = text_append(t, "'", 1);
	for (const char *p = word; *p && !err; p++) {
		if (*p == '\'')
			err = text_append_str(t, "'\\''");
		else
			err = text_append(t, p, 1);
	}
	return err ? err : text_append(t, "'", 1);
}

void text_free(struct text *t)
{
	free(t->s);
	t->s = NULL;
	t->len = t->cap = 0;
}

long read_whole_file(const char *path, char **out, size_t max)
{
	size_t cap = 4096, len = 0;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err = 0;

	*out = NULL;
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (!buf || len + 1 >= cap) {
			char *p;

			if (buf)
				cap *= 2;
			p = realloc(buf, cap);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len >= max) {
			len = max;
			break;
		}
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	return (long)len;
}

int read_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!err)
		buf[strcspn(buf, "\n")] = '\0';
	return err;
}

bool parse_u64_in_range(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

void *array_reserve(void *ptr, uint32_t *cap, uint32_t need, size_t elem_size)
{
	uint32_t new_cap = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return ptr;
	while (new_cap < need)
		new_cap *= 2;
	p = realloc(ptr, (size_t)new_cap * elem_size);
	if (!p)
		return NULL;
	*cap = new_cap;
	return p;
}

static uint64_t unit_ns(const char *unit)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000 * 1000 }, { "s", 1000 * 1000 * 1000 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].name) == 0)
			return units[i].ns;
	}
	return 0;
}

bool parse_duration_ns(const char *s, uint64_t max_ns, uint64_t *out)
{
	uint64_t per_unit;
	double value;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	if (strcmp(s, "0") == 0) {
		*out = 0;
		return true;
	}
	errno = 0;
	value = strtod(s, &end);
	per_unit = unit_ns(end);
	if (errno || end == s || (size_t)(end - s) != strspn(s, "0123456789.") || !per_unit || value * (double)per_unit > (double)max_ns)
		return false;
	*out = (uint64_t)(value * (double)per_unit + 0.5);
	return true;
}

static uint64_t size_unit(const char *u)
{
	if (!*u)
		return 1;
	if (u[1] && strcasecmp(u + 1, "iB") && strcasecmp(u + 1, "B"))
		return 0;
	switch (*u) {
	case 'k': case 'K':
		return 1ull << 10;
	case 'm': case 'M':
		return 1ull << 20;
	case 'g': case 'G':
		return 1ull << 30;
	default:
		return 0;
	}
}

bool parse_size_bytes(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	uint64_t unit;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	unit = size_unit(end);
	if (errno || !unit || v > max / unit)
		return false;
	*out = v * unit;
	return true;
}

const char *format_size(uint64_t bytes, char *buf, size_t len)
{
	if (bytes && bytes % (1ull << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(bytes >> 30));
	else if (bytes && bytes % (1ull << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
	else if (bytes && bytes % (1ull << 10) == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
	return buf;
}
