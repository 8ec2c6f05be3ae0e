/* op_register_all: every op module's table, and BLIS set up before its first use. */
#include <pthread.h>

#include "ops/ops.h"
#include "ops/ops_int.h"

static void register_all(void) {
  op_cpu_blas_init();
  rt_set_cpu_summary(op_cpu_summary);
  rt_op_init_internal();
  op_const_register();
  op_math_register();
  op_nn_register();
  op_fused_bn_register();
  op_linalg_register();
  op_strings_register();
  op_lookup_register();
  op_image_register();
  op_scan_register();
  op_mirror_pad_register();
  op_space_register();
  op_depthwise_register();
  op_ctc_register();
  op_conv3d_register();
  op_pool_more_register();
  op_array_register();
  op_conv_register();
  op_random_register();
  op_state_register();
  op_resource_var_register();
  op_sync_register();
  op_queue_register();
  op_tensor_array_register();
  op_stack_register();
  op_reader_register();
  op_dataset_register();
  op_train_register();
  op_io_register();
  op_imported_register();
  op_gpu_register();
  op_control_register();
}

void op_register_all(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, register_all);
}
