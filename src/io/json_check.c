/*
** json_check.c: checks of JSON text that need no allocation: is it well
** formed (so a parser that failed on it ran out of memory), and where does
** a string hold an escaped NUL.
*/
#include "internal.h"

/* A cursor over text[0..len). */
typedef struct jc {
    const char *s;
    size_t n, i;
} jc;

static void ws(jc *c) {
    while (c->i < c->n &&
           (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
        c->i++;
}

static bool hex(char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static bool string(jc *c) {
    c->i++; /* the opening quote */
    while (c->i < c->n) {
        unsigned char ch = (unsigned char)c->s[c->i++];
        if (ch == '"') return true;
        if (ch < 0x20) return false;
        if (ch != '\\') continue;
        if (c->i >= c->n) return false;
        char e = c->s[c->i++];
        if (e == 'u') {
            for (int k = 0; k < 4; k++)
                if (c->i >= c->n || !hex(c->s[c->i++])) return false;
        } else if (!strchr("\"\\/bfnrt", e) || e == '\0') {
            return false;
        }
    }
    return false;
}

static bool digits(jc *c) {
    size_t from = c->i;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
    return c->i > from;
}

static bool number(jc *c) {
    if (c->s[c->i] == '-') c->i++;
    if (c->i < c->n && c->s[c->i] == '0') c->i++;
    else if (!digits(c)) return false;
    if (c->i < c->n && c->s[c->i] == '.') {
        c->i++;
        if (!digits(c)) return false;
    }
    if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        if (!digits(c)) return false;
    }
    return true;
}

static bool literal(jc *c, const char *w) {
    size_t k = strlen(w);
    if (c->n - c->i < k || memcmp(c->s + c->i, w, k) != 0) return false;
    c->i += k;
    return true;
}

/* A scalar at c->i; containers are handled by the caller's loop. */
static bool scalar(jc *c) {
    char ch = c->s[c->i];
    if (ch == '"') return string(c);
    if (ch == 't') return literal(c, "true");
    if (ch == 'f') return literal(c, "false");
    if (ch == 'n') return literal(c, "null");
    return number(c);
}

/* After a value inside containers: ',' or the closer of the innermost one.
** Returns false on bad text; pops closed containers from the stack. */
static bool after_value(jc *c, char *stack, uint32_t *depth, bool *want_key) {
    for (;;) {
        ws(c);
        if (*depth == 0) return true;
        if (c->i >= c->n) return false;
        char ch = c->s[c->i++], open = stack[*depth - 1];
        if (ch == ',') {
            *want_key = open == '{';
            return true;
        }
        if ((open == '{' && ch != '}') || (open == '[' && ch != ']')) return false;
        --*depth;
    }
}

bool qn__json_well_formed(const char *text, size_t len, uint32_t max_depth) {
    char stack[1024];
    if (max_depth > sizeof stack) max_depth = sizeof stack;
    jc c = {text, len, 0};
    uint32_t depth = 0;
    bool want_key = false;
    for (;;) {
        ws(&c);
        if (c.i >= c.n) return false;
        if (want_key) {
            if (c.s[c.i] != '"' || !string(&c)) return false;
            ws(&c);
            if (c.i >= c.n || c.s[c.i++] != ':') return false;
            ws(&c);
            if (c.i >= c.n) return false;
            want_key = false;
        }
        char ch = c.s[c.i];
        if (ch == '{' || ch == '[') {
            if (depth >= max_depth) return false;
            stack[depth++] = ch;
            c.i++;
            ws(&c);
            if (c.i < c.n && c.s[c.i] == (ch == '{' ? '}' : ']')) {
                depth--;
                c.i++;
            } else {
                want_key = ch == '{';
                continue;
            }
        } else if (!scalar(&c)) {
            return false;
        }
        if (!after_value(&c, stack, &depth, &want_key)) return false;
        if (depth == 0) return c.i == c.n;
    }
}

/* Inside a string at pos: an odd run of backslashes before it, and an odd
** count of unescaped quotes from the start. */
static bool escape_in_string(const char *text, size_t pos) {
    size_t k = 0;
    while (k < pos && text[pos - 1 - k] == '\\') k++;
    if (k % 2 == 0) return false; /* "\\u0000" is a backslash, then text */
    bool in = false, esc = false;
    for (size_t i = 0; i + 1 < pos; i++) {
        char ch = text[i];
        if (esc) esc = false;
        else if (in && ch == '\\') esc = true;
        else if (ch == '"') in = !in;
    }
    return in;
}

size_t qn__json_find_nul_escape(const char *text, size_t len) {
    for (size_t i = 0; i + 6 <= len;) {
        const char *p = memchr(text + i, '\\', len - i);
        if (!p) break;
        size_t at = (size_t)(p - text);
        if (at + 6 <= len && memcmp(p, "\\u0000", 6) == 0 && escape_in_string(text, at + 1))
            return at;
        i = at + 1;
    }
    return len;
}
