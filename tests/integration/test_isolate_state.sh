#!/usr/bin/env bash
# ConfigProto(isolate_session_state=True), TF's GrpcServerTest.testIsolateSessionState on the
# public API: a script with its own tf.train.Server.create_local_server() and two
# sharing and two isolated sessions; each isolated session has its own variables (ref and
# resource) on the task, FailedPreconditionError in TF's words until it initializes them.
. "$(dirname "$0")/lib.sh"
out=$(timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/isolate_state.py" 2>&1)
U="Attempting to use uninitialized value v"
R="Could not find variable r/rv. This could mean that the variable has been deleted. In TF1, it can also mean the variable is uninitialized. Debug info: container=localhost, status error message=Container localhost does not exist. (Could not find resource: localhost/r/rv)"
check "sharing and isolated sessions" "-- nothing initialized
share_0 FailedPreconditionError $U
share_1 FailedPreconditionError $U
iso_0 FailedPreconditionError $U
iso_1 FailedPreconditionError $U
-- share_0 initializes v = 86
share_0 86
share_1 86
iso_0 FailedPreconditionError $U
iso_1 FailedPreconditionError $U
-- share_1 initializes v = [86, 99]
share_0 [86, 99]
share_1 [86, 99]
iso_0 FailedPreconditionError $U
iso_1 FailedPreconditionError $U
-- iso_0 initializes v = 37
share_0 [86, 99]
share_1 [86, 99]
iso_0 37
iso_1 FailedPreconditionError $U
-- iso_1 initializes v = [19, 86]
share_0 [86, 99]
share_1 [86, 99]
iso_0 37
iso_1 [19, 86]
-- resource variable: iso_1 initializes it
share_0 FailedPreconditionError $R
share_1 FailedPreconditionError $R
iso_0 FailedPreconditionError $R
iso_1 [1, 2, 3]
-- iso_1 closes; a new isolated session starts with none
share_0 [86, 99]
iso_0 37
iso_2 FailedPreconditionError $U
iso_2 FailedPreconditionError $R
done" "$out"
finish
