# Sourced by the soak and benchmark scripts: free_ports N prints N free TCP ports on
# 127.0.0.1 (bound and released through the kernel's port-0 allocator). The tests use
# their own reserving version (tests/integration/lib.sh), since they run side by side.
free_ports() {
  python3 -c 'import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
[x.bind(("127.0.0.1", 0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}
