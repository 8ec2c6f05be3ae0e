# TF's own client replayed against a tfsh server's TF MasterService (tfsh server --grpc), for
# a test that runs without TF: the requests a TF 2.21 client sent running tf_peer_tiny.py
# (tests/data/tf_grpc/client_exchange.txt, recorded by scripts/tf_oracle/record_grpc.py)
# are sent again in order; each answer must be the recorded one, byte for byte (its
# numbers are exact small integers), or the recorded error code and text. A ListDevices
# answer is compared with each device's incarnation (a random number a task draws when it
# starts) left out.
# Run by tfsh itself (Debian's python3-grpcio):  tfsh replay_tf_client.py TARGET EXCHANGE
import sys

import grpc



def varint(b, i):
    n = shift = 0
    while True:
        n |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return n, i


def without_incarnations(reply):
    """ListDevicesResponse (local_device = 1, remote_device = 2: DeviceAttributes) with each
    DeviceAttributes' incarnation (6, fixed64) zeroed."""
    out, i = bytearray(reply), 0
    while i < len(reply):
        key, i = varint(reply, i)
        size, i = varint(reply, i)
        j, end = i, i + size
        while j < end:
            k, j = varint(reply, j)
            if k & 7 == 1:          # fixed64: the incarnation
                out[j:j + 8] = bytes(8)
                j += 8
            elif k & 7 == 2:
                n, j = varint(reply, j)
                j += n
            else:
                _, j = varint(reply, j)
        i = end
    return bytes(out)


target, path = sys.argv[1], sys.argv[2]
channel = grpc.insecure_channel(target)
n = 0
for i, line in enumerate(open(path)):
    method, req, code, rest = (line.rstrip("\n").split(" ", 3) + [""])[:4]
    call = channel.unary_unary(method)
    try:
        reply = call(bytes.fromhex(req), timeout=30)
        got = (0, reply.hex())
        if method.endswith("/ListDevices"):
            got, rest = (0, without_incarnations(reply).hex()), without_incarnations(bytes.fromhex(rest)).hex()
    except grpc.RpcError as e:
        got = (e.code().value[0], e.details().replace("\n", "\\n"))
    want = (int(code), rest)
    if got != want:
        print("call %d (%s): got %r, TF's client got %r" % (i, method, got, want))
        sys.exit(1)
    n += 1
print("ok: %d calls answered as recorded" % n)
