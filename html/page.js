/* page.js - renders perfcap-analyze's self-contained HTML page from the
 * JSON embedded in the script element #perfcap-data: a report (kind "report":
 * verdict, diagnosis, flame graph, latency histograms, per-thread state
 * timeline, data quality, reproduce block) or a diff (kind "diff": verdict,
 * findings, differential flame graph in both directions, overlaid latency
 * histograms, warnings). Plain JavaScript, no framework; the flame graphs
 * use d3-flame-graph (global `flamegraph`), everything else is drawn here.
 * Every section renders on its own: one that fails shows its error (and
 * logs it to the console) while the others still appear. */
(function () {
	"use strict";

	var SVG_NS = "http://www.w3.org/2000/svg";
	var SEARCH_COLOR = "#E600E6";
	var STATE_COLORS = {
		running: "#2e9e44", runnable: "#e0a800", io: "#d9342b", futex: "#8e44ad",
		poll: "#3b82c4", sleep: "#c9ced6", other: "#7f8c8d"
	};
	var MAX_TIMELINE_THREADS = 300;
	/* d3-flame-graph's UMD build exports {default: flamegraph, ...}. */
	var flameGraphFactory = window.flamegraph && (window.flamegraph["default"] || window.flamegraph);

	/* ---- small DOM helpers ---- */

	function el(tag, attrs, children) {
		var node = document.createElement(tag);
		setAttributes(node, attrs);
		appendChildren(node, children);
		return node;
	}

	function svgEl(tag, attrs, children) {
		var node = document.createElementNS(SVG_NS, tag);
		setAttributes(node, attrs);
		appendChildren(node, children);
		return node;
	}

	function setAttributes(node, attrs) {
		Object.keys(attrs || {}).forEach(function (key) {
			var value = attrs[key];
			if (value === null || value === undefined) return;
			if (key === "text") node.textContent = String(value);
			else node.setAttribute(key, String(value));
		});
	}

	function appendChildren(node, children) {
		(children || []).forEach(function (child) {
			if (child === null || child === undefined) return;
			node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
		});
	}

	function svgTitle(text) {
		return svgEl("title", {text: text});
	}

	/* ---- number formatting (the JSON holds nanoseconds and raw counts) ---- */

	function fmtNs(ns) {
		if (typeof ns !== "number" || !isFinite(ns)) return "–";
		var abs = Math.abs(ns);
		if (abs >= 1e9) return trim(ns / 1e9) + " s";
		if (abs >= 1e6) return trim(ns / 1e6) + " ms";
		if (abs >= 1e3) return trim(ns / 1e3) + " µs";
		return trim(ns) + " ns";
	}

	function trim(x) {
		var abs = Math.abs(x);
		var digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
		return x.toFixed(digits).replace(/\.0+$/, "").replace(/(\.\d*?)0+$/, "$1");
	}

	function fmtCount(n) {
		if (typeof n !== "number" || !isFinite(n)) return "–";
		return Math.round(n).toLocaleString("en-US");
	}

	function fmtPct(p) {
		if (typeof p !== "number" || !isFinite(p)) return "–";
		return trim(p) + "%";
	}

	function fmtBytes(b) {
		if (typeof b !== "number" || !isFinite(b)) return "–";
		var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
		while (Math.abs(b) >= 1024 && i < units.length - 1) { b /= 1024; i++; }
		return trim(b) + " " + units[i];
	}

	function fmtUnit(value, unit) {
		if (unit === "ns") return fmtNs(value);
		if (unit === "percent") return fmtPct(value);
		if (unit === "bytes") return fmtBytes(value);
		if (unit === "count") return fmtCount(value);
		return String(value) + (unit ? " " + unit : "");
	}

	function fmtAny(value) {
		if (value === null || value === undefined) return "–";
		if (typeof value === "number") return Number.isInteger(value) ? fmtCount(value) : trim(value);
		if (typeof value === "string") return value;
		return JSON.stringify(value);
	}

	/* Lists as "a, b", objects as "key: value; ...", empty ones as "none". */
	function fmtStructured(v) {
		if (Array.isArray(v)) return v.length ? v.map(fmtStructured).join(", ") : "none";
		if (v && typeof v === "object") {
			var keys = Object.keys(v);
			return keys.length ? keys.map(function (k) { return k + ": " + fmtStructured(v[k]); }).join("; ") : "none";
		}
		return fmtAny(v);
	}

	function fmtP(p) {
		if (typeof p !== "number" || !isFinite(p)) return "–";
		if (p < 0.001) return "< 0.001";
		return p.toFixed(3);
	}

	/* ---- sections ---- */

	var page = document.getElementById("page");
	var nav = document.getElementById("page-nav");

	function addSection(id, title, render) {
		var body = el("div");
		var section = el("section", {id: id}, [el("h2", {text: title}), body]);
		page.appendChild(section);
		nav.appendChild(el("a", {href: "#" + id, text: title}));
		try {
			render(body);
		} catch (err) {
			body.appendChild(el("p", {"class": "section-error",
				text: "This section could not be drawn: " + err.message}));
			console.error("perfcap page: section " + id + ": " + (err.stack || err));
		}
		return section;
	}

	function empty(body, text) {
		body.appendChild(el("p", {"class": "empty", text: text}));
	}

	function table(headers, rows, numeric) {
		var head = el("tr", null, headers.map(function (h, i) {
			return el("th", {"class": numeric && numeric[i] ? "num" : null, text: h});
		}));
		var trs = rows.map(function (row) {
			var tr = el("tr", {"class": row.className || null});
			row.cells.forEach(function (cell, i) {
				var td = el("td", {"class": (numeric && numeric[i] ? "num " : "") + (cell.className || ""),
					title: cell.title || null});
				if (cell.node) td.appendChild(cell.node);
				else td.textContent = cell.text === undefined ? String(cell) : cell.text;
				tr.appendChild(td);
			});
			return tr;
		});
		return el("table", null, [el("thead", null, [head]), el("tbody", null, trs)]);
	}

	function cellsOf(values) {
		return {cells: values.map(function (v) { return {text: String(v)}; })};
	}

	/* ---- flame graph data ---- */

	/* folded: [{stack: "a;b;c", <field>: count, ...}] -> tree whose nodes hold
	 * inclusive totals for each field. */
	function foldedTree(folded, fields) {
		var root = {name: "all", children: [], index: {}};
		fields.forEach(function (f) { root[f] = 0; });
		folded.forEach(function (row) {
			var frames = String(row.stack || "").split(";");
			var node = root;
			addCounts(node, row, fields);
			frames.forEach(function (frame) {
				var child = node.index[frame];
				if (!child) {
					child = {name: frame, children: [], index: {}};
					fields.forEach(function (f) { child[f] = 0; });
					node.index[frame] = child;
					node.children.push(child);
				}
				addCounts(child, row, fields);
				node = child;
			});
		});
		stripIndex(root);
		return root;
	}

	function addCounts(node, row, fields) {
		fields.forEach(function (f) {
			var n = Number(row[f]);
			if (isFinite(n) && n > 0) node[f] += n;
		});
	}

	function stripIndex(node) {
		delete node.index;
		node.children.forEach(stripIndex);
	}

	function flameWidth(container) {
		return Math.max(600, Math.min(1340, (container.clientWidth || page.clientWidth || 1200) - 4));
	}

	/* d3-flame-graph grows each new frame's width and sets its label in
	 * transitions that run on later animation frames, even at duration 0
	 * (the width's transition has d3's default length). A page printed or
	 * captured before they end shows frames cut short, so end them now:
	 * the final width is the one already set on the frame's label box. */
	function settleFrames(holder) {
		d3.select(holder).selectAll("g.frame").each(function () {
			var g = d3.select(this);
			g.interrupt();
			g.selectAll("*").interrupt();
			g.select("rect").attr("width", g.select("foreignObject").attr("width"));
			g.select("foreignObject div").text(g.attr("name"));
		});
	}

	/* A flame graph with a search box, reset-zoom and clear buttons and a
	 * details line; returns {chart, holder, search(term)}. */
	function flameGraph(body, data, options) {
		var input = el("input", {type: "search", placeholder: "Search functions (substring)",
			"aria-label": "search functions", "class": "flame-search"});
		var searchButton = el("button", {type: "button", text: "Search"});
		var clearButton = el("button", {type: "button", text: "Clear"});
		var resetButton = el("button", {type: "button", text: "Reset zoom"});
		var toolbar = el("div", {"class": "toolbar"},
			[input, searchButton, clearButton, resetButton].concat(options.extraControls || []));
		var details = el("div", {"class": "details"});
		var holder = el("div", {"class": "flame"});
		body.appendChild(toolbar);
		body.appendChild(details);
		body.appendChild(holder);

		var chart = flameGraphFactory()
			.width(flameWidth(body))
			.cellHeight(18)
			.minFrameSize(1)
			.transitionDuration(300)
			.sort(true)
			.title("")
			.setDetailsElement(details)
			.setSearchMatch(function (d, term) {
				if (!term) return false;
				var name = String(d.data.name || "");
				return name.toLowerCase().indexOf(String(term).toLowerCase()) >= 0;
			});
		if (options.label) chart.setLabelHandler(options.label);
		if (options.color) chart.setColorMapper(options.color);
		if (options.getValue) chart.getValue(options.getValue);
		/* The first drawing is not animated, so a page printed or captured
		 * at once shows every frame; zoom and search animate. */
		chart.transitionDuration(0);
		d3.select(holder).datum(data).call(chart);
		settleFrames(holder);
		chart.transitionDuration(300);

		function search() {
			var term = input.value.trim();
			if (term) chart.search(term);
			else chart.clear();
		}
		input.addEventListener("keydown", function (e) { if (e.key === "Enter") search(); });
		input.addEventListener("input", search);
		searchButton.addEventListener("click", search);
		clearButton.addEventListener("click", function () { input.value = ""; chart.clear(); });
		resetButton.addEventListener("click", function () { chart.resetZoom(); });
		return {
			chart: chart, holder: holder,
			search: function (term) { input.value = term; search(); },
			redraw: function (newData) { chart.update(newData); search(); }
		};
	}

	/* ---- histograms ---- */

	/* series: [{label, color, values: [number per bucket]}]; values are drawn
	 * as shares of each series' total when asShares, else as counts. */
	function histogramChart(title, buckets, series, asShares) {
		var left = 44, bottom = 34, top = 22, height = 190;
		var room = Math.max(420, Math.min(1300, (page.clientWidth || 1300) - 40));
		var width = Math.min(room, Math.max(420, left + 8 + 64 * buckets.length));
		var plotW = width - left - 8, plotH = height - top - bottom;
		var totals = series.map(function (s) {
			return s.values.reduce(function (a, b) { return a + b; }, 0);
		});
		var shown = series.map(function (s, i) {
			return s.values.map(function (v) {
				return asShares ? (totals[i] > 0 ? 100 * v / totals[i] : 0) : v;
			});
		});
		var max = 0;
		shown.forEach(function (vals) { vals.forEach(function (v) { if (v > max) max = v; }); });
		if (max <= 0) max = 1;
		var svg = svgEl("svg", {width: width, height: height, "class": "histogram", role: "img",
			"aria-label": title});
		svg.appendChild(svgEl("text", {x: left, y: 13, text: title, style: "font-size:12px;fill:#1d232b"}));
		var slot = plotW / Math.max(1, buckets.length);
		var labelEvery = Math.max(1, Math.ceil(60 / slot));   /* labels need about 60 px */
		buckets.forEach(function (bucket, b) {
			var x = left + b * slot;
			series.forEach(function (s, i) {
				var v = shown[i][b];
				var h = plotH * v / max;
				var raw = s.values[b];
				var tip = s.label + " " + bucketLabel(bucket.le_ns, b > 0 ? buckets[b - 1].le_ns : null) + ": " + fmtCount(raw) +
					(totals[i] > 0 ? " (" + fmtPct(100 * raw / totals[i]) + ")" : "");
				svg.appendChild(svgEl("rect", {"class": "bar", x: x + 2, y: top + plotH - h,
					width: Math.max(1, slot - 4), height: Math.max(0, h), fill: s.color},
					[svgTitle(tip)]));
			});
			if (b % labelEvery === 0 || b === buckets.length - 1) {
				svg.appendChild(svgEl("text", {x: x + slot / 2, y: top + plotH + 13, "text-anchor": "middle",
					text: bucketLabel(bucket.le_ns, b > 0 ? buckets[b - 1].le_ns : null)}));
			}
		});
		svg.appendChild(svgEl("line", {x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH,
			stroke: "#999"}));
		svg.appendChild(svgEl("text", {x: left - 4, y: top + 8, "text-anchor": "end",
			text: asShares ? trim(max) + "%" : fmtCount(max)}));
		svg.appendChild(svgEl("text", {x: left - 4, y: top + plotH, "text-anchor": "end", text: "0"}));
		svg.appendChild(svgEl("text", {x: left + plotW / 2, y: height - 4, "text-anchor": "middle",
			text: "latency bucket (upper bound)" + (asShares ? ", bars = % of each side's total" : "")}));
		return el("div", {"class": "chart"}, [svg]);
	}

	/* The last bucket of a histogram may be open-ended (le_ns = 2^64 - 1). */
	function bucketLabel(le, previousLe) {
		if (le < 9e18) return "≤" + fmtNs(le);
		return typeof previousLe === "number" ? ">" + fmtNs(previousLe) : "all";
	}

	function sortedBuckets(histogram) {
		return (histogram.buckets || []).slice().sort(function (a, b) { return a.le_ns - b.le_ns; });
	}

	/* ---- report ---- */

	function renderReport(data) {
		var capture = data.capture || {};
		var scope = data.scope || {};
		setHeader("perfcap report: " + (capture.path || "capture"),
			[scope.command && "command: " + scope.command, scope.host && "host " + scope.host,
			 scope.kernel && "kernel " + scope.kernel,
			 typeof scope.duration_ns === "number" && "duration " + fmtNs(scope.duration_ns),
			 capture.sha256 && "sha256 " + capture.sha256].filter(Boolean).join(" · "));
		/* The order of the book's report layout (12.5). */
		addSection("summary", "Summary", function (body) { renderVerdict(body, data); });
		addSection("diagnosis", "Diagnosis", function (body) {
			renderDiagnosis(body, data.diagnosis, typeof scope.from_ns === "number" ? scope.from_ns : 0);
		});
		addSection("scope", "Method and scope", function (body) { renderScope(body, scope); });
		addSection("latency", "Latency", function (body) { renderLatency(body, data.latency); });
		addSection("flamegraph", "CPU flame graph", function (body) { renderCpu(body, data.cpu); });
		addSection("io", "I/O", function (body) {
			renderTables(body, data.io, "No I/O data in this report (record the block, net or syscall sources).");
		});
		addSection("contention", "Contention and scheduling", function (body) {
			renderTables(body, data.contention, "No contention data in this report (record the lock and sched sources).");
		});
		/* present only when the capture has them (report "probes", "runtimes") */
		if (data.probes && data.probes.length) {
			addSection("probes", "User probes", function (body) { renderProbes(body, data.probes); });
		}
		if (data.runtimes && data.runtimes.length) {
			addSection("runtimes", "Runtimes", function (body) { body.appendChild(rowsTable(data.runtimes)); });
		}
		addSection("timeline", "Thread states", function (body) {
			renderTimeline(body, data.timeline, data.probes);
			renderThreads(body, data.threads);
		});
		addSection("wakeups", "Wakeup graph", function (body) { renderWakeups(body, data.wakeup_graph); });
		addSection("quality", "Data quality", function (body) { renderQuality(body, data.data_quality); });
		addSection("reproduce", "Reproduce", function (body) { renderReproduce(body, data.reproduce); });
	}

	/* A section whose JSON is {name: [rows], name: {key: value}} (io,
	 * contention): one table per member, columns from the rows' keys, values
	 * formatted by their key's suffix (_ns durations, _pct percentages,
	 * bytes). Names the report has nothing for say so. */
	function renderTables(body, section, emptyText) {
		var names = section && typeof section === "object" ? Object.keys(section) : [];
		if (!names.length) { empty(body, emptyText); return; }
		names.forEach(function (name) {
			var value = section[name];
			body.appendChild(el("h3", {text: name.replace(/_/g, " ")}));
			if (Array.isArray(value)) {
				if (!value.length) { empty(body, "none recorded"); return; }
				if (value.every(function (row) { return row && typeof row === "object" && !Array.isArray(row); })) {
					body.appendChild(rowsTable(value));
				} else {
					body.appendChild(el("p", {text: fmtStructured(value)}));
				}
			} else if (value && typeof value === "object") {
				body.appendChild(table(["", ""], Object.keys(value).map(function (k) {
					return cellsOf([k.replace(/_/g, " "), fmtByKey(k, value[k])]);
				})));
			} else {
				body.appendChild(el("p", {text: fmtByKey(name, value)}));
			}
		});
	}

	/* One row per probe, its callers as one "function calls" list; the
	 * timeline marks each call under its thread's row. */
	function renderProbes(body, probes) {
		body.appendChild(rowsTable(probes.map(function (p) {
			var row = {id: p.id, kind: p.kind, name: p.name, hits: p.hits};
			if (p.kind === "uprobe") {
				row.calls = p.calls; row.total_ns = p.total_ns; row.p50_ns = p.p50_ns;
				row.p90_ns = p.p90_ns; row.p99_ns = p.p99_ns; row.max_ns = p.max_ns;
			}
			row.records = p.records;
			row.callers = (p.callers || []).map(function (c) { return c["function"] + " " + c.calls; }).join(", ");
			if (p.failed) row.failed = p.failed;
			return row;
		})));
	}

	function rowsTable(rows) {
		var columns = [];
		rows.forEach(function (row) {
			Object.keys(row).forEach(function (k) { if (columns.indexOf(k) < 0) columns.push(k); });
		});
		var numeric = columns.map(function (k) {
			return rows.some(function (row) { return typeof row[k] === "number"; });
		});
		return table(columns.map(function (k) { return k.replace(/_/g, " "); }), rows.map(function (row) {
			return cellsOf(columns.map(function (k) { return k in row ? fmtByKey(k, row[k]) : ""; }));
		}), numeric);
	}

	function fmtByKey(key, value) {
		if (typeof value === "number") {
			/* identifiers are not quantities: no thousands separators */
			if (/^(pid|tid|cpu|fd|dev|port)$|_(pid|tid|fd)$/.test(key)) return String(value);
			if (/_ns$/.test(key)) return fmtNs(value);
			if (/_pct$/.test(key)) return fmtPct(value);
			if (/bytes$/.test(key)) return fmtBytes(value);
		}
		return fmtStructured(value);
	}

	function renderVerdict(body, data) {
		var diagnosis = data.diagnosis || {};
		var confidence = diagnosis.confidence;
		var box = el("div", {"class": "verdict", id: "verdict"});
		if (confidence) box.appendChild(el("span", {"class": "badge " + confidence,
			text: "confidence: " + confidence}));
		box.appendChild(el("span", {id: "verdict-text", text: data.summary || "No summary in this report."}));
		body.appendChild(box);
		var caveats = diagnosis.caveats || [];
		if (caveats.length) {
			body.appendChild(el("ul", {"class": "caveats"}, caveats.map(function (c) {
				return el("li", {text: c});
			})));
		}
	}

	/* origin_ns: the scope's start; the spike's times are shown from it. */
	function renderDiagnosis(body, diagnosis, origin_ns) {
		var causes = (diagnosis && diagnosis.causes) || [];
		if (!causes.length) empty(body, "No cause could be claimed from this capture.");
		causes.forEach(function (cause) {
			var key = cause.key_number || {};
			var children = [
				el("div", null, [el("span", {"class": "rank", text: "#" + cause.rank}),
					el("strong", {text: cause.title || cause.kind}),
					" ", el("code", {text: cause.kind})]),
				el("div", null, [el("span", {"class": "key", text: fmtUnit(key.value, key.unit)}),
					" " + (key.name || "") +
					(typeof cause.score === "number" ? " · explains " + fmtPct(100 * cause.score) +
						" of the affected threads' time" : "")])
			];
			if (cause.subject) children.push(el("div", {"class": "subject"}, ["subject: " + fmtStructured(cause.subject)]));
			if (cause.evidence && cause.evidence.length) {
				children.push(el("ul", null, cause.evidence.map(function (e) { return el("li", {text: e}); })));
			}
			body.appendChild(el("div", {"class": "cause"}, children));
		});
		var spike = diagnosis && diagnosis.spike;
		if (spike) {
			body.appendChild(el("h3", {text: "Latency spike window"}));
			var at = function (ns) { return "+" + fmtNs(ns - origin_ns); };
			body.appendChild(el("p", {id: "spike", text: "window " + at(spike.window_start_ns) + " – " +
				at(spike.window_end_ns) + " vs baseline " + at(spike.baseline_start_ns) + " – " +
				at(spike.baseline_end_ns) + " (from the start of the scope): I/O ×" + fmtAny(spike.io_ratio) +
				", CPU ×" + fmtAny(spike.cpu_ratio) + " → verdict: " + spike.verdict}));
		}
	}

	function renderCpu(body, cpu) {
		if (!cpu || !cpu.folded || !cpu.folded.length) {
			empty(body, "No CPU samples in this capture.");
			return;
		}
		body.appendChild(el("p", {text: fmtCount(cpu.samples) + " samples at " + fmtAny(cpu.freq_hz) +
			" Hz; " + fmtPct(cpu.truncated_pct) + " of stacks truncated, " + fmtPct(cpu.unresolved_pct) +
			" of frames unresolved. Click a frame to zoom; search highlights matching frames in magenta."}));
		var tree = foldedTree(cpu.folded, ["count"]);
		renameField(tree, "count", "value");
		var total = tree.value;
		flameGraph(body, tree, {
			label: function (d) {
				return d.data.name + " (" + fmtCount(d.value) + " samples, " +
					fmtPct(total > 0 ? 100 * d.value / total : 0) + ")";
			}
		});
		var functions = cpu.functions || [];
		if (functions.length) {
			body.appendChild(el("h3", {text: "Top functions"}));
			body.appendChild(table(["function", "module", "self", "self %", "total", "total %"],
				functions.map(function (f) {
					return cellsOf([f.name, f.module || "", fmtCount(f.self), fmtPct(f.self_pct),
						fmtCount(f.total), fmtPct(f.total_pct)]);
				}), [false, false, true, true, true, true]));
		}
	}

	function renameField(node, from, to) {
		node[to] = node[from];
		delete node[from];
		node.children.forEach(function (c) { renameField(c, from, to); });
	}

	/* The critical path of the slowest requests: what their serving threads
	 * did during them (latency.requests.slow, docs/report-json.md). */
	function renderSlowRequests(body, s) {
		var rows = [], pct = function (ns) {
			var all = s.running_ns + s.runnable_ns + s.blocked_ns;
			return all ? (100 * ns / all).toFixed(1) + "%" : "-";
		};
		body.appendChild(el("h3", {text: "Slowest " + fmtCount(s.requests) + " requests (service \u2265 " +
			fmtNs(s.threshold_ns) + "): where their time went"}));
		rows.push(cellsOf(["running", fmtNs(s.running_ns), pct(s.running_ns)]));
		rows.push(cellsOf(["runnable (waiting for a CPU)", fmtNs(s.runnable_ns), pct(s.runnable_ns)]));
		Object.keys(s.blocked_by_class || {}).sort(function (a, b) {
			return s.blocked_by_class[b] - s.blocked_by_class[a];
		}).forEach(function (k) {
			rows.push(cellsOf(["blocked: " + k, fmtNs(s.blocked_by_class[k]), pct(s.blocked_by_class[k])]));
		});
		Object.keys(s.woken_by || {}).forEach(function (k) {
			if (s.woken_by[k]) rows.push(cellsOf(["  blocked waits ended by: " + k, fmtNs(s.woken_by[k]),
				pct(s.woken_by[k])]));
		});
		body.appendChild(table(["serving thread", "time", "share"], rows, [false, true, true]));
	}

	function renderLatency(body, latency) {
		if (!latency) { empty(body, "No latency data in this report."); return; }
		var r = latency.requests;
		if (r && typeof r === "object") {
			var keys = Object.keys(r).filter(function (k) { return k !== "slow"; });
			body.appendChild(el("h3", {text: "Requests"}));
			body.appendChild(table(keys, [cellsOf(keys.map(function (k) {
				return /_ns$/.test(k) ? fmtNs(r[k]) : fmtAny(r[k]);
			}))]));
			if (typeof r.followed === "number")
				body.appendChild(el("p", {"class": "note", text: "Weighted: the " +
					fmtCount(r.followed) + " requests followed in the recorder's time windows " +
					"(perfcap-record --req-rate) each stand for their window's second over its " +
					"length in count, total" + (r.weighted_percentiles ? " and percentiles" : "") +
					"; the slowest requests, the queueing and the histogram are of those followed."}));
			if (r.slow) renderSlowRequests(body, r.slow);
		}
		var syscalls = latency.syscalls || [];
		if (syscalls.length) {
			body.appendChild(el("h3", {text: "System calls"}));
			body.appendChild(table(["syscall", "count", "p50", "p90", "p99", "total"],
				syscalls.map(function (s) {
					return cellsOf([s.name, fmtCount(s.count), fmtNs(s.p50_ns), fmtNs(s.p90_ns),
						fmtNs(s.p99_ns), fmtNs(s.total_ns)]);
				}), [false, true, true, true, true, true]));
		}
		var histograms = latency.histograms || [];
		body.appendChild(el("h3", {text: "Histograms"}));
		if (!histograms.length) { empty(body, "No latency histograms in this report."); return; }
		body.appendChild(el("div", {"class": "charts"}, histograms.map(function (h) {
			var buckets = sortedBuckets(h);
			return histogramChart(h.name, buckets, [{label: h.name, color: "#3b82c4",
				values: buckets.map(function (b) { return Number(b.count) || 0; })}], false);
		})));
	}

	function renderTimeline(body, timeline, probes) {
		var probeNames = {};
		(probes || []).forEach(function (p) { probeNames[p.id] = p.name || p.spec || ("probe " + p.id); });
		var threads = (timeline && timeline.threads) || [];
		if (!threads.length) { empty(body, "No scheduler data: the per-thread timeline needs the sched source."); return; }
		var start = timeline.start_ns, end = timeline.end_ns;
		if (!(end > start)) throw new Error("timeline end_ns is not after start_ns");
		var shown = threads.slice(0, MAX_TIMELINE_THREADS);
		var labelW = 190, rowH = 16, gap = 3, top = 4, axisH = 22;
		var width = Math.max(700, Math.min(1340, (body.clientWidth || 1200) - 4));
		var plotW = width - labelW - 10;
		var height = top + shown.length * (rowH + gap) + axisH;
		var view = {from: start, to: end};
		var svg = svgEl("svg", {width: width, height: height, "class": "timeline-svg"});
		var holder = el("div", {"class": "timeline"}, [svg]);
		var hint = el("div", {"class": "details", text: "Drag across the timeline to zoom in; double-click to zoom out."});
		body.appendChild(stateLegend());
		body.appendChild(hint);
		body.appendChild(holder);
		if (threads.length > shown.length) {
			body.appendChild(el("p", {"class": "caveats", text: (threads.length - shown.length) +
				" more threads are in the data but not drawn (the first " + shown.length + " are shown)."}));
		}

		function xOf(t) { return labelW + plotW * (t - view.from) / (view.to - view.from); }

		/* Spans narrower than a pixel are merged per pixel column into one
		 * rect coloured by the state with the most time in it (its tooltip
		 * lists them all), so a long capture draws at most one rect per
		 * pixel per thread. data-spans = how many spans a rect stands for. */
		function drawRow(thread, y) {
			var who = (thread.comm || "") + " " + thread.tid + ": ";
			var column = null;
			function flush() {
				if (!column) return;
				var states = Object.keys(column.ns);
				var top1 = states.reduce(function (a, b) { return column.ns[a] >= column.ns[b] ? a : b; });
				svg.appendChild(svgEl("rect", {"class": "span merged state-" + top1, x: column.x, y: y,
					width: 1, height: rowH, fill: STATE_COLORS[top1] || STATE_COLORS.other,
					"data-spans": column.count},
					[svgTitle(who + column.count + " short spans at +" + fmtNs(column.from - start) + ": " +
						states.map(function (st) { return st + " " + fmtNs(column.ns[st]); }).join(", "))]));
				column = null;
			}
			(thread.spans || []).forEach(function (span) {
				var s = Math.max(span[0], view.from), e = Math.min(span[1], view.to);
				if (!(e > s)) return;
				var state = span[2], x0 = xOf(s), x1 = xOf(e);
				if (x1 - x0 >= 1) {
					flush();
					svg.appendChild(svgEl("rect", {"class": "span state-" + state, x: x0, y: y,
						width: x1 - x0, height: rowH, fill: STATE_COLORS[state] || STATE_COLORS.other,
						"data-spans": 1},
						[svgTitle(who + state + " for " + fmtNs(span[1] - span[0]) + " (at +" +
							fmtNs(span[0] - start) + ")")]));
					return;
				}
				var x = Math.floor(x0);
				if (column && column.x !== x) flush();
				if (!column) column = {x: x, ns: {}, count: 0, from: s};
				column.ns[state] = (column.ns[state] || 0) + (e - s);
				column.count++;
			});
			flush();
			drawProbes(thread, y, who);
		}

		/* User probe calls (report "probes"): a thin bar under the row per
		 * call, a tick for a USDT hit; at most one per pixel column. */
		function drawProbes(thread, y, who) {
			var lastX = -1;
			(thread.probes || []).forEach(function (call) {
				var s = Math.max(call[0], view.from), e = Math.min(call[1], view.to);
				if (e < s) return;
				var x0 = xOf(s), w = Math.max(1, xOf(e) - x0);
				if (w < 2 && Math.floor(x0) === lastX) return;
				lastX = Math.floor(x0);
				var name = probeNames[call[2]] || ("probe " + call[2]), n = call[3] || 1;
				svg.appendChild(svgEl("rect", {"class": "probe-call", x: x0, y: y + rowH - 3,
					width: w, height: 3, fill: "#222"},
					[svgTitle(who + name + (n > 1 ? ": " + n + " calls within " :
						call[1] > call[0] ? " call of " : " hit") +
						(call[1] > call[0] ? fmtNs(call[1] - call[0]) : "") +
						" (at +" + fmtNs(call[0] - start) + ")")]));
			});
		}

		function draw() {
			while (svg.firstChild) svg.removeChild(svg.firstChild);
			shown.forEach(function (thread, row) {
				var y = top + row * (rowH + gap);
				svg.appendChild(svgEl("text", {x: 0, y: y + rowH - 4,
					text: (thread.comm || "?") + " " + thread.tid}, [svgTitle("pid " + thread.pid + ", tid " + thread.tid)]));
				drawRow(thread, y);
			});
			var axisY = top + shown.length * (rowH + gap) + 12;
			for (var i = 0; i <= 5; i++) {
				var t = view.from + (view.to - view.from) * i / 5;
				svg.appendChild(svgEl("text", {"class": "axis", x: xOf(t), y: axisY,
					"text-anchor": i === 0 ? "start" : i === 5 ? "end" : "middle", text: i === 0 && t === start ? "0" : "+" + fmtNs(t - start)}));
			}
		}

		var dragFrom = null;
		var band = null;
		function timeAt(event) {
			var box = svg.getBoundingClientRect();
			var x = Math.min(Math.max(event.clientX - box.left, labelW), labelW + plotW);
			return view.from + (x - labelW) / plotW * (view.to - view.from);
		}
		svg.addEventListener("mousedown", function (e) {
			dragFrom = timeAt(e);
			band = svgEl("rect", {x: xOf(dragFrom), y: 0, width: 0, height: height - axisH,
				fill: "rgba(11,92,173,0.15)"});
			svg.appendChild(band);
			e.preventDefault();
		});
		svg.addEventListener("mousemove", function (e) {
			if (dragFrom === null) return;
			var t = timeAt(e);
			band.setAttribute("x", xOf(Math.min(t, dragFrom)));
			band.setAttribute("width", Math.abs(xOf(t) - xOf(dragFrom)));
		});
		svg.addEventListener("mouseup", function (e) {
			if (dragFrom === null) return;
			var t = timeAt(e), a = Math.min(t, dragFrom), b = Math.max(t, dragFrom);
			dragFrom = null;
			if (b - a > (view.to - view.from) / 500) { view.from = a; view.to = b; }
			draw();
		});
		svg.addEventListener("dblclick", function () { view.from = start; view.to = end; draw(); });
		draw();
	}

	function stateLegend() {
		var legend = el("div", {"class": "legend"}, ["states:"]);
		Object.keys(STATE_COLORS).forEach(function (state) {
			legend.appendChild(el("span", {"class": "swatch", style: "background:" + STATE_COLORS[state]}));
			legend.appendChild(document.createTextNode(state));
		});
		return legend;
	}

	/* ---- wakeup graph ---- */

	function wakerLabel(e) {
		if (!e.waker_tid) return e.waker_kind;
		return e.waker_kind + (/^softirq:/.test(e.waker_kind) ? " on " : " ") +
			(e.waker_comm || "?") + " " + e.waker_tid;
	}

	function rootLabel(r) {
		if (r.kind === "running") return "running: " + (r.comm || "?") + " " + r.tid;
		if (r.kind === "depth") return "longer than the hops followed";
		return r.kind + " (" + (r.wait_class || "?") + " of " + (r.comm || "?") + " " + r.tid + ")";
	}

	function rootsText(e) {
		var sum = (e.other_roots_ns || 0);
		(e.roots || []).forEach(function (r) { sum += r.ns || 0; });
		if (!e.roots || !e.roots.length) return "–";
		return e.roots.map(function (r) {
			return rootLabel(r) + " " + fmtPct(sum ? 100 * r.ns / sum : 0);
		}).join(", ");
	}

	/* The edges as a two-column graph: wakers on the left, waiting threads
	 * on the right, one arrow per edge, its width by total wait. */
	function wakeupSvg(edges) {
		var left = [], right = [];
		edges.forEach(function (e) {
			var a = wakerLabel(e), b = (e.comm || "?") + " " + e.tid;
			if (left.indexOf(a) < 0) left.push(a);
			if (right.indexOf(b) < 0) right.push(b);
		});
		var boxW = 260, boxH = 24, gap = 10, width = 900, top = 8;
		var rows = Math.max(left.length, right.length);
		var height = top * 2 + rows * (boxH + gap);
		var max = edges.reduce(function (m, e) { return Math.max(m, e.total_ns || 0); }, 1);
		var svg = svgEl("svg", {width: width, height: height, "class": "wakeup-svg"});
		var defs = svgEl("defs", null, [svgEl("marker", {id: "wake-arrow", viewBox: "0 0 10 10",
			refX: 10, refY: 5, markerWidth: 10, markerHeight: 10, markerUnits: "userSpaceOnUse",
			orient: "auto-start-reverse"},
			[svgEl("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: "#555"})])]);
		svg.appendChild(defs);
		function yOf(i) { return top + i * (boxH + gap); }
		edges.forEach(function (e) {
			var i = left.indexOf(wakerLabel(e)), j = right.indexOf((e.comm || "?") + " " + e.tid);
			var x1 = boxW + 2, y1 = yOf(i) + boxH / 2, x2 = width - boxW - 2, y2 = yOf(j) + boxH / 2;
			var path = svgEl("path", {"class": "wake-edge", d: "M " + x1 + " " + y1 + " C " +
				(x1 + x2) / 2 + " " + y1 + " " + (x1 + x2) / 2 + " " + y2 + " " + x2 + " " + y2,
				fill: "none", stroke: "#555", "stroke-opacity": 0.6,
				"stroke-width": 1 + 7 * (e.total_ns || 0) / max, "marker-end": "url(#wake-arrow)"});
			path.appendChild(svgEl("title", {text: wakerLabel(e) + " woke " + (e.comm || "?") + " " +
				e.tid + " (" + e.wait_class + "): " + fmtCount(e.waits) + " waits, " +
				fmtNs(e.total_ns) + "; root: " + rootsText(e)}));
			svg.appendChild(path);
		});
		function box(x, i, label, cls) {
			var g = svgEl("g", {"class": "wake-node " + cls});
			g.appendChild(svgEl("rect", {x: x, y: yOf(i), width: boxW, height: boxH, rx: 4,
				fill: cls === "waker" ? "#e8eef7" : "#f7efe2", stroke: "#889"}));
			g.appendChild(svgEl("text", {x: x + 6, y: yOf(i) + 16, "font-size": 12,
				text: label.length > 40 ? label.slice(0, 39) + "…" : label}));
			g.appendChild(svgEl("title", {text: label}));
			svg.appendChild(g);
		}
		left.forEach(function (label, i) { box(0, i, label, "waker"); });
		right.forEach(function (label, i) { box(width - boxW, i, label, "wakee"); });
		return el("div", {"class": "wakeup-graph"}, [svg]);
	}

	function renderWakeups(body, graph) {
		var edges = (graph && graph.edges) || [];
		if (!edges.length) { empty(body, "No blocked waits with wakeups in this report (record the sched source)."); return; }
		body.appendChild(el("p", {"class": "details", text: "Who woke whom: blocked waits by what ended them " +
			"(wakers left, waiting threads right). Root: where the chain of wakers ends, followed up to " +
			graph.max_hops + " hops (A waited for B, B waited for the disk)."}));
		body.appendChild(wakeupSvg(edges));
		body.appendChild(table(["pid", "tid", "comm", "wait", "woken by", "waits", "total", "longest", "root of chain"],
			edges.map(function (e) {
				return cellsOf([e.pid, e.tid, e.comm || "", e.wait_class, wakerLabel(e), fmtCount(e.waits),
					fmtNs(e.total_ns), fmtNs(e.max_ns), rootsText(e)]);
			}), [true, true, false, false, false, true, true, true, false]));
	}

	function renderThreads(body, threads) {
		if (!threads || !threads.length) return;
		body.appendChild(el("h3", {text: "Time shares per thread"}));
		var keys = ["running_ns", "runnable_ns", "io_ns", "futex_ns", "poll_ns", "sleep_ns"];
		body.appendChild(table(["pid", "tid", "comm"].concat(keys.map(function (k) { return k.replace(/_ns$/, ""); })),
			threads.map(function (t) {
				return cellsOf([t.pid, t.tid, t.comm || ""].concat(keys.map(function (k) { return fmtNs(t[k]); })));
			}), [true, true, false, true, true, true, true, true, true]));
	}

	function renderScope(body, scope) {
		var rows = Object.keys(scope).map(function (key) {
			var v = scope[key];
			var text = /_ns$/.test(key) && typeof v === "number" ? fmtNs(v) : fmtStructured(v);
			return cellsOf([key, text]);
		});
		if (!rows.length) { empty(body, "No scope in this report."); return; }
		body.appendChild(table(["", ""], rows));
	}

	function renderQuality(body, quality) {
		if (!quality || !quality.length) { empty(body, "No data-quality counters in this report."); return; }
		body.appendChild(table(["source", "counter", "value", "meaning"], quality.map(function (q) {
			var bad = typeof q.value === "number" && q.value > 0 && !/_pct$/.test(q.key || "");
			var row = cellsOf([q.source, q.key, fmtAny(q.value), q.meaning || ""]);
			if (bad) row.className = "significant";
			return row;
		}), [false, false, true, false]));
	}

	function renderReproduce(body, reproduce) {
		if (!reproduce) { empty(body, "No reproduce block in this report."); return; }
		var lines = [];
		if (reproduce.record_command) lines.push("# record\n" + reproduce.record_command);
		if (reproduce.analyze_command) lines.push("# analyze\n" + reproduce.analyze_command);
		if (reproduce.capture_sha256) lines.push("# capture sha256\n" + reproduce.capture_sha256);
		var hashes = reproduce.program_hashes || {};
		var names = Object.keys(hashes);
		if (names.length) {
			lines.push("# eBPF program hashes\n" + names.map(function (n) { return n + " " + hashes[n]; }).join("\n"));
		}
		body.appendChild(el("pre", {text: lines.join("\n\n")}));
	}

	/* ---- diff ---- */

	/* The diff JSON comes in the shape html/README.md documents; `verdict`
	 * may be an object ({regression, conditional, ...}) or a word
	 * ("regression", "improvement", "mixed", "no significant change") with
	 * `conditional` beside it, and findings may carry base/new values in a
	 * `unit`, in which case `effect` is the relative change new/base - 1. */
	function renderDiff(data) {
		setHeader("perfcap diff", "base → new" + sideSummary(data));
		addSection("summary", "Verdict", function (body) { renderDiffVerdict(body, data); });
		addSection("warnings", "Warnings", function (body) { renderWarnings(body, data.warnings); });
		addSection("findings", "Findings", function (body) {
			renderFindings(body, data.findings);
			renderAppeared(body, data.appeared, data.disappeared);
		});
		addSection("flamegraph", "Differential flame graph", function (body) {
			renderDiffFlame(body, data.folded_pairs);
		});
		addSection("latency", "Latency histograms", function (body) { renderDiffHistograms(body, data.histograms); });
		if (data.normalization || data.thresholds) {
			addSection("method", "Method", function (body) {
				var rows = [];
				Object.keys(data.normalization || {}).forEach(function (k) {
					rows.push(cellsOf(["normalized " + k, fmtStructured(data.normalization[k])]));
				});
				Object.keys(data.thresholds || {}).forEach(function (k) {
					rows.push(cellsOf([k, fmtStructured(data.thresholds[k])]));
				});
				body.appendChild(table(["", ""], rows));
			});
		}
	}

	function sideSummary(data) {
		function side(name) {
			var s = data[name];
			if (!s || typeof s !== "object") return "";
			var parts = [];
			if (typeof s.runs === "number") parts.push(fmtCount(s.runs) + (s.runs === 1 ? " run" : " runs"));
			if (typeof s.seconds === "number") parts.push(fmtNs(s.seconds * 1e9));
			if (typeof s.requests === "number" && s.requests > 0) parts.push(fmtCount(s.requests) + " requests");
			return parts.length ? name + ": " + parts.join(", ") : "";
		}
		var text = [side("base"), side("new")].filter(Boolean).join(" · ");
		return text ? " · " + text : "";
	}

	var VERDICT_BADGES = {regression: "bad", improvement: "ok", mixed: "conditional",
		"no significant change": "ok"};

	function renderDiffVerdict(body, data) {
		var verdict = data.verdict;
		var details = verdict && typeof verdict === "object" ? verdict : {};
		var word = typeof verdict === "string" ? verdict :
			details.regression === true ? "regression" : details.regression === false ? "no regression" : null;
		var conditional = data.conditional === true || details.conditional === true;
		var box = el("div", {"class": "verdict", id: "verdict"});
		if (word) {
			var badge = VERDICT_BADGES[word] || (word === "no regression" ? "ok" : "");
			box.className = "verdict " + (badge === "bad" ? "bad" : badge === "ok" ? "good" : "");
			box.appendChild(el("span", {"class": "badge " + badge, id: "verdict-word", text: word}));
		}
		if (conditional) {
			box.appendChild(el("span", {"class": "badge conditional", title: "the two sides differ in how they were recorded; see the warnings",
				text: "conditional"}));
		}
		box.appendChild(el("span", {id: "verdict-text", text: data.summary || "No summary in this diff."}));
		body.appendChild(box);
		var keys = Object.keys(details).filter(function (k) { return k !== "regression" && k !== "conditional"; });
		if (typeof data.significant === "number") keys.push("significant");
		if (keys.length) {
			body.appendChild(table(["", ""], keys.map(function (k) {
				return cellsOf([k === "significant" && !(k in details) ? "significant findings" : k,
					fmtStructured(k in details ? details[k] : data[k])]);
			})));
		}
	}

	function renderWarnings(body, warnings) {
		if (!warnings || !warnings.length) { empty(body, "None: the two sides are comparable."); return; }
		body.appendChild(el("ul", {"class": "warnings"}, warnings.map(function (w) { return el("li", {text: w}); })));
	}

	/* A value in a finding's unit ("ns", "ns/request", "ns/s", "share", "events/s"). */
	function fmtFindingValue(value, unit) {
		if (typeof value !== "number") return "–";
		var per = /^ns(\/.*)?$/.exec(unit || "");
		if (per) return fmtNs(value) + (per[1] || "");
		if (unit === "share") return fmtPct(100 * value);
		return fmtAny(value) + (unit ? " " + unit : "");
	}

	function fmtRelative(x) {
		if (typeof x !== "number" || !isFinite(x)) return null;
		return (x > 0 ? "+" : "") + trim(100 * x) + "%";
	}

	function findingEffect(f) {
		if (!("unit" in f)) return (f.effect > 0 ? "+" : "") + fmtAny(f.effect);
		if (f.appeared) return "appeared";
		if (f.disappeared) return "disappeared";
		return fmtRelative(f.effect) || "–";
	}

	function findingInterval(f) {
		if (!("unit" in f)) return "[" + fmtAny(f.ci_low) + ", " + fmtAny(f.ci_high) + "]";
		var lo = fmtRelative(f.ci_low), hi = fmtRelative(f.ci_high);
		return lo && hi ? "[" + lo + ", " + hi + "]" : "–";
	}

	function renderFindings(body, findings) {
		if (!findings || !findings.length) { empty(body, "No findings."); return; }
		var withValues = findings.some(function (f) { return "unit" in f; });
		var headers = ["rank", "kind", "name", "direction"];
		if (withValues) headers = headers.concat(["base", "new"]);
		headers = headers.concat(["effect", "95% CI", "p", "significant"]);
		var numeric = headers.map(function (h) { return ["rank", "base", "new", "effect", "95% CI", "p"].indexOf(h) >= 0; });
		body.appendChild(table(headers, findings.map(function (f) {
			var cells = [
				{text: typeof f.rank === "number" && f.rank > 0 ? String(f.rank) : "–"},
				{text: f.kind || ""}, {text: f.name || "", title: f.test},
				{text: f.direction || "", className: f.direction === "up" ? "up" : f.direction === "down" ? "down" : ""}];
			if (withValues) {
				cells.push({text: fmtFindingValue(f.base, f.unit)}, {text: fmtFindingValue(f["new"], f.unit)});
			}
			cells.push({text: findingEffect(f)}, {text: findingInterval(f)},
				{text: fmtP(f.p_value) + (typeof f.q_value === "number" ? " (q " + fmtP(f.q_value) + ")" : "")},
				{text: f.significant ? "yes" : "no"});
			var row = {cells: cells};
			if (f.significant) row.className = "significant";
			return row;
		}), numeric));
	}

	function renderAppeared(body, appeared, disappeared) {
		[["appeared", "Functions only in new", appeared], ["disappeared", "Functions only in base", disappeared]]
			.forEach(function (item) {
				var names = item[2];
				if (!names || !names.length) return;
				body.appendChild(el("h3", {text: item[1] + " (" + names.length + ")"}));
				body.appendChild(el("ul", {"class": item[0]}, names.map(function (n) { return el("li", {text: n}); })));
			});
	}

	/* Widths come from one side ("new" for base → new, "base" for new → base);
	 * colour is always the change from base to new: red grew, blue shrank. */
	function renderDiffFlame(body, pairs) {
		if (!pairs || !pairs.length) { empty(body, "No CPU stacks on either side."); return; }
		var tree = foldedTree(pairs, ["base", "new"]);
		var totals = {base: tree.base, "new": tree["new"]};
		var state = {side: "new", normalize: true};
		var forward = el("button", {type: "button", "class": "active", id: "diff-forward",
			text: "base → new (sized by new)"});
		var backward = el("button", {type: "button", id: "diff-backward",
			text: "new → base (sized by base)"});
		var normalize = el("input", {type: "checkbox", id: "diff-normalize", checked: "checked"});
		var normalizeLabel = el("label", null, [normalize, " compare shares (normalize to each side's total)"]);
		body.appendChild(el("p", {text: "base: " + fmtCount(totals.base) + " samples, new: " +
			fmtCount(totals["new"]) + " samples. Frames present only in the base appear in the new → base view."}));
		body.appendChild(el("div", {"class": "legend"}, ["colour = change from base to new:",
			el("span", {"class": "swatch", style: "background:var(--grow)"}), "grew",
			el("span", {"class": "swatch", style: "background:var(--shrink)"}), "shrank",
			el("span", {"class": "swatch", style: "background:#dcdcdc"}), "unchanged",
			el("span", {"class": "swatch", style: "background:" + SEARCH_COLOR}), "search match"]));

		function change(d) {
			var b = d.data.base, n = d.data["new"];
			if (state.normalize) {
				var sb = totals.base > 0 ? b / totals.base : 0, sn = totals["new"] > 0 ? n / totals["new"] : 0;
				return {delta: sn - sb, scale: Math.max(sb, sn)};
			}
			return {delta: n - b, scale: Math.max(b, n)};
		}

		function color(d, original) {
			if (d.highlight) return original;
			var c = change(d);
			/* sqrt: a 10% change is already clearly tinted, 100% is saturated */
			var v = c.scale > 0 ? Math.sqrt(Math.min(1, Math.abs(c.delta) / c.scale)) : 0;
			var fade = Math.round(225 * (1 - v));
			if (c.delta > 0) return "rgb(235," + fade + "," + fade + ")";
			if (c.delta < 0) return "rgb(" + fade + "," + fade + ",235)";
			return "rgb(220,220,220)";
		}

		function label(d) {
			var b = d.data.base, n = d.data["new"];
			var pb = totals.base > 0 ? 100 * b / totals.base : 0, pn = totals["new"] > 0 ? 100 * n / totals["new"] : 0;
			var dp = pn - pb;
			return d.data.name + ": base " + fmtCount(b) + " (" + fmtPct(pb) + "), new " + fmtCount(n) +
				" (" + fmtPct(pn) + "), change " + (dp >= 0 ? "+" : "") + trim(dp) + " points";
		}

		var graph = flameGraph(body, tree, {
			extraControls: [forward, backward, normalizeLabel],
			color: color, label: label,
			getValue: function (d) {   /* d: a tree item, or a hierarchy node around one */
				var item = "base" in d ? d : d.data;
				return item[state.side];
			}
		});
		graph.holder.setAttribute("data-side", state.side);

		function setSide(side) {
			state.side = side;
			forward.className = side === "new" ? "active" : "";
			backward.className = side === "base" ? "active" : "";
			graph.holder.setAttribute("data-side", side);
			graph.redraw(foldedTree(pairs, ["base", "new"]));
		}
		forward.addEventListener("click", function () { setSide("new"); });
		backward.addEventListener("click", function () { setSide("base"); });
		normalize.addEventListener("change", function () {
			state.normalize = normalize.checked;
			graph.redraw(foldedTree(pairs, ["base", "new"]));
		});
	}

	function renderDiffHistograms(body, histograms) {
		if (!histograms || !histograms.length) { empty(body, "No latency histograms in this diff."); return; }
		body.appendChild(el("div", {"class": "legend"}, ["bars overlaid:",
			el("span", {"class": "swatch", style: "background:var(--base)"}), "base",
			el("span", {"class": "swatch", style: "background:var(--new)"}), "new"]));
		body.appendChild(el("div", {"class": "charts"}, histograms.map(function (h) {
			var buckets = sortedBuckets(h);
			return histogramChart(h.name, buckets, [
				{label: "base", color: "rgba(43,111,217,0.55)", values: buckets.map(function (b) { return Number(b.base) || 0; })},
				{label: "new", color: "rgba(217,52,43,0.55)", values: buckets.map(function (b) { return Number(b["new"]) || 0; })}
			], true);
		})));
	}

	/* ---- entry ---- */

	function setHeader(title, subtitle) {
		document.getElementById("page-title").textContent = title;
		document.getElementById("page-subtitle").textContent = subtitle || "";
	}

	function readData() {
		var node = document.getElementById("perfcap-data");
		return JSON.parse(node ? node.textContent : "null");
	}

	function main() {
		var loading = document.getElementById("page-loading");
		var data;
		try {
			data = readData();
		} catch (err) {
			loading.textContent = "The data embedded in this page is not valid JSON: " + err.message;
			loading.className = "section-error";
			console.error("perfcap page: " + err.message);
			return;
		}
		page.removeChild(loading);
		if (data && data.kind === "report") renderReport(data);
		else if (data && data.kind === "diff") renderDiff(data);
		else {
			var kind = data && data.kind;
			page.appendChild(el("p", {"class": "section-error",
				text: "Unknown page kind " + JSON.stringify(kind) + ": expected \"report\" or \"diff\"."}));
			console.error("perfcap page: unknown kind " + JSON.stringify(kind));
			return;
		}
		document.body.setAttribute("data-rendered", data.kind);
	}

	main();
})();
