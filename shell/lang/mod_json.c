/* The json module: dumps/dump written here (to match Python's output exactly), loads/load
 * parsed by jansson. */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "shell/lang/interp.h"


static sh_type *JSONDecodeError;

typedef struct dump_opts { int indent; bool sort_keys; const char *item_sep, *key_sep; } dump_opts;

static void dump_str(sh_buf *b, const char *s, size_t n) {
  sh_buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = s[i];
    switch (c) {
    case '"': sh_buf_puts(b, "\\\""); break;
    case '\\': sh_buf_puts(b, "\\\\"); break;
    case '\n': sh_buf_puts(b, "\\n"); break;
    case '\r': sh_buf_puts(b, "\\r"); break;
    case '\t': sh_buf_puts(b, "\\t"); break;
    case '\b': sh_buf_puts(b, "\\b"); break;
    case '\f': sh_buf_puts(b, "\\f"); break;
    default:
      if (c < 0x20) sh_buf_printf(b, "\\u%04x", c);
      else if (c >= 0x80) {   /* ensure_ascii: escape the code point */
        unsigned cp; int k;
        if (c >= 0xF0) { cp = c & 7; k = 3; } else if (c >= 0xE0) { cp = c & 15; k = 2; } else { cp = c & 31; k = 1; }
        for (int j = 0; j < k && i + 1 < n; j++) cp = cp << 6 | (s[++i] & 63);
        if (cp >= 0x10000) { cp -= 0x10000; sh_buf_printf(b, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)); }
        else sh_buf_printf(b, "\\u%04x", cp);
      } else sh_buf_putc(b, c);
    }
  }
  sh_buf_putc(b, '"');
}

static void newline(sh_buf *b, const dump_opts *o, int level) {
  if (o->indent < 0) return;
  sh_buf_putc(b, '\n');
  for (int i = 0; i < o->indent * level; i++) sh_buf_putc(b, ' ');
}

static int dump(sh_buf *b, sh_obj *v, const dump_opts *o, int level) {
  if (sh_interrupted && sh_check_interrupt() < 0) return -1;
  if (level > 10000) { sh_raise(sh_RecursionError, "maximum recursion depth exceeded while encoding a JSON object"); return -1; }
  if (v == SH_NONE) { sh_buf_puts(b, "null"); return 0; }
  if (v == sh_true) { sh_buf_puts(b, "true"); return 0; }
  if (v == sh_false) { sh_buf_puts(b, "false"); return 0; }
  if (sh_is_int(v)) { sh_buf_printf(b, "%lld", (long long)sh_int_value(v)); return 0; }
  if (sh_is_float(v)) {
    double d = sh_float_value(v);
    if (isnan(d)) sh_buf_puts(b, "NaN");
    else if (isinf(d)) sh_buf_puts(b, d > 0 ? "Infinity" : "-Infinity");
    else { char s[64]; sh_format_double_repr(d, s, sizeof s); sh_buf_puts(b, s); }
    return 0;
  }
  if (sh_is_str(v)) { dump_str(b, sh_str_cstr(v), sh_str_len(v)); return 0; }
  if (sh_isinstance(v, &sh_list_type) || v->type == &sh_tuple_type) {
    sh_obj **items = v->type == &sh_tuple_type ? SH_TUPLE_ITEMS(v) : SH_LIST_ITEMS(v);
    int64_t n = v->type == &sh_tuple_type ? SH_TUPLE_N(v) : SH_LIST_N(v);
    if (!n) { sh_buf_puts(b, "[]"); return 0; }
    if (sh_repr_enter(v)) { sh_repr_leave(v); sh_raise(sh_ValueError, "Circular reference detected"); return -1; }
    sh_buf_putc(b, '[');
    for (int64_t i = 0; i < n; i++) {
      if (i) sh_buf_puts(b, o->item_sep);
      newline(b, o, level + 1);
      if (dump(b, items[i], o, level + 1) < 0) { sh_repr_leave(v); return -1; }
    }
    newline(b, o, level);
    sh_buf_putc(b, ']');
    sh_repr_leave(v);
    return 0;
  }
  if (sh_isinstance(v, &sh_dict_type)) {
    if (!sh_dict_len(v)) { sh_buf_puts(b, "{}"); return 0; }
    sh_obj *keys = sh_sequence_to_list(v);
    if (!keys) return -1;
    if (o->sort_keys) {
      sh_obj *s = sh_getattr(keys, "sort"), *r = s ? sh_call(s, 0, NULL, NULL) : NULL;
      sh_decref(s);
      if (!r) { sh_decref(keys); return -1; }
      sh_decref(r);
    }
    sh_buf_putc(b, '{');
    for (int64_t i = 0; i < SH_LIST_N(keys); i++) {
      sh_obj *k = SH_LIST_ITEMS(keys)[i];
      if (i) sh_buf_puts(b, o->item_sep);
      newline(b, o, level + 1);
      if (sh_is_str(k)) dump_str(b, sh_str_cstr(k), sh_str_len(k));
      else if (k == SH_NONE || sh_is_int(k) || sh_is_float(k)) {
        sh_buf_putc(b, '"');
        if (dump(b, k, o, level) < 0) { sh_decref(keys); return -1; }
        sh_buf_putc(b, '"');
      } else {
        sh_raise(sh_TypeError, "keys must be str, int, float, bool or None, not %s", sh_type_name(k));
        sh_decref(keys);
        return -1;
      }
      sh_buf_puts(b, o->key_sep);
      if (dump(b, sh_dict_get(v, k), o, level + 1) < 0) { sh_decref(keys); return -1; }
    }
    sh_decref(keys);
    newline(b, o, level);
    sh_buf_putc(b, '}');
    return 0;
  }
  sh_raise(sh_TypeError, "Object of type %s is not JSON serializable", sh_type_name(v));
  return -1;
}

static sh_obj *dumps_impl(sh_obj *obj, sh_obj *kw) {
  dump_opts o = {.indent = -1, .item_sep = ", ", .key_sep = ": "};
  sh_obj *v;
  if (kw && (v = sh_dict_get_str(kw, "indent")) && v != SH_NONE) {
    int64_t n;
    if (sh_as_int(v, &n) < 0) return NULL;
    o.indent = (int)n;
    o.item_sep = ",";
  }
  if (kw && (v = sh_dict_get_str(kw, "sort_keys"))) o.sort_keys = sh_truth(v) > 0;
  if (kw && (v = sh_dict_get_str(kw, "separators")) && v != SH_NONE) {
    if (v->type != &sh_tuple_type || SH_TUPLE_N(v) != 2 || !sh_is_str(SH_TUPLE_ITEMS(v)[0]) || !sh_is_str(SH_TUPLE_ITEMS(v)[1]))
      return sh_raise(sh_TypeError, "separators must be a (item_separator, key_separator) tuple");
    o.item_sep = sh_str_cstr(SH_TUPLE_ITEMS(v)[0]);
    o.key_sep = sh_str_cstr(SH_TUPLE_ITEMS(v)[1]);
  }
  sh_buf b = {0};
  if (dump(&b, obj, &o, 0) < 0) { sh_buf_free(&b); return NULL; }
  return sh_buf_finish(&b);
}

static sh_obj *j_dumps(ARGS) {
  if (argc != 1) return sh_raise(sh_TypeError, "dumps() takes exactly one positional argument");
  return dumps_impl(argv[0], kw);
}
static sh_obj *j_dump(ARGS) {
  if (argc != 2) return sh_raise(sh_TypeError, "dump() takes 2 positional arguments (obj, fp)");
  sh_obj *s = dumps_impl(argv[0], kw);
  if (!s) return NULL;
  sh_obj *r = sh_call_method(argv[1], "write", 1, &s, NULL);
  sh_decref(s);
  if (!r) return NULL;
  sh_decref(r);
  return sh_none();
}

static sh_obj *from_json(json_t *j) {
  switch (json_typeof(j)) {
  case JSON_NULL: return sh_none();
  case JSON_TRUE: return sh_bool(true);
  case JSON_FALSE: return sh_bool(false);
  case JSON_INTEGER: return sh_int(json_integer_value(j));
  case JSON_REAL: return sh_float(json_real_value(j));
  case JSON_STRING: return sh_strn(json_string_value(j), json_string_length(j));
  case JSON_ARRAY: {
    sh_obj *l = sh_list_new(0);
    size_t i;
    json_t *x;
    json_array_foreach(j, i, x) sh_list_append_steal(l, from_json(x));
    return l;
  }
  case JSON_OBJECT: {
    sh_obj *d = sh_dict_new();
    const char *k;
    json_t *x;
    json_object_foreach(j, k, x) {
      sh_obj *v = from_json(x);
      sh_dict_set_str(d, k, v);
      sh_decref(v);
    }
    return d;
  }
  }
  return sh_none();
}

static sh_obj *loads_impl(const char *s) {
  json_error_t err;
  json_t *j = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
  if (!j) return sh_raise(JSONDecodeError, "%s: line %d column %d (char %d)", err.text, err.line, err.column, err.position);
  sh_obj *r = from_json(j);
  json_decref(j);
  return r;
}
static sh_obj *j_loads(ARGS) {
  if (argc != 1) return sh_raise(sh_TypeError, "loads() takes exactly one positional argument");
  const char *s = sh_as_cstr(argv[0]);
  return s ? loads_impl(s) : NULL;
}
static sh_obj *j_load(ARGS) {
  if (argc != 1) return sh_raise(sh_TypeError, "load() takes exactly one positional argument");
  sh_obj *s = sh_call_method(argv[0], "read", 0, NULL, NULL);
  if (!s) return NULL;
  sh_obj *r = sh_is_str(s) ? loads_impl(sh_str_cstr(s)) : sh_raise(sh_TypeError, "read() did not return a str");
  sh_decref(s);
  return r;
}

static const sh_method json_funcs[] = {
  {"dumps", j_dumps, "dumps(obj, *, indent=None, sort_keys=False, separators=None)", "Serialize obj to a JSON string."},
  {"dump", j_dump, "dump(obj, fp, *, indent=None, sort_keys=False)", "Serialize obj to a file."},
  {"loads", j_loads, "loads(s)", "Parse a JSON string."},
  {"load", j_load, "load(fp)", "Parse a JSON file."},
  {NULL}};

sh_obj *sh_mod_json_init(void) {
  sh_obj *m = sh_module_new("json");
  sh_module_add_funcs(m, json_funcs);
  if (!JSONDecodeError) JSONDecodeError = sh_exc_class_new("JSONDecodeError", sh_ValueError);
  sh_module_add(m, "JSONDecodeError", SH_INCREF(JSONDecodeError));
  sh_module_add(m, "__doc__", sh_str("JSON encoder and decoder."));
  return m;
}
