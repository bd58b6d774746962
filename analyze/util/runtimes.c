/* runtimes.c - recognizing a process's language runtime (see runtimes.h).
 *
 * Evidence, strongest first: a mapped file only that runtime ships
 * (libjvm.so, libnode.so, libpythonX.Y.so, libruby, libcoreclr.so, the
 * BEAM's erts) 90; Go runtime functions in its stacks 85 (Go binaries are
 * usually static: nothing else shows); the executable's name 80; argv[0]'s
 * name 60 (a launcher that execs the runtime). The strongest wins; a
 * second, agreeing piece of evidence adds 5. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "runtimes.h"

struct runtime_rule {
	const char *runtime;
	const char *lib;              /* a mapped file's base name starts with this */
	const char *const *exes;      /* executable base names (prefix match if '*' ends one) */
	const char *advice;
};

static const char *const jvm_exes[] = { "java", NULL };
static const char *const node_exes[] = { "node", "nodejs", NULL };
static const char *const python_exes[] = { "python*", NULL };
static const char *const dotnet_exes[] = { "dotnet", NULL };
static const char *const ruby_exes[] = { "ruby*", NULL };
static const char *const beam_exes[] = { "beam.smp", "beam", NULL };

static const struct runtime_rule rules[] = {
	{ "jvm", "libjvm.so", jvm_exes,
	  "JIT frames need -XX:+PreserveFramePointer and a perf map (/tmp/perf-PID.map: "
	  "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit on JDK 17+, written "
	  "at exit; or perfcap-record --jvm-perfmap, or jcmd PID Compiler.perfmap, for a "
	  "JVM still running when the recording stops)" },
	{ "node", "libnode.so", node_exes,
	  "JIT frames need node --perf-basic-prof (and --interpreted-frames-native-stack)" },
	{ "python", "libpython", python_exes, NULL /* by version */ },
	{ "dotnet", "libcoreclr.so", dotnet_exes,
	  "JIT frames need DOTNET_PerfMapEnabled=1" },
	{ "ruby", "libruby", ruby_exes, "YJIT frames need ruby --yjit-perf (3.2+)" },
	{ "beam", "beam.smp", beam_exes, "JIT frames need erl +JPperf true (OTP 24+)" },
};

#define NRULES (sizeof(rules) / sizeof(rules[0]))

static const char go_advice[] =
	"Go keeps frame pointers on amd64 (a leaf function's caller is missing); functions "
	"are named from the symbol table, or from .gopclntab when stripped (-ldflags=-s)";
static const char python_old_advice[] =
	"Python before 3.12 has no perf support: its frames are the interpreter's "
	"(_PyEval_EvalFrameDefault); -e usdt:EXE:python:function__entry names its calls";
static const char python_perf_advice[] =
	"Python frames need python -X perf (or PYTHONPERFSUPPORT=1)";

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

static int name_matches(const char *name, const char *pattern)
{
	size_t n = strlen(pattern);

	if (n > 0 && pattern[n - 1] == '*')
		return strncmp(name, pattern, n - 1) == 0;
	return strcmp(name, pattern) == 0;
}

static int exe_matches(const struct runtime_rule *r, const char *path)
{
	const char *name = base_name(path);

	if (!name || !*name)
		return 0;
	for (const char *const *e = r->exes; *e; e++)
		if (name_matches(name, *e))
			return 1;
	return 0;
}

/* "3.11" from "python3.11", "libpython3.11.so.1.0", "ruby3.1": the first
 * digits-and-dots run after the name. */
static void version_after(const char *name, const char *prefix, char *out, size_t len)
{
	const char *p = name + strlen(prefix);
	size_t n = 0;

	while (p[n] && (isdigit((unsigned char)p[n]) || p[n] == '.') && n + 1 < len)
		n++;
	while (n > 0 && p[n - 1] == '.')
		n--;
	if (n > 0 && isdigit((unsigned char)p[0])) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
}

/* "17" from ".../jvm/java-17-openjdk-amd64/lib/server/libjvm.so". */
static void jvm_version(const char *path, char *out, size_t len)
{
	const char *p = strstr(path, "java-");

	if (p)
		version_after(p, "java-", out, len);
}


struct found {
	int score;
	char evidence[160];
	const char *lib_path;
	const char *exe_path;
};

static void note(struct found *f, int score, const char *what, const char *path)
{
	size_t used = strlen(f->evidence);

	if (score > f->score)
		f->score = f->score ? score + 5 : score;
	else
		f->score += f->score < 95 ? 5 : 0;
	snprintf(f->evidence + used, sizeof(f->evidence) - used, "%s%s %s", used ? ", " : "",
		 what, base_name(path));
}

static void examine(const struct runtime_rule *r, const struct runtime_facts *fa,
		    struct found *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < fa->nmaps; i++) {
		const char *name = base_name(fa->maps[i]);

		if (name && strncmp(name, r->lib, strlen(r->lib)) == 0) {
			f->lib_path = fa->maps[i];
			note(f, 90, "maps", fa->maps[i]);
			break;
		}
	}
	if (fa->exe && exe_matches(r, fa->exe)) {
		f->exe_path = fa->exe;
		note(f, 80, "exe", fa->exe);
	}
	if (fa->argv0 && exe_matches(r, fa->argv0) &&
	    (!fa->exe || strcmp(base_name(fa->exe), base_name(fa->argv0)) != 0)) {
		if (!f->exe_path)
			f->exe_path = fa->argv0;
		note(f, 60, "argv[0]", fa->argv0);
	}
}

static void fill_version(const struct runtime_rule *r, const struct found *f,
			 struct runtime_guess *out)
{
	if (strcmp(r->runtime, "jvm") == 0 && f->lib_path)
		jvm_version(f->lib_path, out->version, sizeof(out->version));
	else if (strcmp(r->runtime, "python") == 0 || strcmp(r->runtime, "ruby") == 0) {
		if (f->lib_path)
			version_after(base_name(f->lib_path), r->lib, out->version,
				      sizeof(out->version));
		if (!out->version[0] && f->exe_path)
			version_after(base_name(f->exe_path), r->runtime, out->version,
				      sizeof(out->version));
	}
}

static const char *python_advice(const char *version)
{
	int major = 0, minor = 0;

	if (sscanf(version, "%d.%d", &major, &minor) == 2 &&
	    (major > 3 || (major == 3 && minor >= 12)))
		return python_perf_advice;
	return python_old_advice;
}

int runtime_identify(const struct runtime_facts *fa, struct runtime_guess *out)
{
	struct found best = { 0 }, f;
	const struct runtime_rule *winner = NULL;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < NRULES; i++) {
		examine(&rules[i], fa, &f);
		if (f.score > best.score) {
			best = f;
			winner = &rules[i];
		}
	}
	if (fa->go_symbols && 85 > best.score) {
		out->runtime = "go";
		out->confidence = 85;
		snprintf(out->evidence, sizeof(out->evidence), "Go runtime functions in its stacks");
		out->advice = go_advice;
		return 1;
	}
	if (!winner)
		return 0;
	out->runtime = winner->runtime;
	out->confidence = best.score > 100 ? 100 : best.score;
	snprintf(out->evidence, sizeof(out->evidence), "%s", best.evidence);
	fill_version(winner, &best, out);
	out->advice = winner->advice ? winner->advice : python_advice(out->version);
	return 1;
}
