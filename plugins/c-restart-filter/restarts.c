#include "restarts.h"

#include <stdio.h>

#include "grw_json.h"

bool restarts_config(const char *config, size_t len, uint64_t *min_restarts, char *error,
                     size_t error_size) {
    *min_restarts = 1;
    grw_json root = grw_json_of(config, len);
    grw_json_kind kind = grw_json_kind_of(root);
    if (kind == GRW_JSON_INVALID) {
        bool blank = root.at == config + len;
        if (blank)
            return true;
        snprintf(error, error_size, "config is not valid JSON");
        return false;
    }
    if (kind != GRW_JSON_OBJECT) {
        snprintf(error, error_size, "config is not valid: expected a JSON object");
        return false;
    }
    grw_json_items members = grw_json_members_of(root);
    grw_json key, value;
    while (grw_json_next_member(&members, &key, &value)) {
        if (!grw_json_string_is(key, "minRestarts")) {
            snprintf(error, error_size,
                     "config is not valid: unknown field `%.*s`, expected `minRestarts`",
                     (int)key.len - 2, key.at + 1);
            return false;
        }
        int64_t n;
        if (!grw_json_int(value, &n) || n < 0) {
            snprintf(error, error_size, "config key `minRestarts`: expected an integer >= 0, not `%.*s`",
                     (int)(value.len > 40 ? 40 : value.len), value.at);
            return false;
        }
        *min_restarts = (uint64_t)n;
    }
    return true;
}

uint64_t restarts_in(const char *statuses, size_t len) {
    grw_json_items items = grw_json_items_of(grw_json_of(statuses, len));
    grw_json status, count;
    uint64_t total = 0;
    int64_t n;
    while (grw_json_next(&items, &status)) {
        if (grw_json_member(status, "restartCount", &count) && grw_json_int(count, &n) && n >= 0)
            total += (uint64_t)n;
    }
    return total;
}
