import threading
import queue
import time

# Thread with target/args/kwargs, join, is_alive, names
results = []
lock = threading.Lock()

def work(n, scale=1):
    total = 0
    for i in range(n):
        with lock:
            total += i * scale
    with lock:
        results.append(total)

ts = [threading.Thread(target=work, args=(1000,), kwargs={'scale': k}, name='w%d' % k) for k in range(1, 5)]
print([t.name for t in ts], [t.is_alive() for t in ts])
for t in ts:
    t.daemon = True
    t.start()
for t in ts:
    t.join()
print(sorted(results), [t.is_alive() for t in ts], ts[0].daemon)

# the GIL switches: two threads interleave a shared counter without losing updates
counter = [0]
def bump():
    for _ in range(20000):
        with lock:
            counter[0] += 1
a, b = threading.Thread(target=bump), threading.Thread(target=bump)
a.start(); b.start(); a.join(); b.join()
print(counter[0])

# RLock re-entry, Lock timeout, locked()
r = threading.RLock()
with r:
    with r:
        print('rlock re-entered')
l = threading.Lock()
l.acquire()
print(l.locked(), l.acquire(timeout=0.01), l.acquire(False))
l.release()
print(l.locked())
try:
    l.release()
except RuntimeError as e:
    print('RuntimeError:', e)

# Event: a thread waits until the main thread sets it
ev = threading.Event()
seen = []
def waiter():
    ok = ev.wait(5)
    seen.append(ok)
w = threading.Thread(target=waiter)
w.start()
ev.set()
w.join()
print(seen, ev.is_set(), threading.Event().wait(0.01))

# Condition: producer/consumer
cond = threading.Condition()
items = []
def consumer(out):
    with cond:
        while not items:
            cond.wait()
        out.append(items.pop())
got = []
c = threading.Thread(target=consumer, args=(got,))
c.start()
with cond:
    items.append('x')
    cond.notify()
c.join()
print(got)

# queue.Queue: put/get, timeouts, Empty/Full, task_done/join
q = queue.Queue(maxsize=2)
def producer():
    for i in range(10):
        q.put(i)
    q.put(None)
p = threading.Thread(target=producer)
p.start()
out = []
while True:
    v = q.get()
    q.task_done()
    if v is None:
        break
    out.append(v)
p.join()
print(out)
try:
    q.get(timeout=0.01)
except queue.Empty:
    print('Empty')
q.put(1); q.put(2)
try:
    q.put(3, block=False)
except queue.Full:
    print('Full', q.qsize(), q.full(), q.empty())
print(q.get_nowait(), q.get_nowait())

# an exception in a thread is reported (stderr) and does not stop the program
def boom():
    raise ValueError('bad')
threading.excepthook = lambda a: print('hook:', a.exc_type.__name__, a.exc_value, a.thread.name)
t = threading.Thread(target=boom, name='boomer')
t.start()
t.join()
print('after boom', t.is_alive())

# subclassing Thread, current_thread, main_thread
class Mine(threading.Thread):
    def run(self):
        self.who = threading.current_thread().name
m = Mine(name='mine')
m.start(); m.join()
print(m.who, threading.current_thread().name, threading.main_thread() is threading.current_thread())
try:
    m.start()
except RuntimeError as e:
    print('RuntimeError:', e)

# sleeping threads run concurrently (the GIL is let go in time.sleep)
t0 = time.time()
sl = [threading.Thread(target=time.sleep, args=(0.2,)) for _ in range(5)]
for t in sl: t.start()
for t in sl: t.join()
print('parallel sleep', time.time() - t0 < 0.8)
