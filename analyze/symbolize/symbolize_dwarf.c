/* symbolize_dwarf.c - resolution with libdw: source lines, inline chains
 * and the sorted index of subprogram ranges built once per DWARF file.
 */

#include "symbolize_internal.h"

/* ---- resolution with DWARF ---------------------------------------------- */

struct source_position {
	const char *file;
	int line;
};

static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name,
						     &attr));
	if (name == NULL)
		name = dwarf_formstring(dwarf_attr_integrate(
			die, DW_AT_MIPS_linkage_name, &attr));
	if (name == NULL)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name,
							     &attr));
	return name;
}

static void line_table_position(Dwarf_Die *cudie, uint64_t vaddr,
				struct source_position *pos)
{
	Dwarf_Line *line = dwarf_getsrc_die(cudie, vaddr);

	pos->file = NULL;
	pos->line = 0;
	if (line == NULL)
		return;
	pos->file = dwarf_linesrc(line, NULL, NULL);
	dwarf_lineno(line, &pos->line);
}

/* Where an inlined instance was called: the position of the caller. */
static void call_site_position(Dwarf_Die *inlined, struct source_position *pos)
{
	Dwarf_Attribute attr;
	Dwarf_Word file_index, line;
	Dwarf_Files *files;
	size_t nfiles;
	Dwarf_Die cudie;

	pos->file = NULL;
	pos->line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr),
			    &file_index) == 0 &&
	    dwarf_diecu(inlined, &cudie, NULL, NULL) != NULL &&
	    dwarf_getsrcfiles(&cudie, &files, &nfiles) == 0)
		pos->file = dwarf_filesrc(files, file_index, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr),
			    &line) == 0)
		pos->line = (int)line;
}

static void fill_dwarf_frame(struct sym_frame *f, Dwarf_Die *scope,
			     const struct source_position *pos, uint64_t vaddr,
			     enum sym_source source)
{
	Dwarf_Addr entry;

	memset(f, 0, sizeof(*f));
	f->function = die_function_name(scope);
	f->inlined = dwarf_tag(scope) == DW_TAG_inlined_subroutine;
	if (dwarf_entrypc(scope, &entry) == 0 && entry <= vaddr)
		f->sym_offset = vaddr - entry;
	f->file = pos->file;
	f->line = pos->line;
	f->source = source;
	f->mode = f->file != NULL ? SYM_MODE_LINE : SYM_MODE_SYMBOL;
}

static int is_function_scope(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* Frames from a chain of function DIEs ordered outer to inner: the
 * innermost gets the line table's position, each outer one the call site
 * of the instance inlined into it. */
static int frames_from_chain(Dwarf_Die *chain, int depth,
			     struct source_position pos, uint64_t vaddr,
			     enum sym_source source, struct sym_frame *out,
			     int max)
{
	int i, n = 0;

	for (i = depth - 1; i >= 0 && n < max; i--) {
		fill_dwarf_frame(&out[n], &chain[i], &pos, vaddr, source);
		/* an inlined instance without a name (its origin unreadable)
		 * would be a blank frame: leave it out */
		if (out[n].function != NULL || !out[n].inlined)
			n++;
		call_site_position(&chain[i], &pos);
	}
	return n;
}

/* An inlined instance among parent's children (looking through lexical
 * blocks) whose code contains vaddr. */
static int find_inlined_child(Dwarf_Die *parent, uint64_t vaddr,
			      Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_CHAIN || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_inlined_subroutine &&
		    dwarf_haspc(&child, vaddr) == 1) {
			*out = child;
			return 1;
		}
		if (tag == DW_TAG_lexical_block &&
		    (dwarf_haspc(&child, vaddr) == 1 ||
		     (!dwarf_hasattr(&child, DW_AT_low_pc) &&
		      !dwarf_hasattr(&child, DW_AT_ranges))) &&
		    find_inlined_child(&child, vaddr, out, depth + 1))
			return 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The chain below a subprogram known to contain vaddr, outer to inner. */
static int chain_from_subprogram(Dwarf_Die *subprogram, uint64_t vaddr,
				 Dwarf_Die *chain, int max)
{
	int depth = 1;

	chain[0] = *subprogram;
	while (depth < max &&
	       find_inlined_child(&chain[depth - 1], vaddr, &chain[depth], 0))
		depth++;
	return depth;
}

/* The same chain found without the index (two walks of the CU):
 * dwarf_getscopes gives the innermost function, dwarf_getscopes_die the
 * DIEs that physically contain it. */
static int chain_from_scopes(Dwarf_Die *cudie, uint64_t vaddr,
			     Dwarf_Die *chain, int max)
{
	Dwarf_Die *scopes = NULL, innermost;
	int nscopes = dwarf_getscopes(cudie, vaddr, &scopes), i, found = 0;
	int depth = 0, outer;

	for (i = 0; i < nscopes && !found; i++) {
		if (is_function_scope(&scopes[i])) {
			innermost = scopes[i];
			found = 1;
		}
	}
	free(scopes);
	scopes = NULL;
	if (!found)
		return 0;
	nscopes = dwarf_getscopes_die(&innermost, &scopes);
	for (outer = 0; outer < nscopes - 1; outer++) {
		if (dwarf_tag(&scopes[outer]) == DW_TAG_subprogram)
			break; /* the innermost real function */
	}
	for (i = outer; i >= 0 && depth < max; i--) {
		if (is_function_scope(&scopes[i]))
			chain[depth++] = scopes[i];
	}
	free(scopes);
	return depth;
}

/* ---- DWARF function index ------------------------------------------------ */

/* Every subprogram's address ranges, sorted, built once per DWARF file: a
 * binary search replaces a walk of the whole CU for each address. */
struct function_range {
	uint64_t  low, high;
	Dwarf_Off die_offset;
};

static int add_function_range(struct function_index *ix, uint64_t low,
			      uint64_t high, Dwarf_Off die_offset)
{
	if (ix->n == ix->cap) {
		size_t new_cap = ix->cap ? ix->cap * 2 : 1024;
		struct function_range *bigger =
			realloc(ix->ranges, new_cap * sizeof(*bigger));

		if (bigger == NULL)
			return -ENOMEM;
		ix->ranges = bigger;
		ix->cap = new_cap;
	}
	ix->ranges[ix->n].low = low;
	ix->ranges[ix->n].high = high;
	ix->ranges[ix->n].die_offset = die_offset;
	ix->n++;
	return 0;
}

static void index_subprogram(struct function_index *ix, Dwarf_Die *die)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t offset = 0;

	while ((offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0) {
		if (low < high)
			add_function_range(ix, low, high, dwarf_dieoffset(die));
	}
}

/* Subprograms at the top of a unit or inside namespaces/modules. */
static void index_children(struct function_index *ix, Dwarf_Die *parent,
			   int depth)
{
	Dwarf_Die child;

	if (depth > MAX_CHAIN || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram)
			index_subprogram(ix, &child);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_module)
			index_children(ix, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int compare_ranges(const void *pa, const void *pb)
{
	const struct function_range *a = pa, *b = pb;

	if (a->low != b->low)
		return a->low < b->low ? -1 : 1;
	if (a->high != b->high)
		return a->high < b->high ? -1 : 1;
	if (a->die_offset != b->die_offset)
		return a->die_offset < b->die_offset ? -1 : 1;
	return 0;
}

static void build_function_index(struct function_index *ix, Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;

	ix->built = 1;
	while (dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0)
		index_children(ix, &cudie, 0);
	if (ix->n)   /* qsort of a NULL array is undefined, even empty */
		qsort(ix->ranges, ix->n, sizeof(*ix->ranges), compare_ranges);
}

/* The subprogram range containing vaddr: the last one starting at or
 * below it. NULL if none. */
static const struct function_range *find_function(struct function_index *ix,
						  Dwarf *dw, uint64_t vaddr)
{
	size_t lo = 0, hi;

	if (!ix->built)
		build_function_index(ix, dw);
	hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->ranges[mid].low <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= ix->ranges[lo - 1].high)
		return NULL;
	return &ix->ranges[lo - 1];
}

/* ---- DWARF frames ---------------------------------------------------------- */

/* Function DIEs containing vaddr, outer to inner, and their unit. */
static int function_chain(struct local_file *f, uint64_t vaddr,
			  Dwarf_Die *chain, int max, Dwarf_Die *cudie)
{
	const struct function_range *range =
		find_function(&f->functions, f->dwarf, vaddr);
	Dwarf_Die subprogram;

	if (range != NULL &&
	    dwarf_offdie(f->dwarf, range->die_offset, &subprogram) != NULL &&
	    dwarf_diecu(&subprogram, cudie, NULL, NULL) != NULL)
		return chain_from_subprogram(&subprogram, vaddr, chain, max);
	if (dwarf_addrdie(f->dwarf, vaddr, cudie) == NULL)
		return -1;
	return chain_from_scopes(cudie, vaddr, chain, max);
}

/* Inline chain at vaddr, innermost first, ending with the real function.
 * Returns the number of frames (0 if the DWARF does not cover vaddr). */
int dwarf_frames(struct local_file *f, uint64_t vaddr,
		 struct sym_frame *out, int max)
{
	Dwarf_Die chain[MAX_CHAIN], cudie;
	struct source_position pos;
	int depth, n;

	depth = function_chain(f, vaddr, chain, MAX_CHAIN, &cudie);
	if (depth < 0)
		return 0;
	line_table_position(&cudie, vaddr, &pos);
	n = frames_from_chain(chain, depth, pos, vaddr, f->source, out, max);
	if (n == 0 && pos.file != NULL) {
		/* a line but no function DIE: the symbol table names it */
		memset(&out[0], 0, sizeof(out[0]));
		out[0].file = pos.file;
		out[0].line = pos.line;
		out[0].source = f->source;
		out[0].mode = SYM_MODE_LINE;
		n = 1;
	}
	return n;
}
