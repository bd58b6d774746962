/* util.c - small helpers shared by the recorder: error lines, clocks,
 * shell quoting and whole-file reads. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
