/* symbolize_files.c - finding the local files of a module state, in
 * priority order: the build-id debug tree, --symfs, the recorded path, its
 * .gnu_debuglink files, debuginfod; opening their DWARF (and a dwz alt
 * file) and closing them again.
 */

#include "safe_file.h"
#include "symbolize_internal.h"


/* ---- local files -------------------------------------------------------- */

static int build_id_matches(const struct module_state *st, int fd)
{
	uint8_t id[PC_BUILD_ID_MAX];
	int len;

	if (st->build_id_len == 0)
		return 1; /* nothing recorded to compare: the path decides */
	len = pc_elf_read_build_id_fd(fd, id);
	return len == st->build_id_len && memcmp(id, st->build_id, (size_t)len) == 0;
}

static int already_loaded(const struct module_state *st, const struct stat *sb)
{
	int i;

	for (i = 0; i < st->nfiles; i++) {
		if (st->files[i].dev == sb->st_dev && st->files[i].ino == sb->st_ino)
			return 1;
	}
	return 0;
}

static int open_dwarf(struct local_file *f, int fd)
{
	f->elf_handle = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f->elf_handle == NULL)
		return -EINVAL;
	f->dwarf = dwarf_begin_elf(f->elf_handle, DWARF_C_READ, NULL);
	if (f->dwarf == NULL) {
		elf_end(f->elf_handle);
		f->elf_handle = NULL;
		return -EINVAL;
	}
	f->fd = fd;
	return 0;
}

static int open_alt_dwarf(struct local_file *f, int fd)
{
	f->alt_elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f->alt_elf == NULL)
		return -EINVAL;
	f->alt_dwarf = dwarf_begin_elf(f->alt_elf, DWARF_C_READ, NULL);
	if (f->alt_dwarf == NULL) {
		elf_end(f->alt_elf);
		f->alt_elf = NULL;
		return -EINVAL;
	}
	f->alt_fd = fd;
	dwarf_setalt(f->dwarf, f->alt_dwarf);
	return 0;
}

/* dwz moves DWARF shared by several files into one file that each names
 * in .gnu_debugaltlink. libdw finds it under /usr/lib/debug by itself;
 * look in the configured debug directory by its build-id too. */
static void attach_alt_dwarf(const struct symbolizer *s, struct local_file *f)
{
	char hex[2 * PC_BUILD_ID_MAX + 1], *path;
	uint8_t found[PC_BUILD_ID_MAX];
	const void *id;
	const char *name;
	ssize_t len = dwelf_dwarf_gnu_debugaltlink(f->dwarf, &name, &id);
	int fd;

	if (len < 2 || len > PC_BUILD_ID_MAX || dwarf_getalt(f->dwarf) != NULL)
		return;
	build_id_to_hex(id, (size_t)len, hex);
	if (asprintf(&path, "%s/.build-id/%.2s/%s.debug", s->debug_dir, hex,
		     hex + 2) < 0)
		return;
	fd = pc_open_regular(path, 0);
	free(path);
	if (fd < 0)
		return;
	if (pc_elf_read_build_id_fd(fd, found) != len ||
	    memcmp(found, id, (size_t)len) != 0 || open_alt_dwarf(f, fd) != 0)
		close(fd);
}

/* Loads an open file into the state if its build-id matches. Takes fd. */
static void add_local_fd(const struct symbolizer *s, struct module_state *st,
			 int fd, const char *path, enum sym_source source)
{
	struct local_file *f = &st->files[st->nfiles];
	struct stat sb;

	if (st->nfiles == MAX_LOCAL_FILES || fstat(fd, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) || already_loaded(st, &sb) ||
	    !build_id_matches(st, fd) ||
	    pc_elf_module_load_fd(&f->elf, fd, path, NULL, 0) != 0) {
		close(fd);
		return;
	}
	f->source = source;
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	f->fd = -1;
	f->alt_fd = -1;
	if (f->elf.has_debug_info && st->dwarf_file == NULL &&
	    open_dwarf(f, fd) == 0) {
		attach_alt_dwarf(s, f);
		st->dwarf_file = f;
	}
	if (f->fd < 0)
		close(fd);
	st->nfiles++;
}

static void add_local_path(const struct symbolizer *s, struct module_state *st,
			   const char *path)
{
	int fd = pc_open_regular(path, 0); /* a FIFO must not block */

	if (fd >= 0)
		add_local_fd(s, st, fd, path, SYM_SRC_LOCAL);
}

/* A path recorded in the capture (data, not trusted): normalised and
 * resolved inside root ("/" without --symfs), a regular file only. */
static void add_recorded_path(const struct symbolizer *s, struct module_state *st,
			      const char *root)
{
	char *norm = strdup(st->path), *shown = NULL;
	int fd;

	if (norm == NULL)
		return;
	pc_path_normalise(norm);
	if (asprintf(&shown, "%s%s%s", root ? root : "", norm[0] == '/' ? "" : "/",
		     norm) >= 0) {
		fd = pc_open_confined(root, norm);
		if (fd >= 0)
			add_local_fd(s, st, fd, shown, SYM_SRC_LOCAL);
		free(shown);
	}
	free(norm);
}

static void try_build_id_tree(struct symbolizer *s, struct module_state *st)
{
	char hex[2 * PC_BUILD_ID_MAX + 1];
	char *path;

	if (st->build_id_len < 2)
		return;
	build_id_to_hex(st->build_id, st->build_id_len, hex);
	if (asprintf(&path, "%s/.build-id/%.2s/%s.debug", s->debug_dir, hex,
		     hex + 2) < 0)
		return;
	add_local_path(s, st, path);
	free(path);
}

static void try_symfs(struct symbolizer *s, struct module_state *st)
{
	if (s->symfs == NULL || st->path[0] == '\0')
		return;
	add_recorded_path(s, st, s->symfs);
}

/* The file name in the .gnu_debuglink section of f, or NULL. malloc'd. */
static char *read_debuglink(const struct local_file *f)
{
	int fd = pc_open_regular(f->elf.path, 0);
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	char *link = NULL;

	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf != NULL && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while (link == NULL && (scn = elf_nextscn(elf, scn)) != NULL) {
			const char *name;
			Elf_Data *data;

			if (gelf_getshdr(scn, &shdr) == NULL)
				continue;
			name = elf_strptr(elf, shstrndx, shdr.sh_name);
			if (name == NULL || strcmp(name, ".gnu_debuglink") != 0)
				continue;
			data = elf_getdata(scn, NULL);
			if (data != NULL && data->d_size > 0 &&
			    memchr(data->d_buf, '\0', data->d_size) != NULL)
				link = strdup(data->d_buf);
		}
	}
	elf_end(elf);
	close(fd);
	return link;
}

/* gdb's places for a debuglink: next to the binary, in .debug/ next to
 * it, and under the debug directory. */
static void try_debuglink(struct symbolizer *s, struct module_state *st,
			  const struct local_file *binary)
{
	char *link = read_debuglink(binary), *dir, *slash, *path;
	const char *formats[] = { "%s/%s", "%s/.debug/%s", NULL };
	int i;

	if (link == NULL || strchr(link, '/') != NULL ||
	    (dir = strdup(binary->elf.path)) == NULL) {
		free(link);
		return;
	}
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		strcpy(dir, ".");
	for (i = 0; formats[i] != NULL && st->dwarf_file == NULL; i++) {
		if (asprintf(&path, formats[i], dir, link) >= 0) {
			add_local_path(s, st, path);
			free(path);
		}
	}
	if (st->dwarf_file == NULL && dir[0] == '/' &&
	    asprintf(&path, "%s%s/%s", s->debug_dir, dir, link) >= 0) {
		add_local_path(s, st, path);
		free(path);
	}
	free(dir);
	free(link);
}

static void try_debuglinks(struct symbolizer *s, struct module_state *st)
{
	int i, nbinaries = st->nfiles;

	for (i = 0; i < nbinaries && st->dwarf_file == NULL; i++) {
		if (!st->files[i].elf.has_debug_info && st->files[i].elf.path)
			try_debuglink(s, st, &st->files[i]);
	}
}

#ifdef HAVE_DEBUGINFOD
static void try_debuginfod(struct symbolizer *s, struct module_state *st)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	int fd;

	if (!s->debuginfod || urls == NULL || urls[0] == '\0' ||
	    st->build_id_len == 0 || st->dwarf_file != NULL)
		return;
	if (s->debuginfod_client == NULL)
		s->debuginfod_client = debuginfod_begin();
	if (s->debuginfod_client == NULL)
		return;
	fd = debuginfod_find_debuginfo(s->debuginfod_client, st->build_id,
				       st->build_id_len, &path);
	if (fd >= 0)
		add_local_fd(s, st, fd, path, SYM_SRC_DEBUGINFOD);
	free(path);
}
#else
static void try_debuginfod(struct symbolizer *s, struct module_state *st)
{
	(void)s;
	(void)st;
}
#endif

/* Runs once per module state: finds every usable file, in priority order. */
void search_files(struct symbolizer *s, struct module_state *st)
{
	if (s->local_files) {
		try_build_id_tree(s, st);
		try_symfs(s, st);
		if (st->path[0] != '\0' && s->symfs == NULL) /* --symfs confines */
			add_recorded_path(s, st, NULL);
		try_debuglinks(s, st);
	}
	try_debuginfod(s, st);
}

void local_file_close(struct local_file *f)
{
	free(f->functions.ranges);
	if (f->dwarf != NULL)
		dwarf_end(f->dwarf);
	if (f->elf_handle != NULL)
		elf_end(f->elf_handle);
	if (f->fd >= 0)
		close(f->fd);
	if (f->alt_dwarf != NULL)
		dwarf_end(f->alt_dwarf);
	if (f->alt_elf != NULL)
		elf_end(f->alt_elf);
	if (f->alt_fd >= 0)
		close(f->alt_fd);
	pc_elf_module_free(&f->elf);
}
