/* text.c - printable copies of untrusted capture strings (see text.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static char printable(unsigned char c)
{
	return (c < 0x20 || c == 0x7f) ? '?' : (char)c;
}

char *text_copy_printable(char *dst, size_t dst_len, const void *src, size_t src_len)
{
	const unsigned char *s = src;
	size_t n = 0;

	if (dst_len == 0)
		return dst;
	while (n < src_len && n + 1 < dst_len && s[n] != '\0') {
		dst[n] = printable(s[n]);
		n++;
	}
	dst[n] = '\0';
	return dst;
}

char *text_dup_printable(const void *src, size_t src_len, char sep)
{
	const unsigned char *s = src;
	char *out = malloc(src_len + 1);
	size_t n = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < src_len; i++) {
		if (s[i] == '\0') {
			if (sep == 0)
				break;
			out[n++] = sep;
		} else {
			out[n++] = printable(s[i]);
		}
	}
	while (sep != 0 && n > 0 && out[n - 1] == sep)
		n--;
	out[n] = '\0';
	return out;
}

const char *text_basename(const char *path)
{
	const char *slash;

	if (!path || path[0] == '[')
		return path ? path : "";
	slash = strrchr(path, '/');
	return (slash && slash[1] != '\0') ? slash + 1 : path;
}

const char *text_module_label(char *buf, size_t len, const char *module)
{
	const char *base = text_basename(module ? module : "?");

	if (base[0] == '[')
		snprintf(buf, len, "%s", base);
	else
		snprintf(buf, len, "[%s]", base);
	return buf;
}
