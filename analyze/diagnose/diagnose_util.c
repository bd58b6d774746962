/* diagnose_util.c - small helpers the diagnosis rules share: adding a
 * cause, its evidence lines and subject fields, caveats, and preparing a
 * statement with the report's scope bound. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"

struct diag_cause *diag_add_cause(struct diagnosis *d, const char *kind)
{
	struct diag_cause *c;

	if (d->ncauses >= DIAG_MAX_CAUSES)
		return NULL;
	c = &d->causes[d->ncauses++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	return c;
}

void diag_evidence(struct diag_cause *c, const char *fmt, ...)
{
	va_list ap;

	if (c->nevidence >= DIAG_MAX_EVIDENCE)
		return;
	va_start(ap, fmt);
	vsnprintf(c->evidence[c->nevidence++], sizeof(c->evidence[0]), fmt, ap);
	va_end(ap);
}

void diag_caveat(struct diagnosis *d, const char *fmt, ...)
{
	char line[sizeof(d->caveats[0])];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	for (int i = 0; i < d->ncaveats; i++)
		if (strcmp(d->caveats[i], line) == 0)
			return;
	if (d->ncaveats < DIAG_MAX_CAVEATS)
		memcpy(d->caveats[d->ncaveats++], line, sizeof(line));
}

static struct diag_field *new_field(struct diag_field *f, const char *name,
				    enum field_type type)
{
	size_t len = strlen(name);

	memset(f, 0, sizeof(*f));
	memcpy(f->name, name, len < sizeof(f->name) ? len : sizeof(f->name) - 1);
	f->type = type;
	return f;
}

void diag_text(struct diag_subject *s, const char *name, const char *text)
{
	if (s->nfields < DIAG_MAX_FIELDS)
		snprintf(new_field(&s->fields[s->nfields++], name, FIELD_TEXT)->text,
			 DIAG_TEXT, "%s", text ? text : "");
}

void diag_int(struct diag_subject *s, const char *name, int64_t value)
{
	if (s->nfields < DIAG_MAX_FIELDS)
		new_field(&s->fields[s->nfields++], name, FIELD_INT)->i = value;
}

void diag_real(struct diag_subject *s, const char *name, double value)
{
	if (s->nfields < DIAG_MAX_FIELDS)
		new_field(&s->fields[s->nfields++], name, FIELD_REAL)->d = value;
}

void diag_row(struct diag_subject *s, const char *list_name)
{
	snprintf(s->list_name, sizeof(s->list_name), "%s", list_name);
	s->list_full = s->nrows >= DIAG_MAX_ROWS;    /* further rows are dropped */
	if (!s->list_full)
		s->row_cols[s->nrows++] = 0;
}

static struct diag_field *row_field(struct diag_subject *s, const char *name,
				    enum field_type type)
{
	int r = s->nrows - 1;

	if (r < 0 || s->list_full || s->row_cols[r] >= DIAG_MAX_ROW_COLS)
		return NULL;
	return new_field(&s->rows[r][s->row_cols[r]++], name, type);
}

void diag_row_text(struct diag_subject *s, const char *name, const char *text)
{
	struct diag_field *f = row_field(s, name, FIELD_TEXT);

	if (f)
		snprintf(f->text, sizeof(f->text), "%s", text ? text : "");
}

void diag_row_int(struct diag_subject *s, const char *name, int64_t value)
{
	struct diag_field *f = row_field(s, name, FIELD_INT);

	if (f)
		f->i = value;
}

sqlite3_stmt *diag_prepare(const struct diag_input *in, const char *sql)
{
	sqlite3_stmt *st = db_prepare(in->db, sql);

	if (st)
		report_scope_bind(st, in->scope);
	return st;
}
