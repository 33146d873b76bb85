/* Native tests of grw_json: cc -o t test_grw_json.c grw_json.c && ./t */
#include "grw_json.h"
#include "grw_test.h"

#include <string.h>


static grw_json of(const char *text) { return grw_json_of(text, strlen(text)); }

static void kinds(void) {
    CHECK(grw_json_kind_of(of(" null ")) == GRW_JSON_NULL);
    CHECK(grw_json_kind_of(of("true")) == GRW_JSON_BOOL);
    CHECK(grw_json_kind_of(of("-1.5e3")) == GRW_JSON_NUMBER);
    CHECK(grw_json_kind_of(of("\"a\\\"b\"")) == GRW_JSON_STRING);
    CHECK(grw_json_kind_of(of("[1, [2], {}]")) == GRW_JSON_ARRAY);
    CHECK(grw_json_kind_of(of("{\"a\": {\"b\": []}}")) == GRW_JSON_OBJECT);
    /* Malformed, or more than one value: nothing. */
    const char *bad[] = {"", "   ", "[1,", "[1 2]", "{\"a\" 1}", "{\"a\":}", "01", "1.", "-",
                         "tru", "\"open", "\"a\" \"b\"", "[1]]", "{\"a\":1,}", "[,1]", "nul"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (grw_json_kind_of(of(bad[i])) != GRW_JSON_INVALID) {
            fprintf(stderr, "accepted malformed JSON `%s`\n", bad[i]);
            grw_test_failures++;
        }
    }
    /* Deep nesting is refused, not followed. */
    char deep[600];
    memset(deep, '[', 300);
    memset(deep + 300, ']', 300);
    CHECK(grw_json_kind_of(grw_json_of(deep, sizeof deep)) == GRW_JSON_INVALID);
}

static void arrays(void) {
    grw_json item;
    int64_t n, sum = 0;
    grw_json_items items = grw_json_items_of(of("[1, 2 ,\n3, \"x\", [4]]"));
    int count = 0;
    while (grw_json_next(&items, &item)) {
        count++;
        if (grw_json_int(item, &n))
            sum += n;
    }
    CHECK(count == 5);
    CHECK(sum == 6);
    items = grw_json_items_of(of("[]"));
    CHECK(!grw_json_next(&items, &item));
    items = grw_json_items_of(of("{\"a\": 1}"));
    CHECK(!grw_json_next(&items, &item));
}

static void members(void) {
    grw_json object = of("{\"name\": \"web\", \"restartCount\": 3, \"state\": {\"running\": {}},"
                         " \"ready\": true, \"a\\\"b\": 1}");
    grw_json value;
    int64_t n;
    bool b;
    CHECK(grw_json_member(object, "restartCount", &value) && grw_json_int(value, &n) && n == 3);
    CHECK(grw_json_member(object, "name", &value) && grw_json_string_is(value, "web"));
    CHECK(!grw_json_string_is(value, "we"));
    CHECK(grw_json_member(object, "ready", &value) && grw_json_bool(value, &b) && b);
    CHECK(grw_json_member(object, "state", &value) &&
          grw_json_kind_of(value) == GRW_JSON_OBJECT);
    CHECK(grw_json_member(object, "a\\\"b", &value)); /* as written */
    CHECK(!grw_json_member(object, "restart", &value));
    CHECK(!grw_json_member(of("{}"), "a", &value));
    CHECK(!grw_json_member(of("[1]"), "a", &value));

    grw_json_items all = grw_json_members_of(of("{\"a\": 1, \"b\": [2, 3], \"c\": {}}"));
    grw_json key;
    int count = 0;
    while (grw_json_next_member(&all, &key, &value))
        count++;
    CHECK(count == 3);
    CHECK(grw_json_string_is(key, "c") && grw_json_kind_of(value) == GRW_JSON_OBJECT);
}

static void integers(void) {
    int64_t n;
    CHECK(grw_json_int(of("0"), &n) && n == 0);
    CHECK(grw_json_int(of("-42"), &n) && n == -42);
    CHECK(grw_json_int(of("9223372036854775807"), &n) && n == INT64_MAX);
    CHECK(grw_json_int(of("-9223372036854775808"), &n) && n == INT64_MIN);
    CHECK(!grw_json_int(of("9223372036854775808"), &n));
    CHECK(!grw_json_int(of("99999999999999999999999"), &n));
    CHECK(!grw_json_int(of("1.0"), &n));
    CHECK(!grw_json_int(of("1e3"), &n));
    CHECK(!grw_json_int(of("\"1\""), &n));
}

int main(void) {
    kinds();
    arrays();
    members();
    integers();
    return grw_test_done("grw_json");
}
