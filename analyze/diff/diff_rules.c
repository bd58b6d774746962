/* diff_rules.c - --fail-on rules: when a diff is a regression for CI.
 *
 *   func:NAME:+P%          function NAME's self CPU time grew by P% or more
 *   p99:request:+P%        a request series' p99 grew by P% or more
 *   p99:syscall:NAME:+P%   system call NAME's p99 grew by P% or more
 *   p99:probe:NAME:+P%     uprobed function NAME's p99 grew by P% or more
 *   lock:+P%  lock:SITE:+P%  a lock's mean wait per call grew by P% or more
 *   any:significant        any significant finding that adds time
 *
 * A growth counts only when it is real, not noise: the finding's
 * Benjamini-Hochberg q is below --alpha and its 95% interval is above 0
 * (for p99: the interval of the p99 ratio is above 1). Names may contain
 * ':' (C++): the threshold is what follows the last ':'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

/* "+5%", "5%", "+2.5%" -> 0.05. 0 or -1. */
static int parse_threshold(const char *text, double *out)
{
	char *end;
	double v;

	if (*text == '+')
		text++;
	if (*text < '0' || *text > '9')
		return -1;
	v = strtod(text, &end);
	if (end == text || strcmp(end, "%") != 0 || !isfinite(v) || v > 1e6)
		return -1;
	*out = v / 100;
	return 0;
}

/* Splits "NAME:THRESHOLD" at the last ':'. */
static int split_name(const char *rest, struct diff_rule *rule, int name_required)
{
	const char *colon = strrchr(rest, ':');
	size_t len;

	if (!colon) {
		if (name_required)
			return -1;
		rule->name[0] = '\0';
		return parse_threshold(rest, &rule->threshold);
	}
	len = (size_t)(colon - rest);
	if (len == 0 || len >= sizeof(rule->name))
		return -1;
	memcpy(rule->name, rest, len);
	rule->name[len] = '\0';
	return parse_threshold(colon + 1, &rule->threshold);
}

int diff_rule_parse(const char *text, struct diff_rule *rule, const char **why)
{
	memset(rule, 0, sizeof(*rule));
	rule->text = text;
	*why = "expected func:NAME:+P%, p99:request:+P%, p99:syscall:NAME:+P%, "
	       "p99:probe:NAME:+P%, lock:[SITE:]+P% or any:significant";
	if (strcmp(text, "any:significant") == 0) {
		rule->kind = RULE_ANY_SIGNIFICANT;
		return 0;
	}
	if (strncmp(text, "func:", 5) == 0) {
		rule->kind = RULE_FUNC;
		return split_name(text + 5, rule, 1);
	}
	if (strncmp(text, "p99:request:", 12) == 0) {
		rule->kind = RULE_P99_REQUEST;
		return parse_threshold(text + 12, &rule->threshold);
	}
	if (strncmp(text, "p99:syscall:", 12) == 0) {
		rule->kind = RULE_P99_SYSCALL;
		return split_name(text + 12, rule, 1);
	}
	if (strncmp(text, "p99:probe:", 10) == 0) {
		rule->kind = RULE_P99_PROBE;
		return split_name(text + 10, rule, 1);
	}
	if (strncmp(text, "lock:", 5) == 0) {
		rule->kind = RULE_LOCK;
		return split_name(text + 5, rule, 0);
	}
	return -1;
}

/* Whether a finding's name is NAME: the whole name, the function name
 * before " (file)" or " [k]", the part after "COMM:" (system calls) or
 * after "futex:" / "mutex:" / "kernel:" (locks). */
static int name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);
	const char *colon;

	if (want[0] == '\0' || strcmp(name, want) == 0)
		return 1;
	if (strncmp(name, want, n) == 0 && (name[n] == ' ' || name[n] == '\0'))
		return 1;
	colon = strrchr(name, ':');
	return colon && strcmp(colon + 1, want) == 0;
}

static int real_growth(const struct diff_finding *f, double alpha)
{
	return f->q_value < alpha && (f->appeared || f->ci_low > 0);
}

int diff_rule_check(const struct diff_rule *rule, const struct diff_result *res,
		    char *why, size_t len)
{
	for (size_t i = 0; i < res->nfindings; i++) {
		const struct diff_finding *f = &res->findings[i];
		double alpha = res->opts.alpha;

		switch (rule->kind) {
		case RULE_ANY_SIGNIFICANT:
			if (f->significant && diff_finding_adds_time(f) &&
			    strcmp(f->kind, "rate") != 0) {
				snprintf(why, len, "%s: %s %s is a significant regression (rank %d)",
					 rule->text, f->kind, f->name, f->rank);
				return 1;
			}
			break;
		case RULE_FUNC:
		case RULE_LOCK:
			if (strcmp(f->kind, rule->kind == RULE_FUNC ? "function" : "lock") != 0 ||
			    !name_matches(f->name, rule->name) || !real_growth(f, alpha))
				break;
			if (f->appeared || f->effect >= rule->threshold) {
				if (f->appeared)
					snprintf(why, len, "%s: %s %s appeared", rule->text,
						 f->kind, f->name);
				else
					snprintf(why, len, "%s: %s %s grew %+.1f%% [%+.1f%%, %+.1f%%]",
						 rule->text, f->kind, f->name, 100 * f->effect,
						 100 * f->ci_low, 100 * f->ci_high);
				return 1;
			}
			break;
		case RULE_P99_REQUEST:
		case RULE_P99_SYSCALL:
		case RULE_P99_PROBE:
			if (strcmp(f->kind, rule->kind == RULE_P99_REQUEST ? "request" :
					    rule->kind == RULE_P99_SYSCALL ? "syscall" : "probe") ||
			    (rule->kind != RULE_P99_REQUEST && !name_matches(f->name, rule->name)))
				break;
			if (f->appeared && rule->kind != RULE_P99_REQUEST && f->q_value < alpha) {
				snprintf(why, len, "%s: %s %s appeared", rule->text,
					 rule->kind == RULE_P99_SYSCALL ? "system call" :
					 "probed function", f->name);
				return 1;
			}
			if (!isnan(f->p99_ratio) && f->p99_ratio - 1 >= rule->threshold &&
			    f->p99_lo > 1) {
				snprintf(why, len, "%s: %s %s p99 x%.2f [%.2f, %.2f]", rule->text,
					 f->kind, f->name, f->p99_ratio, f->p99_lo, f->p99_hi);
				return 1;
			}
			break;
		}
	}
	return 0;
}
