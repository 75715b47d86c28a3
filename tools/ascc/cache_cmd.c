/*
 * `ascc --cache-info` and `ascc --cache-clear`: the kernel cache as
 * configured by the environment (ASC_CACHE_DIR, XDG_CACHE_HOME, HOME,
 * ASC_CACHE_MAX_BYTES); see docs/cache.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ascc.h"
#include "jit/cache.h"
#include "jit/cc.h"
#include "base/base.h"

static void print_size(const char *label, uint64_t bytes) {
  printf("%-12s %" PRIu64 " bytes (%.1f MiB)\n", label, bytes,
         (double)bytes / (1024.0 * 1024.0));
}

/* What kernels would be compiled with now: the first line of the
 * compiler's --version and the flags (both part of every cache key). */
static void print_compiler(void) {
  const asc__cc *cc;
  const char *id, *ver;
  asc__buf flags;
  size_t i;

  if (asc__cc_get(&cc) != ascSuccess) {
    printf("%-12s unusable: %s\n", "compiler", ascGetLastErrorMessage());
    return;
  }
  /* identity: "ASC_CC value\npath\n--version output" */
  id = asc__cc_identity(cc);
  ver = strchr(id, '\n');
  ver = ver ? strchr(ver + 1, '\n') : NULL;
  ver = ver ? ver + 1 : "";
  printf("%-12s %s (%.*s)\n", "compiler", asc__cc_path(cc),
         (int)strcspn(ver, "\n"), ver);
  asc__buf_init(&flags);
  asc__cc_flags(cc, NULL, &flags);
  for (i = 0; i < flags.len; i++)
    if (flags.data[i] == '\n')
      flags.data[i] = i + 1 == flags.len ? '\0' : ' ';
  printf("%-12s %s\n", "flags", asc__buf_str(&flags));
  asc__buf_free(&flags);
}

static int open_cache(asc__cache **c) {
  if (asc__cache_open(c, NULL) != ascSuccess) {
    fprintf(stderr, "ascc: %s\n", ascGetLastErrorMessage());
    return 1;
  }
  return 0;
}

int ascc_cache_info(void) {
  asc__cache *c;
  asc__cache_stats st;

  if (open_cache(&c) != 0)
    return 1;
  if (asc__cache_get_stats(c, &st) != ascSuccess) {
    fprintf(stderr, "ascc: %s\n", ascGetLastErrorMessage());
    asc__cache_close(c);
    return 1;
  }
  printf("%-12s %s\n", "directory",
         st.configured ? st.configured : "(none: no home directory)");
  if (st.fallback)
    printf("%-12s unusable; this process would compile in %s\n", "status",
           st.dir ? st.dir : "(nowhere)");
  else
    printf("%-12s ok\n", "status");
  printf("%-12s %" PRIu64 "\n", "entries", st.fallback ? 0 : st.entries);
  print_size("size", st.fallback ? 0 : st.bytes);
  print_size("max size", st.max_bytes);
  if (!st.fallback && st.temporaries > 0)
    printf("%-12s %" PRIu64 " (builds in progress or kept after a failed "
           "compile)\n",
           "temporaries", st.temporaries);
  print_compiler();
  asc__cache_close(c);
  return 0;
}

int ascc_cache_clear(void) {
  asc__cache *c;
  asc__cache_stats st;
  uint64_t removed = 0;
  int rc = 0;

  if (open_cache(&c) != 0)
    return 1;
  asc__cache_get_stats(c, &st);
  if (st.fallback) {
    fprintf(stderr, "ascc: not clearing %s: the directory is unusable\n",
            st.configured ? st.configured : "(none)");
    rc = 1;
  } else if (asc__cache_clear(c, &removed) != ascSuccess) {
    fprintf(stderr, "ascc: %s\n", ascGetLastErrorMessage());
    rc = 1;
  } else {
    printf("removed %" PRIu64 " entr%s from %s\n", removed,
           removed == 1 ? "y" : "ies", st.dir);
  }
  asc__cache_close(c);
  return rc;
}
