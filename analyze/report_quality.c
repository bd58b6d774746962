/* report_quality.c - "Data quality": how far the numbers above can be
 * trusted. Losses, truncated and probably truncated stacks, stack errors,
 * unresolved frames, unknown or malformed content and file damage, all
 * read from the quality table the loader filled (whole capture, not only
 * the selected samples). */
#include <stdio.h>
#include <stdlib.h>

#include "db.h"
#include "fmt.h"
#include "report_sections.h"

static const char quality_sql[] = "SELECT value FROM quality WHERE source = ?1 AND key = ?2";

static uint64_t q(const struct report_context *ctx, const char *source, const char *key)
{
	int64_t value = db_lookup_int(ctx->db, quality_sql, source, key, 0);

	return value > 0 ? (uint64_t)value : 0;
}

static void print_losses(const struct report_context *ctx)
{
	uint64_t samples = q(ctx, "cpu", "samples");
	uint64_t lost_kernel = q(ctx, "cpu", "lost.kernel");
	uint64_t lost_user = q(ctx, "cpu", "lost.user");
	uint64_t lost = lost_kernel + lost_user;
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF];

	fprintf(ctx->out, "  %-20s lost %s of %s events (%s; kernel %s, user %s)\n",
		"Lost events:", fmt_count(a, sizeof(a), lost),
		fmt_count(b, sizeof(b), samples + lost),
		fmt_percent(c, sizeof(c), lost, samples + lost),
		fmt_count(d, sizeof(d), lost_kernel), fmt_count(e, sizeof(e), lost_user));
}

static void print_stack_line(const struct report_context *ctx, const char *label,
			     uint64_t samples, uint64_t stacks, const char *what)
{
	uint64_t all = q(ctx, "cpu", "samples");
	char pct[FMT_BUF], n[FMT_BUF];

	fprintf(ctx->out, "  %-20s %s of samples (distinct stacks: %s; %s)\n", label,
		fmt_percent(pct, sizeof(pct), samples, all),
		fmt_count(n, sizeof(n), stacks), what);
}

static void print_stacks(const struct report_context *ctx)
{
	print_stack_line(ctx, "Truncated stacks:", q(ctx, "stacks", "samples.truncated"),
			 q(ctx, "stacks", "truncated"), "hit the depth limit");
	print_stack_line(ctx, "Probably truncated:",
			 q(ctx, "stacks", "samples.probably_truncated"),
			 q(ctx, "stacks", "probably_truncated"),
			 "user stack does not end in _start, clone, start_thread...");
	print_stack_line(ctx, "Stack errors:", q(ctx, "stacks", "samples.error"),
			 q(ctx, "stacks", "error"), "unwinding failed or empty");
	if (q(ctx, "stacks", "samples.missing") > 0)
		print_stack_line(ctx, "Missing stacks:", q(ctx, "stacks", "samples.missing"),
				 q(ctx, "stacks", "missing"), "ids never defined");
}

static void print_frames(const struct report_context *ctx)
{
	char pct[FMT_BUF], a[FMT_BUF], b[FMT_BUF];

	fprintf(ctx->out, "  %-20s %s of sampled frames (%s of %s distinct frames)\n",
		"Unresolved frames:",
		fmt_percent(pct, sizeof(pct), q(ctx, "frames", "sampled.unresolved"),
			    q(ctx, "frames", "sampled")),
		fmt_count(a, sizeof(a), q(ctx, "frames", "unique.unresolved")),
		fmt_count(b, sizeof(b), q(ctx, "frames", "unique")));
}

static void print_format(const struct report_context *ctx)
{
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF];

	fprintf(ctx->out, "  %-20s %s chunks, %s records skipped; %s malformed records\n",
		"Unknown content:",
		fmt_count(a, sizeof(a), q(ctx, "format", "chunks.unknown")),
		fmt_count(b, sizeof(b), q(ctx, "format", "records.unknown")),
		fmt_count(c, sizeof(c), q(ctx, "format", "records.malformed") +
			  q(ctx, "format", "kv.malformed")));
}

static void print_file(const struct report_context *ctx)
{
	char *damage = db_lookup_text(ctx->db, quality_sql, "file", "damage");

	fprintf(ctx->out, "  %-20s %s\n", "File:",
		damage ? damage : "intact, end marker present");
	free(damage);
}

int report_section_quality(const struct report_context *ctx)
{
	fprintf(ctx->out, "\nData quality\n");
	print_losses(ctx);
	print_stacks(ctx);
	print_frames(ctx);
	print_format(ctx);
	print_file(ctx);
	return 0;
}
