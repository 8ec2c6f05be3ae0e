/* Formatting: format(value, spec) (str.format and f-strings) and printf-style `%`. */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"

typedef struct spec {
  char fill, align, sign, type, grouping;
  bool alt, zero;
  int width, prec;   /* -1: none */
} spec;

static int parse_spec(const char *s, spec *sp) {
  *sp = (spec){.fill = ' ', .width = -1, .prec = -1};
  if (s[0] && s[1] && strchr("<>=^", s[1])) { sp->fill = s[0]; sp->align = s[1]; s += 2; }
  else if (s[0] && strchr("<>=^", s[0])) { sp->align = s[0]; s++; }
  if (*s && strchr("+- ", *s)) sp->sign = *s++;
  if (*s == '#') { sp->alt = true; s++; }
  if (*s == '0') { sp->zero = true; s++; }
  if (isdigit((unsigned char)*s)) { sp->width = 0; while (isdigit((unsigned char)*s)) sp->width = sp->width * 10 + (*s++ - '0'); }
  if (*s == ',' || *s == '_') sp->grouping = *s++;
  if (*s == '.') {
    s++;
    if (!isdigit((unsigned char)*s)) { sh_raise(sh_ValueError, "Format specifier missing precision"); return -1; }
    sp->prec = 0;
    while (isdigit((unsigned char)*s)) sp->prec = sp->prec * 10 + (*s++ - '0');
  }
  if (*s) sp->type = *s++;
  if (*s) { sh_raise(sh_ValueError, "Invalid format specifier"); return -1; }
  if (sp->zero && !sp->align) { sp->fill = '0'; sp->align = '='; }
  return 0;
}

static void group_digits(sh_buf *out, const char *digits, size_t n, char sep) {
  for (size_t i = 0; i < n; i++) {
    sh_buf_putc(out, digits[i]);
    size_t left = n - i - 1;
    if (left && left % 3 == 0) sh_buf_putc(out, sep);
  }
}

/* Pad body (with its sign split off) to the spec's width. */
static sh_obj *pad(const spec *sp, const char *sign, const char *body, char default_align) {
  size_t len = strlen(sign) + strlen(body);
  char align = sp->align ? sp->align : default_align;
  sh_buf b = {0};
  int fill = sp->width > (int)len ? sp->width - (int)len : 0;
  /* count code points of body for width */
  for (const char *p = body; *p; p++) if (((unsigned char)*p & 0xC0) == 0x80 && fill < sp->width) fill++;
  int left = align == '>' ? fill : align == '^' ? fill / 2 : 0;
  int right = align == '<' ? fill : align == '^' ? fill - fill / 2 : 0;
  if (align == '=') {
    sh_buf_puts(&b, sign);
    for (int i = 0; i < fill; i++) sh_buf_putc(&b, sp->fill);
    sh_buf_puts(&b, body);
    return sh_buf_finish(&b);
  }
  for (int i = 0; i < left; i++) sh_buf_putc(&b, sp->fill);
  sh_buf_puts(&b, sign);
  sh_buf_puts(&b, body);
  for (int i = 0; i < right; i++) sh_buf_putc(&b, sp->fill);
  return sh_buf_finish(&b);
}

static sh_obj *format_int(int64_t v, const spec *sp) {
  char digits[80];
  uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
  const char *prefix = "";
  switch (sp->type) {
  case 'x': snprintf(digits, sizeof digits, "%llx", (unsigned long long)u); prefix = sp->alt ? "0x" : ""; break;
  case 'X': snprintf(digits, sizeof digits, "%llX", (unsigned long long)u); prefix = sp->alt ? "0X" : ""; break;
  case 'o': snprintf(digits, sizeof digits, "%llo", (unsigned long long)u); prefix = sp->alt ? "0o" : ""; break;
  case 'b': {
    int n = 0;
    char tmp[70];
    do { tmp[n++] = '0' + (u & 1); u >>= 1; } while (u);
    for (int i = 0; i < n; i++) digits[i] = tmp[n - 1 - i];
    digits[n] = 0;
    prefix = sp->alt ? "0b" : "";
    break;
  }
  case 'c': { char s[8] = {(char)v, 0}; spec t = *sp; return pad(&t, "", s, '<'); }
  default: snprintf(digits, sizeof digits, "%llu", (unsigned long long)u);
  }
  sh_buf body = {0};
  if (sp->grouping) group_digits(&body, digits, strlen(digits), sp->grouping);
  else sh_buf_puts(&body, digits);
  char sign[8];
  snprintf(sign, sizeof sign, "%s%s", v < 0 ? "-" : sp->sign == '+' ? "+" : sp->sign == ' ' ? " " : "", prefix);
  sh_obj *r = pad(sp, sign, body.data, '>');
  sh_buf_free(&body);
  return r;
}

static sh_obj *format_float(double v, const spec *sp) {
  char buf[512];
  char type = sp->type;
  int prec = sp->prec;
  bool neg = signbit(v) && !isnan(v);
  double a = fabs(v);
  if (type == 0 && prec < 0) {
    sh_format_double_repr(a, buf, sizeof buf);
  } else if (isinf(a) || isnan(a)) {
    snprintf(buf, sizeof buf, "%s", isnan(a) ? "nan" : "inf");
    if (isupper((unsigned char)type)) for (char *p = buf; *p; p++) *p = toupper(*p);
  } else if (type == '%') {
    snprintf(buf, sizeof buf, "%.*f%%", prec < 0 ? 6 : prec, a * 100);
  } else if (type == 0) {
    snprintf(buf, sizeof buf, "%#.*g", prec ? prec : 1, a);
    /* like 'g' but keeps one digit after the point: strip trailing zeros beyond that */
    char *e = strchr(buf, 'e'), exp[16] = "";
    if (e) { snprintf(exp, sizeof exp, "%s", e); *e = 0; }
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '0' && buf[n - 2] != '.') buf[--n] = 0;
    if (e && n > 1 && buf[n - 1] == '0' && buf[n - 2] == '.') buf[n -= 2] = 0;
    if (buf[n - 1] == '.') buf[--n] = 0;
    strcat(buf, exp);
    if (!strchr(buf, '.') && !strchr(buf, 'e') && !strchr(buf, 'n')) strcat(buf, ".0");
  } else {
    char f[16];
    if (type == 'n') type = 'g';
    snprintf(f, sizeof f, "%%%s.*%c", sp->alt ? "#" : "", type);
    snprintf(buf, sizeof buf, f, prec < 0 ? 6 : prec, a);
  }
  sh_buf body = {0};
  if (sp->grouping) {
    size_t int_len = strspn(buf, "0123456789");
    group_digits(&body, buf, int_len, sp->grouping);
    sh_buf_puts(&body, buf + int_len);
  } else sh_buf_puts(&body, buf);
  const char *sign = neg ? "-" : sp->sign == '+' ? "+" : sp->sign == ' ' ? " " : "";
  sh_obj *r = pad(sp, sign, body.data, '>');
  sh_buf_free(&body);
  return r;
}

sh_obj *sh_format_spec(sh_obj *v, const char *s) {
  if (!sh_is_int(v) && !sh_is_float(v) && !sh_is_str(v)) {   /* a type's own __format__ */
    sh_obj *f = sh_getattr_opt(v, "__format__");
    if (f) {
      sh_obj *spec = sh_str(s), *r = sh_call(f, 1, &spec, NULL);
      sh_decref(spec);
      sh_decref(f);
      if (r && !sh_is_str(r)) {
        sh_raise(sh_TypeError, "__format__ must return a str, not %s", sh_type_name(r));
        sh_clear(&r);
      }
      return r;
    }
    sh_err_clear();
  }
  if (!*s) return sh_to_str(v);
  spec sp;
  if (parse_spec(s, &sp) < 0) return NULL;
  if (!sh_is_int(v) && !sh_is_float(v) && !sh_is_str(v)) {   /* numpy scalars: their number */
    sh_obj *n = sh_as_number(v);
    if (n) {
      sh_obj *r = sh_format_spec(n, s);
      sh_decref(n);
      return r;
    }
  }
  if (sh_is_int(v) && !(v->type == &sh_bool_type && !sp.type)) {
    if (sp.type && strchr("eEfFgG%", sp.type)) return format_float((double)sh_int_value(v), &sp);
    if (sp.type && !strchr("bcdoxXn", sp.type))
      return sh_raise(sh_ValueError, "Unknown format code '%c' for object of type 'int'", sp.type);
    return format_int(sh_int_value(v), &sp);
  }
  if (sh_is_float(v)) {
    if (sp.type && !strchr("eEfFgGn%", sp.type))
      return sh_raise(sh_ValueError, "Unknown format code '%c' for object of type 'float'", sp.type);
    return format_float(sh_float_value(v), &sp);
  }
  if (sp.type && sp.type != 's')
    return sh_raise(sh_ValueError, "Unknown format code '%c' for object of type '%s'", sp.type, sh_type_name(v));
  sh_obj *str = sh_to_str(v);
  if (!str) return NULL;
  const char *text = sh_str_cstr(str);
  char *cut = NULL;
  if (sp.prec >= 0 && (int64_t)sp.prec < sh_str_len(str)) {   /* precision truncates */
    int64_t off = 0;
    for (int c = 0; c < sp.prec && off < sh_str_len(str); c++) {
      off++;
      while (off < sh_str_len(str) && ((unsigned char)text[off] & 0xC0) == 0x80) off++;
    }
    cut = xstrndup(text, off);
    text = cut;
  }
  sh_obj *r = pad(&sp, "", text, '<');
  free(cut);
  sh_decref(str);
  return r;
}

/* ---- printf-style: fmt % args ------------------------------------------------------------ */
sh_obj *sh_percent_format(sh_obj *fmt, sh_obj *args) {
  const char *s = sh_str_cstr(fmt);
  sh_buf out = {0};
  int64_t argi = 0, nargs;
  sh_obj **argv;
  bool is_tuple = args->type == &sh_tuple_type;
  bool is_map = sh_isinstance(args, &sh_dict_type);
  if (is_tuple) { argv = SH_TUPLE_ITEMS(args); nargs = SH_TUPLE_N(args); }
  else { argv = &args; nargs = 1; }
  bool used_map = false;
  while (*s) {
    if (*s != '%') { const char *p = strchr(s, '%'); size_t n = p ? (size_t)(p - s) : strlen(s); sh_buf_put(&out, s, n); s += n; continue; }
    s++;
    if (*s == '%') { sh_buf_putc(&out, '%'); s++; continue; }
    sh_obj *arg = NULL;
    if (*s == '(') {
      const char *e = strchr(s, ')');
      if (!e) { sh_buf_free(&out); return sh_raise(sh_ValueError, "incomplete format key"); }
      if (!is_map) { sh_buf_free(&out); return sh_raise(sh_TypeError, "format requires a mapping"); }
      sh_obj *k = sh_strn(s + 1, e - s - 1);
      arg = sh_dict_get(args, k);
      if (!arg) {
        sh_buf_free(&out);
        sh_obj *exc = sh_call((sh_obj *)sh_KeyError, 1, &k, NULL);
        sh_decref(k);
        sh_raise_obj(exc);
        sh_decref(exc);
        return NULL;
      }
      sh_decref(k);
      used_map = true;
      s = e + 1;
    }
    char flags[8] = "";
    int nf = 0;
    while (*s && strchr("-+ #0", *s) && nf < 6) flags[nf++] = *s++;
    flags[nf] = 0;
    int width = -1, prec = -1;
    if (*s == '*') {
      s++;
      if (argi >= nargs) goto notenough;
      int64_t w;
      if (sh_as_int(argv[argi++], &w) < 0) { sh_buf_free(&out); return NULL; }
      width = (int)w;
    } else if (isdigit((unsigned char)*s)) { width = 0; while (isdigit((unsigned char)*s)) width = width * 10 + (*s++ - '0'); }
    if (*s == '.') {
      s++;
      prec = 0;
      if (*s == '*') {
        s++;
        if (argi >= nargs) goto notenough;
        int64_t p;
        if (sh_as_int(argv[argi++], &p) < 0) { sh_buf_free(&out); return NULL; }
        prec = (int)p;
      } else while (isdigit((unsigned char)*s)) prec = prec * 10 + (*s++ - '0');
    }
    while (*s == 'l' || *s == 'h' || *s == 'L') s++;
    char type = *s;
    if (!type) { sh_buf_free(&out); return sh_raise(sh_ValueError, "incomplete format"); }
    s++;
    if (!arg) {
      if (argi >= nargs) goto notenough;
      arg = argv[argi++];
    }
    char cfmt[32], buf[512];
    char wbuf[16] = "", pbuf[16] = "";
    /* numpy scalars (anything with __float__) format as the number they hold */
    sh_obj *num_hold = NULL;
    if (strchr("diuxXoeEfFgG", type) && !sh_is_int(arg) && !sh_is_float(arg) && (num_hold = sh_as_number(arg)))
      arg = num_hold;
    if (width >= 0) snprintf(wbuf, sizeof wbuf, "%d", width);
    if (prec >= 0) snprintf(pbuf, sizeof pbuf, ".%d", prec);
    switch (type) {
    case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': {
      int64_t iv;
      if (sh_is_float(arg) && strchr("diu", type)) iv = (int64_t)sh_float_value(arg);
      else if (sh_is_int(arg)) iv = sh_int_value(arg);
      else {
        sh_buf_free(&out);
        if (strchr("diu", type))
          return sh_raise(sh_TypeError, "%%%c format: a real number is required, not %s", type, sh_type_name(arg));
        return sh_raise(sh_TypeError, "%%%c format: an integer is required, not %s", type, sh_type_name(arg));
      }
      char t = type == 'i' || type == 'u' ? 'd' : type;
      snprintf(cfmt, sizeof cfmt, "%%%s%s%sll%c", flags, wbuf, pbuf, t);
      snprintf(buf, sizeof buf, cfmt, (long long)iv);
      if (type == 'o' && strchr(flags, '#')) {   /* Python writes 0o17 */
        char *z = strchr(buf, '0');
        if (z) { memmove(z + 2, z + 1, strlen(z + 1) + 1); z[1] = 'o'; }
      }
      sh_buf_puts(&out, buf);
      break;
    }
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': {
      double dv;
      if (!sh_is_int(arg) && !sh_is_float(arg)) {
        sh_buf_free(&out);
        return sh_raise(sh_TypeError, "must be real number, not %s", sh_type_name(arg));
      }
      sh_as_double(arg, &dv);
      snprintf(cfmt, sizeof cfmt, "%%%s%s%s%c", flags, wbuf, pbuf, type);
      snprintf(buf, sizeof buf, cfmt, dv);
      sh_buf_puts(&out, buf);
      break;
    }
    case 'c': {
      char ch[8] = {0};
      if (sh_is_int(arg)) ch[0] = (char)sh_int_value(arg);
      else if (sh_is_str(arg)) snprintf(ch, sizeof ch, "%s", sh_str_cstr(arg));
      snprintf(cfmt, sizeof cfmt, "%%%s%ss", flags, wbuf);
      snprintf(buf, sizeof buf, cfmt, ch);
      sh_buf_puts(&out, buf);
      break;
    }
    case 's': case 'r': case 'a': {
      sh_obj *str = type == 's' ? sh_to_str(arg) : sh_repr(arg);
      if (!str) { sh_buf_free(&out); return NULL; }
      const char *t = sh_str_cstr(str);
      int64_t n = sh_str_len(str);
      if (prec >= 0 && prec < n) n = prec;
      int64_t fill = width > n ? width - n : 0;
      bool left = strchr(flags, '-') != NULL;
      if (!left) for (int64_t i = 0; i < fill; i++) sh_buf_putc(&out, ' ');
      sh_buf_put(&out, t, n);
      if (left) for (int64_t i = 0; i < fill; i++) sh_buf_putc(&out, ' ');
      sh_decref(str);
      break;
    }
    default:
      sh_buf_free(&out);
      return sh_raise(sh_ValueError, "unsupported format character '%c' (0x%x) at index %d", type,
                      (unsigned char)type, (int)(s - sh_str_cstr(fmt) - 1));
    }
    sh_decref(num_hold);
  }
  if (!used_map && !is_map && argi < nargs) {
    sh_buf_free(&out);
    return sh_raise(sh_TypeError, "not all arguments converted during string formatting");
  }
  return sh_buf_finish(&out);
notenough:
  sh_buf_free(&out);
  return sh_raise(sh_TypeError, "not enough arguments for format string");
}
