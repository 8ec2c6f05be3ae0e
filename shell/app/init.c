/* What the shell proper adds to the interpreter before any script runs: the numpy and
 * tensorflow modules, the views' magics, the cluster manager's magics and tfsh module,
 * matplotlib's backend, and Tab completion of device strings.
 *
 * The interpreter (shell/py/interp.c) calls sh_modules_init_extra once it is up; the py room
 * only declares it (value.h), so it stays below the rooms whose modules this adds. */
#include "shell/app/cmd.h"
#include "shell/app/repl.h"
#include "shell/app/views.h"
#include "shell/tf/tf.h"

/* matplotlib's backend (plot.py.inc): Agg, and plt.show() writes PNGs beside the script. */
static const char plot_src[] =
#include "shell/app/plot.py.inc"
;
#include "shell/app/plot.frozen.h"   /* plot_frozen[]: generated, CMakeLists.txt */

static sh_obj *plot_init(void) {
  sh_obj *m = sh_module_new("tfsh_plot");   /* in sys.modules while it runs: _Backend.export */
  if (m && (sh_dict_set_str(sh_modules_dict(), "tfsh_plot", m) < 0 ||
            sh_exec_frozen(plot_frozen, sizeof plot_frozen, plot_src, "<tfsh_plot>", sh_module_dict(m)) < 0))
    sh_clear(&m);
  return m;
}

void sh_modules_init_extra(void) {
  sh_register_module("tfsh_plot", plot_init);
  sh_obj *g = sh_dict_new();   /* a user's MPLBACKEND wins */
  if (g && sh_exec_string("import os\nos.environ.setdefault('MPLBACKEND', 'module://tfsh_plot')\n", "<tfsh init>", g) < 0)
    sh_err_clear();
  sh_decref(g);
  tf_register_modules();        /* numpy, tensorflow (shell/tf/module.c) */
  tf_views_init();              /* the run observer, %placement, %live, ... (views.c) */
  sh_cluster_init();            /* the tfsh module and cluster magics (cluster.c) */
  sh_inspect_init();            /* %inspect FILE (inspect.c) */
  sh_probe_init();              /* %probe SPEC (cmd_probe.c) */
  sh_completer_register(tf_device_complete);   /* tf.device("<Tab> */
}
