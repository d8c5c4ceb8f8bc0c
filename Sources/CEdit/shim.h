#ifndef SECTIOND_CEDIT_SHIM_H
#define SECTIOND_CEDIT_SHIM_H
/* libedit's readline interface (Debian's libedit-dev), for `sectionctl shell`: line editing,
   history and completion without variadic calls. */
#include <stdio.h>
#include <editline/readline.h>

/* Swift 6 cannot assign C globals (shared mutable state): set libedit's completion here. */
static inline void sectiond_edit_completion(rl_compentry_func_t *complete) {
  rl_completion_entry_function = complete;
}
/* The line being edited up to the cursor, for completion that depends on the words before
   the one completed (libedit's globals, read here for the same reason). */
static inline const char *sectiond_edit_line(void) { return rl_line_buffer; }
static inline int sectiond_edit_point(void) { return rl_point; }
#endif
