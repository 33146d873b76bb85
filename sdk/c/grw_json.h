/*
 * grw_json: reading the JSON text GRW hands a C plugin (an object's fields
 * from `object.get`, `object.json()` or the configuration) without copying
 * or allocating.
 *
 * A `grw_json` is one JSON value: a pointer into the text and its length.
 * Nothing is parsed until asked for, and a malformed value reads as
 * nothing (functions return false) rather than as something wrong.
 *
 *     grw_json statuses = grw_json_of(text, len), status;
 *     grw_json_items items = grw_json_items_of(statuses);
 *     while (grw_json_next(&items, &status)) {
 *         grw_json count;
 *         int64_t n;
 *         if (grw_json_member(status, "restartCount", &count) && grw_json_int(count, &n))
 *             total += n;
 *     }
 */
#ifndef GRW_JSON_H
#define GRW_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One JSON value inside some text (not NUL-terminated). */
typedef struct grw_json {
    const char *at;
    size_t len;
} grw_json;

typedef enum grw_json_kind {
    GRW_JSON_INVALID,
    GRW_JSON_NULL,
    GRW_JSON_BOOL,
    GRW_JSON_NUMBER,
    GRW_JSON_STRING,
    GRW_JSON_ARRAY,
    GRW_JSON_OBJECT,
} grw_json_kind;

/* Where an iteration over an array's items or an object's members stands. */
typedef struct grw_json_items {
    const char *at;
    const char *end;
} grw_json_items;

/* The value that `text` holds, surrounding whitespace left out. A text
 * that is not exactly one JSON value gives a value of kind
 * GRW_JSON_INVALID. */
grw_json grw_json_of(const char *text, size_t len);

/* What kind of value it is; GRW_JSON_INVALID if it is malformed. */
grw_json_kind grw_json_kind_of(grw_json value);

/* The items of an array, for grw_json_next; none if `array` is no array. */
grw_json_items grw_json_items_of(grw_json array);

/* The next item into `*item`; false when there are no more (or the array
 * is malformed from here on). */
bool grw_json_next(grw_json_items *items, grw_json *item);

/* The members of an object, for grw_json_next_member; none if `object` is
 * no object. */
grw_json_items grw_json_members_of(grw_json object);

/* The next member's key (a JSON string, quotes included) and value; false
 * when there are no more. */
bool grw_json_next_member(grw_json_items *members, grw_json *key, grw_json *value);

/* The value of `object`'s member `key` into `*value`; false if `object` is
 * no object or has no such member. Keys are compared as written in the
 * JSON text (escapes are not decoded), which suits Kubernetes' field names. */
bool grw_json_member(grw_json object, const char *key, grw_json *value);

/* `value` as an integer, if it is a JSON number without fraction or
 * exponent that fits an int64_t. */
bool grw_json_int(grw_json value, int64_t *out);

/* `value` as a boolean, if it is `true` or `false`. */
bool grw_json_bool(grw_json value, bool *out);

/* Whether `value` is a JSON string equal to `text` (compared as written,
 * escapes not decoded). */
bool grw_json_string_is(grw_json value, const char *text);

#ifdef __cplusplus
}
#endif

#endif
