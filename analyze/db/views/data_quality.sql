-- data_quality: how complete each event source is: the recorder's STATS
-- counters ("<source>.<what>") and the importer's quality rows side by
-- side, one row per source, with the share of events lost.
-- docs/schema.md, data_quality.
WITH source_values AS (
  SELECT substr(key, 1, instr(key, '.') - 1) AS source,
         substr(key, instr(key, '.') + 1) AS k, value
  FROM stats WHERE chunk = 'stats' AND instr(key, '.') > 1
  UNION ALL SELECT source, 'imported.' || key, value FROM quality),
sources AS (SELECT DISTINCT source FROM source_values WHERE k IN ('events', 'lost.kernel',
  'lost.user', 'sampled_out', 'rate_capped', 'stack_errors', 'imported.records')),
per_source AS (SELECT sources.source,
  (SELECT value FROM source_values v WHERE v.source = sources.source
    AND k = 'events') AS recorded,
  COALESCE((SELECT value FROM source_values v WHERE v.source = sources.source
    AND k = 'imported.records'), 0) AS imported,
  COALESCE((SELECT value FROM source_values v WHERE v.source = sources.source
    AND k = 'lost.kernel'), 0) AS lost_kernel,
  COALESCE((SELECT value FROM source_values v WHERE v.source = sources.source
    AND k = 'lost.user'), 0) AS lost_user,
  COALESCE((SELECT value FROM source_values v WHERE v.source = sources.source
    AND k = 'sampled_out'), 0) AS sampled_out,
  COALESCE((SELECT value FROM source_values v WHERE v.source = sources.source
    AND k = 'rate_capped'), 0) AS rate_capped,
  COALESCE((SELECT value FROM source_values v WHERE v.source = sources.source
    AND k = 'stack_errors'), 0) AS stack_errors,
  COALESCE((SELECT sum(value) FROM source_values v WHERE v.source = sources.source
    AND k LIKE 'imported.%unmatched%'), 0) AS unmatched,
  COALESCE((SELECT sum(value) FROM source_values v WHERE v.source = sources.source
    AND k LIKE 'imported.%expired%'), 0) AS expired,
  COALESCE((SELECT value FROM source_values v WHERE v.source = sources.source
    AND k = 'imported.late'), 0) AS late
  FROM sources)
SELECT *, CASE WHEN imported + lost_kernel + lost_user > 0
  THEN round(1.0 * (lost_kernel + lost_user) /
    (imported + lost_kernel + lost_user), 6) END AS lost_share
FROM per_source ORDER BY source;
