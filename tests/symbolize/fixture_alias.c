/* fixture_alias.c - one function under several names (global, global with
 * leading underscores, weak), to test which name the symbol table keeps. */

int real_fn(int x) { return x + 1; }
int __real_internal(int x) __attribute__((alias("real_fn")));
int weak_alias(int x) __attribute__((weak, alias("real_fn")));

int other_fn(int x) { return x * 2; }
