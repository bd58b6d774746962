/* fixture_dwz.c - compiled twice (-DVARIANT=1 and 2) into two programs
 * whose common DWARF (a struct, an inline function) dwz moves into one
 * shared file; each program then names that file in .gnu_debugaltlink. */
struct dwz_point {
	int x, y, z;
};

static inline __attribute__((always_inline)) int dwz_inline(struct dwz_point *p)
{
	return p->x * p->y + p->z; /* MARK_dwz_inline */
}

__attribute__((noinline)) int dwz_user(struct dwz_point *p)
{
	return dwz_inline(p) + VARIANT; /* MARK_dwz_call */
}

int main(void)
{
	struct dwz_point p = { 1, 2, 3 };

	return dwz_user(&p);
}
