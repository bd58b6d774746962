/* report_json.c - "report --json": the whole report as one JSON object
 * (docs/report-json.md, report_version 1), written by the same sections
 * from the same model as the text report, through the one JSON writer. */
#include "report_sections.h"

int report_model_json(const struct report_model *m, FILE *out)
{
	struct json_writer w;
	int rc;

	json_init(&w, out, 1);
	json_begin_object(&w, NULL);
	json_string(&w, "kind", "report");
	json_int(&w, "report_version", 1);
	rc = report_model_render(m, out, &w);
	json_end_object(&w);
	json_finish(&w);
	return rc;
}

int report_json(sqlite3 *db, const struct report_options *opts, FILE *out)
{
	struct report_model *m = report_model_build(db, opts);
	int rc = m ? report_model_json(m, out) : -1;

	report_model_free(m);
	return rc;
}
