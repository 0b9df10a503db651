/*
** cliopt.c: the tool's one option parser. Each command describes what it
** takes in a table (qn_cli_spec); getopt_long does the parsing, so
** `--opt value`, `--opt=value`, unique abbreviations and `--` work the same
** in every command, and options may come before or after the positional
** arguments. An option the command does not take, a missing value and an
** extra or missing positional argument are usage errors (exit status 2)
** that name what was wrong.
*/
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define FIRST_LONG 256 /* getopt_long values of table entries: FIRST_LONG + index */

static void build_tables(const qn_cli_spec *spec, struct option *lo, char *shorts) {
    char *s = shorts;
    *s++ = ':'; /* a missing value returns ':' rather than '?' */
    *s++ = 'h';
    for (int i = 0; i < spec->noptions; i++) {
        const qn_cli_option *op = &spec->options[i];
        lo[i] = (struct option){op->name, op->has_value ? required_argument : no_argument, NULL,
                                FIRST_LONG + i};
        if (op->short_name) {
            *s++ = op->short_name;
            if (op->has_value) *s++ = ':';
        }
    }
    lo[spec->noptions] = (struct option){"help", no_argument, NULL, 'h'};
    lo[spec->noptions + 1] = (struct option){NULL, 0, NULL, 0};
    *s = '\0';
}

/* The table index of a getopt value (a long value or a short letter). */
static int option_index(const qn_cli_spec *spec, int c) {
    if (c >= FIRST_LONG) return c - FIRST_LONG;
    for (int i = 0; i < spec->noptions; i++)
        if (spec->options[i].short_name == c) return i;
    return -1;
}

static int usage_error(const qn_cli_spec *spec, const char *what, const char *name) {
    qn_cli_error("%s: %s %s (see quadnav %s --help)", spec->name, what, name, spec->name);
    return 2;
}

/* Reports the option getopt_long refused; argv is the permuted copy. */
static int bad_option(const qn_cli_spec *spec, char **argv, int c) {
    char name[80];
    int k = optopt ? option_index(spec, optopt) : -1;
    if (k >= 0 && c == ':') {
        snprintf(name, sizeof name, "--%s", spec->options[k].name);
        return usage_error(spec, "missing the value of", name);
    }
    if (k >= 0) {
        snprintf(name, sizeof name, "--%s", spec->options[k].name);
        return usage_error(spec, "takes no value for", name);
    }
    if (optopt) {
        snprintf(name, sizeof name, "-%c", optopt);
        return usage_error(spec, c == ':' ? "missing the value of" : "does not take option", name);
    }
    const char *arg = argv[optind - 1];
    size_t n = strcspn(arg, "=");
    snprintf(name, sizeof name, "%.*s", (int)(n < 70 ? n : 70), arg);
    return usage_error(spec, "does not take option", name);
}

static int record(const qn_cli_spec *spec, qn_cli_args *a, int k, const char *value) {
    if (a->nseen == QN_CLI_MAX_SEEN) {
        qn_cli_error("%s: more than %d options", spec->name, QN_CLI_MAX_SEEN);
        return 2;
    }
    a->value[k] = value ? value : "";
    a->seen[a->nseen++] = (qn_cli_seen){k, a->value[k]};
    return 0;
}

static int positionals(const qn_cli_spec *spec, int argc, char **argv, qn_cli_args *a) {
    for (int i = optind; i < argc; i++) {
        if (a->npos == spec->max_pos) {
            qn_cli_error("%s: unexpected extra argument '%s' (%s takes %s; see quadnav %s --help)",
                         spec->name, argv[i], spec->name,
                         spec->max_pos ? spec->pos_names : "no file", spec->name);
            return 2;
        }
        a->pos[a->npos++] = argv[i];
    }
    if (a->npos < spec->min_pos) {
        qn_cli_error("%s: missing %s (usage: quadnav %s --help)", spec->name, spec->pos_names,
                     spec->name);
        return 2;
    }
    return 0;
}

int qn_cli_parse(const qn_cli_spec *spec, int argc, char **argv, qn_cli_args *a) {
    memset(a, 0, sizeof *a);
    if (spec->noptions > QN_CLI_MAX_OPTIONS || spec->max_pos > QN_CLI_MAX_POSITIONAL) return 2;
    struct option lo[QN_CLI_MAX_OPTIONS + 2];
    char shorts[2 + 2 * QN_CLI_MAX_OPTIONS + 1];
    build_tables(spec, lo, shorts);
    /* getopt_long permutes its argv: work on a copy. */
    char **av = malloc(((size_t)argc + 1) * sizeof *av);
    if (!av) return qn_cli_error("out of memory"), 1;
    memcpy(av, argv, (size_t)argc * sizeof *av);
    av[argc] = NULL;
    opterr = 0;
    optind = 0; /* glibc: start afresh */
    int c, rc = 0;
    while (rc == 0 && (c = getopt_long(argc, av, shorts, lo, NULL)) != -1) {
        if (c == 'h') rc = -1;
        else if (c == '?' || c == ':') rc = bad_option(spec, av, c);
        else rc = record(spec, a, option_index(spec, c), optarg);
    }
    if (rc == 0) rc = positionals(spec, argc, av, a);
    free(av);
    if (rc == -1) fputs(spec->usage, stdout);
    return rc;
}
