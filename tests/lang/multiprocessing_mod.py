# multiprocessing.cpu_count, which TF1 input pipelines (the CIFAR-10 tutorial) size their
# threads by; the output is python3's.
from multiprocessing import cpu_count
import multiprocessing
import os
print(cpu_count() >= 1, cpu_count() == multiprocessing.cpu_count() == os.cpu_count())
