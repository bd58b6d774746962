-- block_io_by_device: block I/O per device: requests, reads and
-- writes, bytes, errors, and the time requests spent queued and in
-- service (sums, nearest-rank p50 and p99, each ranked on its own).
-- docs/schema.md, block_io_by_device.
WITH ranked AS (SELECT *,
  row_number() OVER (PARTITION BY dev ORDER BY queue_ns) AS rq,
  row_number() OVER (PARTITION BY dev ORDER BY service_ns) AS rs,
  count(*) OVER (PARTITION BY dev) AS n FROM block_io)
SELECT dev, min(dev_name) AS dev_name, count(*) AS requests,
  sum(op & 255 = 0) AS reads, sum(op & 255 = 1) AS writes, sum(bytes) AS bytes,
  -- nearest rank: the value at rank ceil(p * n / 100)
  sum(queue_ns) AS queue_ns, max(CASE WHEN rq = (n * 50 + 99) / 100 THEN queue_ns END)
  AS queue_p50, max(CASE WHEN rq = (n * 99 + 99) / 100 THEN queue_ns END) AS queue_p99,
  sum(service_ns) AS service_ns,
  max(CASE WHEN rs = (n * 50 + 99) / 100 THEN service_ns END) AS service_p50,
  max(CASE WHEN rs = (n * 99 + 99) / 100 THEN service_ns END) AS service_p99,
  sum(error <> 0) AS errors
FROM ranked GROUP BY dev ORDER BY dev;
