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
#endif
