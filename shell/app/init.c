/* What the shell proper adds to the interpreter before any script runs: the numpy and
 * tensorflow modules, the views' magics, the cluster manager's magics and tfsh module, and
 * Tab completion of device strings.
 *
 * This strong sh_modules_init_extra replaces shell/lang/builtins.c's weak no-op; the
 * executable links the core whole-archive so that it does (see CMakeLists.txt). */
#include "shell/app/cmd.h"
#include "shell/app/repl.h"
#include "shell/app/views.h"
#include "shell/tf/tf.h"

void sh_modules_init_extra(void) {
  tf_register_modules();        /* numpy, tensorflow (shell/tf/module.c) */
  tf_views_init();              /* the run observer, %placement, %live, ... (views.c) */
  sh_cluster_init();            /* the tfsh module and cluster magics (cluster.c) */
  sh_inspect_init();            /* %inspect FILE (inspect.c) */
  sh_completer_register(tf_device_complete);   /* tf.device("<Tab> */
}
