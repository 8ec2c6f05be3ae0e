/* Standard modules written in the language itself (the subset is enough for them):
 * argparse, shutil, six and six.moves, threading, queue, collections, multiprocessing, datetime,
 * and the refusing stand-ins tarfile and urllib (no downloads). */
#define _GNU_SOURCE
#include "shell/lang/interp.h"

static const char argparse_src[] =
#include "shell/lang/argparse.py.inc"
;
static const char shutil_src[] =
#include "shell/lang/shutil.py.inc"
;
static const char six_src[] =
#include "shell/lang/six.py.inc"
;
static const char threading_src[] =
#include "shell/lang/threading.py.inc"
;
static const char queue_src[] =
#include "shell/lang/queue.py.inc"
;
static const char collections_src[] =
#include "shell/lang/collections.py.inc"
;
static const char datetime_src[] =
#include "shell/lang/datetime.py.inc"
;
static const char tarfile_src[] =
    "\"\"\"tarfile: not in tfsh; a script that extracts a downloaded archive finds it already\n"
    "extracted when its directory exists (unpack it with tar(1) first).\"\"\"\n"
    "class ReadError(Exception):\n    pass\n"
    "def open(name=None, mode='r', *args, **kwargs):\n"
    "    raise NotImplementedError('tarfile is not available in tfsh: unpack %s with tar(1) first' % (name,))\n"
    "def is_tarfile(name):\n    raise NotImplementedError('tarfile is not available in tfsh')\n";
static const char urllib_src[] =
    "\"\"\"urllib: tfsh scripts do not download (the data must be on disk); request.urlretrieve\n"
    "and urlopen say which URL to fetch by hand.\"\"\"\n"
    "class _Request(object):\n"
    "    def urlretrieve(self, url, filename=None, *args, **kwargs):\n"
    "        raise OSError('tfsh does not download: fetch %s to %s yourself' % (url, filename))\n"
    "    def urlopen(self, url, *args, **kwargs):\n"
    "        raise OSError('tfsh does not download: fetch %s yourself' % (url,))\n"
    "request = _Request()\n"
    "class _Parse(object):\n"
    "    def urljoin(self, base, url):\n        return url if '://' in url else base.rsplit('/', 1)[0] + '/' + url\n"
    "parse = _Parse()\n";
static const char multiprocessing_src[] =
    "\"\"\"multiprocessing: cpu_count, which TF1 input pipelines size their threads by. tfsh runs\n"
    "no processes of its own: Pool and Process refuse.\"\"\"\n"
    "import os as _os\n"
    "def cpu_count():\n    return _os.cpu_count()\n"
    "class Pool(object):\n    def __init__(self, *args, **kwargs):\n"
    "        raise NotImplementedError('multiprocessing.Pool is not available in tfsh (use threading)')\n"
    "class Process(object):\n    def __init__(self, *args, **kwargs):\n"
    "        raise NotImplementedError('multiprocessing.Process is not available in tfsh (use threading)')\n";
static const char six_moves_src[] =
    "\"\"\"six.moves: the Python 3 names.\"\"\"\n"
    "xrange = range\nrange = range\nzip = zip\nmap = map\nfilter = filter\ninput = input\n"
    "import urllib\nimport queue\ncPickle = None\n";

static sh_obj *module_from(const char *name, const char *src) {
  sh_obj *m = sh_module_new(name);
  char file[64];
  snprintf(file, sizeof file, "<%s>", name);
  if (sh_exec_string(src, file, ((sh_module_obj *)m)->dict) < 0) {
    sh_decref(m);
    return NULL;
  }
  return m;
}

sh_obj *sh_mod_argparse_init(void) { return module_from("argparse", argparse_src); }
sh_obj *sh_mod_shutil_init(void) { return module_from("shutil", shutil_src); }
sh_obj *sh_mod_threading_init(void) { return module_from("threading", threading_src); }
sh_obj *sh_mod_queue_init(void) { return module_from("queue", queue_src); }
sh_obj *sh_mod_collections_init(void) { return module_from("collections", collections_src); }
sh_obj *sh_mod_datetime_init(void) { return module_from("datetime", datetime_src); }
sh_obj *sh_mod_tarfile_init(void) { return module_from("tarfile", tarfile_src); }
sh_obj *sh_mod_urllib_init(void) { return module_from("urllib", urllib_src); }
sh_obj *sh_mod_multiprocessing_init(void) { return module_from("multiprocessing", multiprocessing_src); }
sh_obj *sh_mod_six_moves_init(void) { return module_from("six.moves", six_moves_src); }

/* six, with six.moves made and added to it (as os does os.path): importing the submodule
 * from the parent's own source would import the parent again. */
sh_obj *sh_mod_six_init(void) {
  sh_obj *m = module_from("six", six_src);
  if (!m) return NULL;
  sh_obj *moves = sh_dict_get_str(sh_modules_dict(), "six.moves");
  moves = moves ? sh_incref(moves) : sh_mod_six_moves_init();
  if (!moves) {
    sh_decref(m);
    return NULL;
  }
  sh_dict_set_str(sh_modules_dict(), "six.moves", moves);
  sh_module_add(m, "moves", moves);
  return m;
}
