# tempfile, glob, shutil, six and os.path.islink, as legacy TF1 scripts use them.
import os
import glob
import shutil
import tempfile

import six
from six.moves import xrange

d = tempfile.mkdtemp(prefix="tfsh_", suffix=".d")
print(os.path.isdir(d), os.path.basename(d).startswith("tfsh_"), d.endswith(".d"))
print(os.path.dirname(d) == tempfile.gettempdir())
os.makedirs(os.path.join(d, "logs", "train"))
for name in ["b.txt", "a.txt", "c.log"]:
    with open(os.path.join(d, name), "w") as f:
        f.write(name * 2)
print(sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, "*.txt"))))
print([p[len(d) + 1:] for p in glob.glob(os.path.join(d, "*", "*"))])
print(glob.glob(os.path.join(d, "*.none")))
shutil.copy(os.path.join(d, "a.txt"), os.path.join(d, "logs"))
print(open(os.path.join(d, "logs", "a.txt")).read())
print(shutil.move(os.path.join(d, "c.log"), os.path.join(d, "d.log")) == os.path.join(d, "d.log"))
print(os.path.islink(d), os.path.exists(os.path.join(d, "c.log")))
shutil.rmtree(d)
print(os.path.exists(d))
shutil.rmtree(d, ignore_errors=True)
try:
    shutil.rmtree(d)
except OSError as e:
    print("OSError", e.__class__.__name__)
print(six.PY2, six.PY3, isinstance("x", six.string_types), six.text_type is str)
print(list(xrange(3)), sorted(six.iteritems({"b": 2, "a": 1})), sorted(six.itervalues({"a": 1})))
