/* write_page.c - test driver for analyze/report/html_page.c: writes the HTML page
 * for a JSON file, as report --html and diff --html do.
 *
 *   write_page --available          exit 0 when built with HTML support,
 *                                   else print the reason and exit 3
 *   write_page JSON OUT.html [TITLE] html_page_write_file(); exit 0 or 1
 *   write_page JSON -        [TITLE] html_page_write() to stdout */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_page.h"

static char *read_file(const char *path, size_t *len)
{
	FILE *in = fopen(path, "rb");
	char *text = NULL;
	long size;

	if (!in)
		return NULL;
	if (fseek(in, 0, SEEK_END) == 0 && (size = ftell(in)) >= 0 && fseek(in, 0, SEEK_SET) == 0) {
		text = malloc((size_t)size + 1);
		if (text && fread(text, 1, (size_t)size, in) != (size_t)size) {
			free(text);
			text = NULL;
		}
		if (text) {
			text[size] = '\0';
			*len = (size_t)size;
		}
	}
	fclose(in);
	return text;
}

int main(int argc, char **argv)
{
	const char *why = NULL;
	char *json;
	size_t len = 0;
	int rc;

	if (argc == 2 && strcmp(argv[1], "--available") == 0) {
		if (html_page_available(&why))
			return 0;
		printf("%s\n", why);
		return 3;
	}
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: write_page --available | JSON OUT.html|- [TITLE]\n");
		return 2;
	}
	json = read_file(argv[1], &len);
	if (!json) {
		perror(argv[1]);
		return 1;
	}
	if (strcmp(argv[2], "-") == 0)
		rc = html_page_write(stdout, argc == 4 ? argv[3] : NULL, json, len);
	else
		rc = html_page_write_file(argv[2], argc == 4 ? argv[3] : NULL, json, len);
	free(json);
	return rc == 0 ? 0 : 1;
}
