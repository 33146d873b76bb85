/* grw_json: see grw_json.h. */
#include "grw_json.h"

#include <string.h>

/* Nesting deeper than this is refused rather than followed; Kubernetes
 * objects stay far below it. */
#define GRW_JSON_MAX_DEPTH 128

static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static const char *skip_literal(const char *p, const char *end, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(end - p) < n || memcmp(p, word, n) != 0)
        return NULL;
    return p + n;
}

static const char *skip_string(const char *p, const char *end) {
    if (p >= end || *p != '"')
        return NULL;
    for (p++; p < end; p++) {
        if (*p == '"')
            return p + 1;
        if (*p == '\\' && ++p >= end)
            return NULL;
        if ((unsigned char)*p < 0x20)
            return NULL;
    }
    return NULL;
}

static const char *skip_digits(const char *p, const char *end) {
    const char *start = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return p > start ? p : NULL;
}

static const char *skip_number(const char *p, const char *end) {
    if (p < end && *p == '-')
        p++;
    if (p < end && *p == '0')
        p++;
    else if (!(p = skip_digits(p, end)))
        return NULL;
    if (p < end && *p == '.' && !(p = skip_digits(p + 1, end)))
        return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (!(p = skip_digits(p, end)))
            return NULL;
    }
    return p;
}

/* The end of the value starting at `p`, or NULL if it is malformed. */
static const char *skip_value(const char *p, const char *end, int depth) {
    if (p >= end || depth > GRW_JSON_MAX_DEPTH)
        return NULL;
    switch (*p) {
    case '"':
        return skip_string(p, end);
    case 't':
        return skip_literal(p, end, "true");
    case 'f':
        return skip_literal(p, end, "false");
    case 'n':
        return skip_literal(p, end, "null");
    case '[':
    case '{': {
        char close = *p == '[' ? ']' : '}';
        bool object = *p == '{';
        p = skip_space(p + 1, end);
        if (p < end && *p == close)
            return p + 1;
        for (;;) {
            if (object) {
                if (!(p = skip_string(p, end)))
                    return NULL;
                p = skip_space(p, end);
                if (p >= end || *p != ':')
                    return NULL;
                p = skip_space(p + 1, end);
            }
            if (!(p = skip_value(p, end, depth + 1)))
                return NULL;
            p = skip_space(p, end);
            if (p < end && *p == ',') {
                p = skip_space(p + 1, end);
                continue;
            }
            return p < end && *p == close ? p + 1 : NULL;
        }
    }
    default:
        return skip_number(p, end);
    }
}

grw_json grw_json_of(const char *text, size_t len) {
    const char *end = text + len;
    const char *start = skip_space(text, end);
    const char *after = skip_value(start, end, 0);
    if (!after || skip_space(after, end) != end)
        return (grw_json){start, 0};
    return (grw_json){start, (size_t)(after - start)};
}

grw_json_kind grw_json_kind_of(grw_json value) {
    if (value.len == 0)
        return GRW_JSON_INVALID;
    switch (value.at[0]) {
    case 'n':
        return GRW_JSON_NULL;
    case 't':
    case 'f':
        return GRW_JSON_BOOL;
    case '"':
        return GRW_JSON_STRING;
    case '[':
        return GRW_JSON_ARRAY;
    case '{':
        return GRW_JSON_OBJECT;
    default:
        return GRW_JSON_NUMBER;
    }
}

grw_json_items grw_json_items_of(grw_json array) {
    if (grw_json_kind_of(array) != GRW_JSON_ARRAY)
        return (grw_json_items){NULL, NULL};
    return (grw_json_items){array.at + 1, array.at + array.len};
}

bool grw_json_next(grw_json_items *items, grw_json *item) {
    if (!items->at)
        return false;
    const char *p = skip_space(items->at, items->end);
    if (p < items->end && *p == ',')
        p = skip_space(p + 1, items->end);
    const char *after = p < items->end && *p != ']' ? skip_value(p, items->end, 1) : NULL;
    if (!after) {
        items->at = NULL;
        return false;
    }
    *item = (grw_json){p, (size_t)(after - p)};
    items->at = after;
    return true;
}

grw_json_items grw_json_members_of(grw_json object) {
    if (grw_json_kind_of(object) != GRW_JSON_OBJECT)
        return (grw_json_items){NULL, NULL};
    return (grw_json_items){object.at + 1, object.at + object.len};
}

bool grw_json_next_member(grw_json_items *members, grw_json *key, grw_json *value) {
    if (!members->at)
        return false;
    const char *p = skip_space(members->at, members->end), *end = members->end;
    if (p < end && *p == ',')
        p = skip_space(p + 1, end);
    const char *name = p, *after = NULL;
    if ((p = skip_string(p, end))) {
        *key = (grw_json){name, (size_t)(p - name)};
        p = skip_space(p, end);
        if (p < end && *p == ':') {
            p = skip_space(p + 1, end);
            after = skip_value(p, end, 1);
        }
    }
    if (!after) {
        members->at = NULL;
        return false;
    }
    *value = (grw_json){p, (size_t)(after - p)};
    members->at = after;
    return true;
}

bool grw_json_member(grw_json object, const char *key, grw_json *value) {
    grw_json_items members = grw_json_members_of(object);
    grw_json name;
    while (grw_json_next_member(&members, &name, value)) {
        if (grw_json_string_is(name, key))
            return true;
    }
    return false;
}

bool grw_json_int(grw_json value, int64_t *out) {
    if (grw_json_kind_of(value) != GRW_JSON_NUMBER)
        return false;
    const char *p = value.at, *end = value.at + value.len;
    bool negative = *p == '-';
    if (negative)
        p++;
    uint64_t magnitude = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false; /* a fraction or an exponent */
        uint64_t digit = (uint64_t)(*p - '0');
        if (magnitude > (UINT64_MAX - digit) / 10)
            return false;
        magnitude = magnitude * 10 + digit;
    }
    if (magnitude > (uint64_t)INT64_MAX + (negative ? 1 : 0))
        return false;
    *out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return true;
}

bool grw_json_bool(grw_json value, bool *out) {
    if (grw_json_kind_of(value) != GRW_JSON_BOOL)
        return false;
    *out = value.at[0] == 't';
    return true;
}

bool grw_json_string_is(grw_json value, const char *text) {
    size_t n = strlen(text);
    return grw_json_kind_of(value) == GRW_JSON_STRING && value.len == n + 2 &&
           memcmp(value.at + 1, text, n) == 0;
}
