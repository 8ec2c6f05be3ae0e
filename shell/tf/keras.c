/* tf.keras in graph mode: the namespaces (tf.keras, tf.keras.layers, ...), then
 * keras.py.inc run in a module of its own whose globals hold tf and those namespaces,
 * (then keras_rnn.py.inc, the recurrent layers, in the same module),
 * so its classes keep their names (Dense, not _KerasDense) without landing in tf's dict.
 * Also tf.get_default_session, which Keras's get_session needs. */
#include <stdio.h>

#include "shell/tf/tf.h"

static const char keras_src[] =
#include "shell/tf/keras.py.inc"
;
#include "shell/tf/keras.frozen.h"   /* keras_frozen[]: generated, CMakeLists.txt */

static const char keras_rnn_src[] =
#include "shell/tf/keras_rnn.py.inc"
;
#include "shell/tf/keras_rnn.frozen.h"   /* keras_rnn_frozen[]: generated, CMakeLists.txt */

static sh_obj *keras_impl;   /* the module keras.py.inc ran in: kept for its functions */

static sh_obj *f_get_default_session(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("get_default_session", argc, argv, kw, "") < 0) return NULL;
  sh_obj *s = tf_default_session();
  return s ? sh_incref(s) : sh_none();
}

int tf_keras_add(sh_obj *tf) {
  static const char *const subs[] = {"layers", "models", "backend", "initializers", "activations",
                                     "regularizers", "losses"};
  sh_module_add_func(tf, "get_default_session", f_get_default_session, "get_default_session()",
                     "The session of the innermost `with sess.as_default()` (or `with tf.Session()`), or None.");
  sh_obj *keras = sh_module_new("tensorflow.keras");
  keras_impl = sh_module_new("tensorflow.python.keras");
  sh_obj *dict = sh_module_dict(keras_impl);
  sh_dict_set_str(dict, "tf", tf);
  sh_dict_set_str(dict, "keras", keras);
  for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
    char full[64];
    snprintf(full, sizeof full, "tensorflow.keras.%s", subs[i]);
    sh_obj *m = sh_module_new(full);
    sh_dict_set_str(dict, subs[i], m);
    sh_module_add_sub(keras, subs[i], m);
  }
  sh_module_add_sub(tf, "keras", keras);
  if (sh_exec_frozen(keras_frozen, sizeof keras_frozen, keras_src, "<tensorflow.keras>", dict) < 0) return -1;
  return sh_exec_frozen(keras_rnn_frozen, sizeof keras_rnn_frozen, keras_rnn_src, "<tensorflow.keras.rnn>", dict);
}
